// This module is browser compatible.
/**
 * Observability of a session: OpenTelemetry spans and metrics, typed
 * structurally to the shapes of `@opentelemetry/api` (so this package does
 * not depend on it), or a plain callback for programs without OpenTelemetry.
 *
 * Spans follow the OpenTelemetry semantic conventions for generative AI where
 * they apply (`gen_ai.*`): the session (`claude.session`), each turn
 * (`invoke_agent claude`, a child of the session), each permission wait
 * (`claude.permission <tool>`), hook callback (`claude.hook <event>`) and
 * in-process MCP tool call (`execute_tool <tool>`, children of their turn),
 * and each control request of ours (`claude.control <subtype>`, a child of
 * the session).
 *
 * @example Deno's built-in OpenTelemetry (`OTEL_DENO=true`)
 * ```ts ignore
 * import * as otel from "npm:@opentelemetry/api@1";
 * import { DuplexSession } from "@duplex/claude";
 * import { subprocess } from "@duplex/claude/subprocess";
 *
 * await using session = await DuplexSession.start({
 *   transport: subprocess(),
 *   telemetry: { api: otel },
 * });
 * ```
 *
 * @module
 */

/**
 * A span attribute value. Arrays are mutable in the type, as `@opentelemetry/api`
 * 1.9 declares them (1.10 accepts readonly ones too), so that either release's
 * tracer can be passed in.
 */
export type AttributeValue = string | number | boolean | string[] | number[];

/** Span attributes. */
export type Attributes = Record<string, AttributeValue | undefined>;

/** The identity of a span (`@opentelemetry/api` `SpanContext`). */
export interface OtelSpanContext {
  /** 32 hex digits. */
  readonly traceId: string;
  /** 16 hex digits. */
  readonly spanId: string;
  /** 1 when sampled. */
  readonly traceFlags: number;
}

/** The part of `@opentelemetry/api`'s `Span` the session uses. */
export interface OtelSpan {
  /** Sets attributes. */
  setAttributes(attributes: Attributes): unknown;
  /** Sets the status: code 1 (ok) or 2 (error), with a message. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Records an exception as a span event. */
  recordException(exception: Error | string): unknown;
  /** Adds an event. */
  addEvent(name: string, attributes?: Attributes): unknown;
  /** Ends the span. */
  end(): void;
  /** The span's identity. */
  spanContext(): OtelSpanContext;
  /** False for a span nobody records (no SDK, or sampled out). */
  isRecording?(): boolean;
}

/** The part of `@opentelemetry/api`'s `Tracer` the session uses. */
export interface OtelTracer {
  /** Starts a span, a child of the span in `context` when one is given. */
  startSpan(
    name: string,
    options?: { attributes?: Attributes; kind?: number },
    context?: unknown,
  ): OtelSpan;
}

/** A monotonic counter (`@opentelemetry/api` `Counter`, or `UpDownCounter`). */
export interface OtelCounter {
  /** Adds to it. */
  add(value: number, attributes?: Attributes): void;
}

/** A histogram (`@opentelemetry/api` `Histogram`). */
export interface OtelHistogram {
  /** Records one value. */
  record(value: number, attributes?: Attributes): void;
}

/** The part of `@opentelemetry/api`'s `Meter` the session uses. */
export interface OtelMeter {
  /** A counter. */
  createCounter(name: string, options?: { description?: string; unit?: string }): OtelCounter;
  /** An up-down counter. */
  createUpDownCounter(
    name: string,
    options?: { description?: string; unit?: string },
  ): OtelCounter;
  /** A histogram. */
  createHistogram(name: string, options?: { description?: string; unit?: string }): OtelHistogram;
}

/**
 * The part of the `@opentelemetry/api` module the session uses: pass the
 * module itself (`import * as otel from "npm:@opentelemetry/api@1"`).
 */
export interface OtelApi {
  /** Tracers and span contexts. */
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpan(context: unknown, span: OtelSpan): unknown;
  };
  /** The active context. */
  readonly context: { active(): unknown };
  /** Meters. */
  readonly metrics?: { getMeter(name: string, version?: string): OtelMeter };
  /** W3C trace context propagation (`traceparent`, `tracestate`). */
  readonly propagation?: {
    inject(context: unknown, carrier: Record<string, string>, setter?: unknown): void;
  };
}

/** A span as the plain callback form sees it, when it ended. */
export interface SpanRecord {
  /** The span's name, for example `invoke_agent claude`. */
  readonly name: string;
  /** A random id of the span (16 hex digits). */
  readonly spanId: string;
  /** The parent's id, or `undefined` for the session span (or a control request without one). */
  readonly parentSpanId: string | undefined;
  /** When it started and ended (`performance.timeOrigin`-based milliseconds). */
  readonly startTime: number;
  /** When it ended. */
  readonly endTime: number;
  /** Its attributes. */
  readonly attributes: Readonly<Attributes>;
  /** `"ok"`, `"error"` (with `message`), or `"unset"`. */
  readonly status: { readonly code: "unset" | "ok" | "error"; readonly message?: string };
  /** Events added to it (an interrupt, an exception). */
  readonly events: readonly { readonly name: string; readonly attributes?: Attributes }[];
}

/**
 * Options of `DuplexSession.start({ telemetry })`. Off when absent (and then
 * it costs nothing per frame or event).
 */
export interface TelemetryOptions {
  /**
   * The `@opentelemetry/api` module: spans nest under the caller's active
   * span, the CLI gets `TRACEPARENT` / `TRACESTATE` for the session span, and
   * its `metrics` give the default meter.
   */
  readonly api?: OtelApi;
  /** The tracer. Default: `api.trace.getTracer("@duplex/claude")`, if `api` is given. */
  readonly tracer?: OtelTracer;
  /** The meter. Default: `api.metrics.getMeter("@duplex/claude")`, if `api` is given. */
  readonly meter?: OtelMeter;
  /** The plain form: called with each span when it ends (parents end after their children). */
  readonly onSpan?: (span: SpanRecord) => void;
}

/** Counters of a session a health endpoint can read without tracing (`session.stats`). */
export interface SessionStats {
  /** Turns that ended, by outcome. */
  readonly turns: { readonly ok: number; readonly error: number; readonly aborted: number };
  /** Errors that ended turns or requests, by `DuplexError` kind (`"other"` for the rest). */
  readonly errors: Readonly<Record<string, number>>;
  /** Events dropped for slow subscribers (the sum of their `lagged` counts). */
  readonly laggedEvents: number;
  /** Permission requests, by how they ended. */
  readonly permissions: {
    readonly allow: number;
    readonly deny: number;
    readonly cancelled: number;
  };
  /** Control requests of ours waiting for an answer now. */
  readonly pendingControlRequests: number;
  /** Lines the CLI wrote on stderr. */
  readonly stderrLines: number;
}
