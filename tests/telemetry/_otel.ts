/**
 * The real OpenTelemetry SDK in memory for the telemetry tests (the
 * session's and the relay's): a tracer and a meter exporting to memory, the
 * spans and metrics they recorded, and a span's parent.
 *
 * @module
 */

import assert from "node:assert/strict";
import * as otel from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type {
  OtelMeter,
  OtelTracer,
  TelemetryOptions,
} from "../../src/telemetry/telemetry_options.ts";

export { otel };
export type { ReadableSpan };

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A tracer and a meter of the real SDK, exporting to memory. */
export class Otel {
  readonly #spans = new InMemorySpanExporter();
  readonly #tracers = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.#spans)],
  });
  readonly #metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  readonly #reader = new PeriodicExportingMetricReader({
    exporter: this.#metrics,
    exportIntervalMillis: 60_000,
  });
  readonly #meters = new MeterProvider({ readers: [this.#reader] });

  /** The tracer. */
  readonly tracer: OtelTracer = this.#tracers.getTracer("test");
  /** The meter. */
  readonly meter: OtelMeter = this.#meters.getMeter("test");
  /** The `telemetry` option: the API module, with this tracer and meter. */
  readonly telemetry: TelemetryOptions = { api: otel, tracer: this.tracer, meter: this.meter };

  /** The spans that ended, in the order they ended. */
  spans(): ReadableSpan[] {
    return this.#spans.getFinishedSpans();
  }

  /** The ended spans of a name. */
  named(name: string): ReadableSpan[] {
    return this.spans().filter((span) => span.name === name);
  }

  /** Waits (5 s at most) until `count` spans of a name have ended, and returns them. */
  async ended(name: string, count = 1): Promise<ReadableSpan[]> {
    const deadline = Date.now() + 5000;
    while (this.named(name).length < count && Date.now() < deadline) await delay(10);
    const spans = this.named(name);
    if (spans.length < count) {
      throw new Error(
        `Timed out waiting for ${count} ${name} span(s); ended: ${
          this.spans().map((span) => span.name).join(", ")
        }`,
      );
    }
    return spans;
  }

  /** The metrics now, by name (a cumulative export). */
  async metrics(): Promise<Map<string, MetricData>> {
    this.#metrics.reset();
    await this.#reader.forceFlush();
    const last = this.#metrics.getMetrics().at(-1);
    const all = last?.scopeMetrics.flatMap((scope) => scope.metrics) ?? [];
    return new Map(all.map((metric) => [metric.descriptor.name, metric]));
  }

  /** A counter's value for the data point whose attribute `key` is `value` (or the only one). */
  async counter(name: string, key?: string, value?: string): Promise<number> {
    const points = (await this.metrics()).get(name)?.dataPoints ?? [];
    const point = key === undefined ? points[0] : points.find((p) => p.attributes[key] === value);
    return (point?.value as number | undefined) ?? 0;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#tracers.shutdown();
    await this.#meters.shutdown();
  }
}

/** The span id of a span's parent, if it has one. */
export function parentOf(span: ReadableSpan | undefined): string | undefined {
  return span?.parentSpanContext?.spanId;
}

/**
 * Asserts that both spans ended and that `child`'s parent is `parent` (two
 * missing spans would otherwise compare equal, as `undefined`).
 *
 * @param child The span that must be the child.
 * @param parent Its parent.
 * @param message What the relation means, for the failure.
 * @throws {assert.AssertionError} When a span is missing or the parent is another.
 */
export function assertChildOf(
  child: ReadableSpan | undefined,
  parent: ReadableSpan | undefined,
  message?: string,
): void {
  assert.ok(child && parent, `both spans ended (child ${child?.name}, parent ${parent?.name})`);
  assert.equal(parentOf(child), parent.spanContext().spanId, message);
}
