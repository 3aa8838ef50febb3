// This module is browser compatible.
/*
 * The session's telemetry: spans over an OpenTelemetry tracer and/or the
 * plain callback, and metrics over a meter. `TELEMETRY_OFF` is a no-op whose
 * spans are one shared object: callers check `telemetry.tracing` (spans) or
 * `telemetry.on` (metrics) before they build attributes, so a session without
 * telemetry allocates nothing for it per frame or per turn.
 */

import { messageOf } from "../_values.ts";
import { parseTraceparent, type TraceContext, type TraceParent } from "./_trace_context.ts";
import type {
  Attributes,
  OtelApi,
  OtelCounter,
  OtelHistogram,
  OtelMeter,
  OtelSpan,
  OtelTracer,
  SpanRecord,
  TelemetryOptions,
} from "./telemetry_options.ts";

/** The instrumentation scope's name. */
const SCOPE = "@duplex/claude";

const STATUS_OK = 1;
const STATUS_ERROR = 2;

export type { TraceContext };

/** How a span started by {@linkcode Telemetry.spanFrom} begins. */
export interface SpanStart {
  /** The parent in another process (checked with `parseTraceContext`). */
  readonly remote?: TraceContext | undefined;
  /** When it began, if before now: `performance.timeOrigin + performance.now()` milliseconds. */
  readonly startTime?: number | undefined;
  /** The OpenTelemetry span kind (0 internal, 1 server, 2 client, 3 producer, 4 consumer). */
  readonly kind?: number | undefined;
}

/** The parts of `@opentelemetry/api` a remote parent needs (not in `OtelApi`: optional there). */
interface RemoteParentApi {
  readonly propagation?: { extract?(context: unknown, carrier: Record<string, string>): unknown };
  readonly trace: {
    getSpanContext?(context: unknown): { traceId: string } | undefined;
    setSpanContext?(context: unknown, spanContext: TraceParent & { isRemote: boolean }): unknown;
  };
  readonly createTraceState?: (text: string) => unknown;
}

/**
 * The context whose span is a remote parent: the API's propagator's reading
 * of the carrier, else (no propagator registered) the parsed `traceparent`.
 */
function remoteContext(api: OtelApi, remote: TraceContext): unknown {
  const active = api.context.active();
  const parts = api as unknown as RemoteParentApi;
  const carrier: Record<string, string> = { traceparent: remote.traceparent };
  if (remote.tracestate !== undefined) carrier.tracestate = remote.tracestate;
  const extracted = parts.propagation?.extract?.(active, carrier);
  if (extracted !== undefined && parts.trace.getSpanContext?.(extracted) !== undefined) {
    return extracted;
  }
  const parent = parseTraceparent(remote.traceparent);
  if (parent === undefined || parts.trace.setSpanContext === undefined) return active;
  const traceState = remote.tracestate === undefined
    ? undefined
    : parts.createTraceState?.(remote.tracestate);
  return parts.trace.setSpanContext(active, {
    ...parent,
    isRemote: true,
    ...(traceState !== undefined && { traceState }),
  });
}

/** One span, whichever backs it. */
export interface SpanHandle {
  /** Sets attributes (an `undefined` value is skipped). */
  set(attributes: Attributes): void;
  /** Adds an event. */
  event(name: string, attributes?: Attributes): void;
  /** Marks the span failed, with the error's message, and records it. */
  fail(error: unknown): void;
  /** Marks the span succeeded. */
  ok(): void;
  /** Ends the span (once; later calls do nothing). */
  end(): void;
  /** The span's W3C trace context. */
  traceContext(): TraceContext | undefined;
}

/** A span that records nothing (what every span is when nothing records). */
export const NO_SPAN: SpanHandle = Object.freeze({
  set() {},
  event() {},
  fail() {},
  ok() {},
  end() {},
  traceContext: () => undefined,
});

/** Counters and histograms the session records. */
export type CounterName =
  | "claude.turns"
  | "claude.errors"
  | "claude.events.lagged"
  | "claude.permission.requests"
  | "claude.control.pending"
  | "claude.stderr.lines"
  | "claude.sessions"
  | "claude.relay.connections"
  | "claude.relay.sessions"
  | "claude.relay.resumes"
  | "claude.relay.refusals"
  | "claude.relay.flow_stalls"
  | "claude.relay.hibernations"
  | "claude.relay.wakes"
  | "claude.relay.fenced"
  | "claude.relay.claims.dropped";
export type HistogramName =
  | "gen_ai.client.operation.duration"
  | "gen_ai.client.token.usage"
  | "claude.relay.stall.duration";

const UP_DOWN: ReadonlySet<CounterName> = new Set([
  "claude.control.pending",
  "claude.relay.sessions",
]);
const UNITS: Readonly<Record<HistogramName, string>> = {
  "gen_ai.client.operation.duration": "s",
  "gen_ai.client.token.usage": "{token}",
  "claude.relay.stall.duration": "s",
};

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buffer, (b) => b.toString(16).padStart(2, "0")).join("");
}

function clean(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

class Span implements SpanHandle {
  readonly otel: OtelSpan | undefined;
  readonly #telemetry: Telemetry;
  readonly #record: {
    name: string;
    spanId: string;
    traceId: string;
    parentSpanId: string | undefined;
    startTime: number;
    attributes: Attributes;
    status: SpanRecord["status"];
    events: { name: string; attributes?: Attributes }[];
  } | undefined;
  #ended = false;

  constructor(
    telemetry: Telemetry,
    name: string,
    attributes: Attributes,
    parent: Span | undefined,
    start?: SpanStart,
  ) {
    this.#telemetry = telemetry;
    const { tracer, api, onSpan } = telemetry;
    const remote = start?.remote;
    if (tracer) {
      const context = parent?.otel && api
        ? api.trace.setSpan(api.context.active(), parent.otel)
        : remote && api
        ? remoteContext(api, remote)
        : api?.context.active();
      const options: { attributes: Attributes; kind?: number; startTime?: number } = {
        attributes: clean(attributes),
      };
      if (start?.kind !== undefined) options.kind = start.kind;
      if (start?.startTime !== undefined) options.startTime = start.startTime;
      this.otel = tracer.startSpan(name, options, context);
    }
    if (onSpan) {
      const above = parent === undefined ? undefined : parent.#record;
      const far = remote === undefined ? undefined : parseTraceparent(remote.traceparent);
      this.#record = {
        name,
        spanId: randomHex(8),
        traceId: above?.traceId ?? far?.traceId ?? randomHex(16),
        parentSpanId: above?.spanId ?? far?.spanId,
        startTime: start?.startTime ?? performance.timeOrigin + performance.now(),
        attributes: clean(attributes),
        status: { code: "unset" },
        events: [],
      };
    }
  }

  set(attributes: Attributes): void {
    const values = clean(attributes);
    this.otel?.setAttributes(values);
    if (this.#record) Object.assign(this.#record.attributes, values);
  }

  event(name: string, attributes?: Attributes): void {
    this.otel?.addEvent(name, attributes ? clean(attributes) : undefined);
    this.#record?.events.push(attributes ? { name, attributes: clean(attributes) } : { name });
  }

  fail(error: unknown): void {
    const message = messageOf(error);
    this.otel?.recordException(error instanceof Error ? error : message);
    this.otel?.setStatus({ code: STATUS_ERROR, message });
    if (this.#record) {
      this.#record.events.push({ name: "exception", attributes: { "exception.message": message } });
      this.#record.status = { code: "error", message };
    }
  }

  ok(): void {
    this.otel?.setStatus({ code: STATUS_OK });
    if (this.#record) this.#record.status = { code: "ok" };
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.otel?.end();
    const record = this.#record;
    if (record) {
      const { traceId: _traceId, ...rest } = record;
      this.#telemetry.onSpan?.({ ...rest, endTime: performance.timeOrigin + performance.now() });
    }
  }

  traceContext(): TraceContext | undefined {
    const { api } = this.#telemetry;
    if (this.otel && api?.propagation) {
      const carrier: Record<string, string> = {};
      api.propagation.inject(api.trace.setSpan(api.context.active(), this.otel), carrier);
      if (carrier.traceparent) {
        return carrier.tracestate
          ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
          : { traceparent: carrier.traceparent };
      }
    }
    if (this.otel) {
      const { traceId, spanId, traceFlags } = this.otel.spanContext();
      if (/^0*$/.test(traceId)) return undefined; // an invalid context: nothing to join
      return {
        traceparent: `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`,
      };
    }
    if (this.#record) {
      return { traceparent: `00-${this.#record.traceId}-${this.#record.spanId}-01` };
    }
    return undefined;
  }
}

/** Spans and metrics of one session (or one relay). */
export class Telemetry {
  /** True when anything records: check it before building attributes. */
  readonly on: boolean;
  readonly api: OtelApi | undefined;
  readonly tracer: OtelTracer | undefined;
  readonly onSpan: ((span: SpanRecord) => void) | undefined;
  readonly #meter: OtelMeter | undefined;
  readonly #counters = new Map<CounterName, OtelCounter>();
  readonly #histograms = new Map<HistogramName, OtelHistogram>();
  #tracing: boolean;

  /**
   * @param options The caller's telemetry option, or undefined for none.
   * @param version The package version, for the instrumentation scope.
   */
  constructor(options: TelemetryOptions | undefined, version?: string) {
    this.api = options?.api;
    this.tracer = options?.tracer ?? options?.api?.trace.getTracer(SCOPE, version);
    this.#meter = options?.meter ?? options?.api?.metrics?.getMeter(SCOPE, version);
    this.onSpan = options?.onSpan;
    this.#tracing = this.tracer !== undefined || this.onSpan !== undefined;
    this.on = this.#tracing || this.#meter !== undefined;
  }

  /** True when spans are recorded (a tracer or the callback). */
  get tracing(): boolean {
    return this.#tracing;
  }

  /**
   * Starts the root span of what this telemetry observes (a session). When
   * the tracer does not record it (no SDK registered, or sampled out) and no
   * callback is set, tracing stops here: its children would not be recorded
   * either (parent-based sampling), so they are never started, and the rest
   * costs nothing.
   */
  root(name: string, attributes: Attributes = {}): SpanHandle {
    const span = this.span(name, attributes);
    const otel = span instanceof Span ? span.otel : undefined;
    if (otel?.isRecording?.() === false && this.onSpan === undefined) this.#tracing = false;
    return span;
  }

  /** Starts a span, a child of `parent` (or of the caller's active span). */
  span(name: string, attributes: Attributes = {}, parent?: SpanHandle): SpanHandle {
    if (!this.tracing) return NO_SPAN;
    return new Span(this, name, attributes, parent instanceof Span ? parent : undefined);
  }

  /**
   * Starts a span whose parent is in another process (a relay client's
   * session span), or a root span when `start.remote` is undefined; it may
   * begin earlier than now. Without `api`, an OpenTelemetry tracer cannot
   * be given a remote parent: its span is a root (the callback form still
   * links it by the parent's span id).
   */
  spanFrom(name: string, attributes: Attributes, start: SpanStart): SpanHandle {
    if (!this.tracing) return NO_SPAN;
    return new Span(this, name, attributes, undefined, start);
  }

  /** Adds to a counter. */
  count(name: CounterName, value = 1, attributes?: Attributes): void {
    const meter = this.#meter;
    if (!meter) return;
    let counter = this.#counters.get(name);
    if (!counter) {
      counter = UP_DOWN.has(name) ? meter.createUpDownCounter(name) : meter.createCounter(name);
      this.#counters.set(name, counter);
    }
    counter.add(value, attributes);
  }

  /** Records a value in a histogram. */
  record(name: HistogramName, value: number, attributes?: Attributes): void {
    const meter = this.#meter;
    if (!meter) return;
    let histogram = this.#histograms.get(name);
    if (!histogram) {
      histogram = meter.createHistogram(name, { unit: UNITS[name] });
      this.#histograms.set(name, histogram);
    }
    histogram.record(value, attributes);
  }
}

/** Telemetry that records nothing. */
export const TELEMETRY_OFF: Telemetry = new Telemetry(undefined);
