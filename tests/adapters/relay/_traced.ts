/**
 * The relay's telemetry under test: the real OpenTelemetry SDK in memory
 * (spans and metrics), and a relay that records what it passed to each CLI
 * launch (the transport factory's context) before the subprocess adapter
 * runs it.
 */

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
import { Relay } from "../../../adapters/relay/_relay.ts";
import { checkOptions } from "../../../adapters/relay/_relay_config.ts";
import type { RelayOptions, RelayServer } from "../../../adapters/relay/mod.ts";
import { subprocess } from "../../../adapters/subprocess/mod.ts";
import type { TelemetryOptions } from "../../../src/telemetry/telemetry_options.ts";
import type { TransportOpenContext } from "../../../src/transport/transport.ts";
import { countedCli, makeTestDir, TOKEN } from "./_client.ts";

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

  /** The `telemetry` option: the API module, with this tracer and meter. */
  readonly telemetry: TelemetryOptions = {
    api: otel,
    tracer: this.#tracers.getTracer("test"),
    meter: this.#meters.getMeter("test"),
  };

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

/** The trace context one stand-in CLI found in its environment. */
export interface SeenEnv {
  readonly pid: number;
  readonly TRACEPARENT: string | null;
  readonly TRACESTATE: string | null;
}

/** A relay whose CLI launches are recorded. */
export interface TracedRelay {
  readonly relay: RelayServer;
  /** What the relay passed to each CLI's transport factory, in order. */
  readonly launches: TransportOpenContext[];
  /** The trace context each stand-in CLI found in its environment, in start order. */
  seenEnv(): Promise<SeenEnv[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A relay on a fresh workspace running the counted stand-in CLI (its pid
 * exposed), whose launches go through `subprocess()` as always and are
 * recorded first.
 */
export async function tracedRelay(
  options: Partial<RelayOptions> = {},
  env: Record<string, string> = {},
): Promise<TracedRelay> {
  const workspace = await makeTestDir();
  const envLog = `${workspace}.env`;
  const launches: TransportOpenContext[] = [];
  const config = checkOptions({
    tokens: [TOKEN],
    workspace,
    cli: countedCli(`${workspace}.spawns`, { ...env, RELAY_ENV_LOG: envLog }),
    ...options,
    policy: { exposePid: true, ...options.policy },
  });
  const relay = new Relay(config, (cli) => {
    const open = subprocess(cli);
    return (context) => {
      launches.push(context);
      return open(context);
    };
  });
  return {
    relay,
    launches,
    async seenEnv() {
      const text = await Deno.readTextFile(envLog).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
    },
    async [Symbol.asyncDispose]() {
      await relay.close();
      for (const file of [envLog, `${workspace}.spawns`]) await Deno.remove(file).catch(() => {});
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

/** The span id of a span's parent, if it has one. */
export function parentOf(span: ReadableSpan | undefined): string | undefined {
  return span?.parentSpanContext?.spanId;
}

/** Every attribute value of every span and event, as one text (to look for secrets in). */
export function everything(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((span) => ({
    name: span.name,
    attributes: span.attributes,
    status: span.status,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
  })));
}
