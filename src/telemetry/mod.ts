// This module is browser compatible.
/**
 * The types of a session's and a relay's telemetry: the `telemetry` option
 * ({@linkcode TelemetryOptions}), the span the plain callback gets
 * ({@linkcode SpanRecord}), the counters of `session.stats`
 * ({@linkcode SessionStats}), and the structural shapes of
 * `@opentelemetry/api` the library uses ({@linkcode OtelApi},
 * {@linkcode OtelTracer}, {@linkcode OtelSpan}, {@linkcode OtelMeter}, …),
 * so that this package does not depend on it: pass the module itself
 * (`telemetry: { api: otel }`), or a tracer and a meter of your own.
 *
 * Types only: nothing here runs. The spans and metrics themselves are
 * described in `docs/telemetry.md`.
 *
 * @example The plain callback: the spans of one turn
 * ```ts
 * import { DuplexSession } from "@duplex/claude";
 * import type { SpanRecord } from "@duplex/claude/telemetry";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const spans: SpanRecord[] = [];
 * {
 *   await using session = await DuplexSession.start({
 *     transport: new ScriptedCli({ echo: true }).transport,
 *     telemetry: { onSpan: (span) => spans.push(span) },
 *   });
 *   await session.send("Say hi.");
 * }
 * assert.deepEqual(spans.map((span) => span.name), ["invoke_agent claude", "claude.session"]);
 * assert.equal(spans[0]?.parentSpanId, spans[1]?.spanId);
 * ```
 *
 * @module
 */

export type {
  Attributes,
  AttributeValue,
  OtelApi,
  OtelCounter,
  OtelHistogram,
  OtelMeter,
  OtelSpan,
  OtelSpanContext,
  OtelTracer,
  SessionStats,
  SpanRecord,
  TelemetryOptions,
} from "./telemetry_options.ts";
