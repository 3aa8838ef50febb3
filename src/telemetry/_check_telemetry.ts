// This module is browser compatible.
/* The one check of a `telemetry` option, for the session and the relay alike. */

import { isRecord } from "../_values.ts";
import type { TelemetryOptions } from "./telemetry_options.ts";

/** What each telemetry option must offer, and the words that say so. */
const SHAPES: readonly [string, (value: Record<string, unknown>) => boolean, string][] = [
  [
    "api",
    (api) =>
      isRecord(api.trace) && typeof api.trace.getTracer === "function" &&
      typeof api.trace.setSpan === "function" && isRecord(api.context) &&
      typeof api.context.active === "function",
    'the @opentelemetry/api module (import * as otel from "npm:@opentelemetry/api")',
  ],
  ["tracer", (tracer) => typeof tracer.startSpan === "function", "a Tracer (with startSpan)"],
  ["meter", (meter) => typeof meter.createCounter === "function", "a Meter (with createCounter)"],
];

/**
 * Checks a `telemetry` option.
 *
 * @param telemetry The value given.
 * @param what Where it was given: `Cannot start a session`.
 * @returns The option, or undefined.
 * @throws {TypeError} Naming the field that does not fit.
 */
export function checkTelemetry(telemetry: unknown, what: string): TelemetryOptions | undefined {
  if (telemetry === undefined) return undefined;
  if (!isRecord(telemetry)) throw new TypeError(`${what}: telemetry must be an object`);
  for (const [name, fits, shape] of SHAPES) {
    const value = telemetry[name];
    if (value !== undefined && !(isRecord(value) && fits(value))) {
      throw new TypeError(`${what}: telemetry.${name} must be ${shape}`);
    }
  }
  if (telemetry.onSpan !== undefined && typeof telemetry.onSpan !== "function") {
    throw new TypeError(`${what}: telemetry.onSpan must be a function`);
  }
  return telemetry as TelemetryOptions; // every field it has was checked above
}
