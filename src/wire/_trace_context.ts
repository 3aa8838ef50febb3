// This module is browser compatible.
// moved to src/telemetry/_trace_context.ts; re-exported until the imports are updated
export * from "../telemetry/_trace_context.ts";
