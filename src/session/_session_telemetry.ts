// This module is browser compatible.
/*
 * The session's telemetry, all of it: every span, metric and attribute a
 * session emits is written here, and the session's parts call one named
 * function per event (`turnStarted`, `permissionEnded`, …). It is the one
 * place to audit against the OpenTelemetry GenAI semantic conventions (the
 * relay's own is `adapters/relay/_relay_telemetry.ts`).
 *
 * With telemetry off, every function costs a field test (and the plain
 * counters behind `session.stats`, which are always kept); nothing is
 * allocated for it per frame or per turn.
 *
 * Spans (parents in brackets):
 * - `claude.session` (root, or the caller's active span): from the start to
 *   the end. `gen_ai.provider.name` = anthropic; the transport's
 *   `claude.transport`, `claude.transport.description`, `process.pid`; from
 *   `system/init`: `gen_ai.conversation.id`, `gen_ai.request.model`,
 *   `claude.cli.version`; at the end `process.exit.code`,
 *   `claude.exit.signal`, status error with the failure, else ok.
 * - `invoke_agent claude` [session]: one turn. `gen_ai.operation.name` =
 *   invoke_agent, `gen_ai.provider.name`, `gen_ai.agent.name` = claude,
 *   `claude.turn.uuid`, `claude.turn.queued`; at the result
 *   `gen_ai.response.model`, `gen_ai.conversation.id`,
 *   `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
 *   `gen_ai.usage.cache_read.input_tokens`,
 *   `gen_ai.usage.cache_creation.input_tokens`, `claude.turn.cost_usd`,
 *   `claude.turn.num_turns`, `claude.turn.duration_ms`,
 *   `claude.turn.duration_api_ms`, `claude.turn.is_error`,
 *   `claude.turn.subtype`, `claude.turn.terminal_reason`; event `interrupt`
 *   (`claude.interrupt.reason`) when aborted.
 * - `claude.permission <tool>` [running turn, else session]: a permission
 *   wait. `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 *   `claude.permission.request_id`; at the end `claude.permission.decision`,
 *   `claude.permission.source`, `claude.permission.deferred`; event
 *   `deferred`.
 * - `claude.hook <event>` [running turn, else session]: a hook callback.
 *   `claude.hook.event`, `claude.hook.callback_id`.
 * - `execute_tool <tool>` [running turn, else session]: an in-process MCP
 *   `tools/call`. `gen_ai.operation.name` = execute_tool, `gen_ai.tool.name`,
 *   `gen_ai.tool.type` = extension, `claude.mcp.server`; status error when
 *   the tool returned an error.
 * - `claude.control <subtype>` [session]: a control request of ours.
 *   `claude.control.subtype`, `claude.control.request_id`; `error.type` when
 *   it failed.
 *
 * Metrics:
 * - `claude.sessions` (counter): sessions started.
 * - `claude.turns` (counter, `claude.turn.outcome` ok / error / aborted).
 * - `claude.errors` (counter, `error.type`: the DuplexError kind, or other).
 * - `claude.permission.requests` (counter, `claude.permission.decision`
 *   allow / deny / cancelled).
 * - `claude.events.lagged`, `claude.stderr.lines` (counters).
 * - `claude.control.pending` (up-down counter): our requests in flight.
 * - `gen_ai.client.operation.duration` (histogram, s) per turn:
 *   `gen_ai.operation.name`, `gen_ai.provider.name`,
 *   `gen_ai.response.model`, `error.type` when the turn did not succeed.
 * - `gen_ai.client.token.usage` (histogram, {token}) per result:
 *   `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.token.type`
 *   input / output.
 */

import type { TransportExit } from "../errors.ts";
import { isRecord, messageOf } from "../_values.ts";
import type { CanUseToolRequest } from "../protocol/control.ts";
import type { SystemInitFrame } from "../protocol/messages.ts";
import {
  NO_SPAN,
  type SpanHandle,
  Telemetry,
  TELEMETRY_OFF,
  type TraceContext,
} from "../telemetry/_telemetry.ts";
import type { Attributes, SessionStats, TelemetryOptions } from "../telemetry/telemetry_options.ts";
import type { TransportInfo } from "../transport/transport.ts";
import { VERSION } from "../version.ts";
import type { ExitStatus, PermissionResolvedEvent } from "./events.ts";
import { type PermissionOutcome, Stats, type TurnOutcome } from "./_stats.ts";
import type { Turn } from "./turn.ts";

/** A settled turn's result, its error, or why it was aborted. */
export type Outcome = { turn: Turn } | { error: unknown } | { aborted: unknown };

/** What a turn's telemetry keeps from its start to its end. */
export interface TurnTrace {
  /** The turn's span (`NO_SPAN` without tracing). */
  readonly span: SpanHandle;
  /** When `send` wrote it (`performance.now()`; 0 without telemetry). */
  readonly startedAt: number;
}

/** An inbound request's handler (hooks, in-process tools). */
type Handler = (signal: AbortSignal) => Promise<Record<string, unknown>>;

/** The turns, for the parent of the spans made while one runs. */
interface RunningTurns {
  /** The span of the turn running now (`NO_SPAN` when none runs). */
  readonly runningSpan: SpanHandle;
}

/* The trace of every turn when nothing records: one shared object. */
const UNTRACED: TurnTrace = Object.freeze({ span: NO_SPAN, startedAt: 0 });

const ANTHROPIC = { "gen_ai.provider.name": "anthropic" } as const;
const INVOKE_AGENT = { "gen_ai.operation.name": "invoke_agent", ...ANTHROPIC } as const;

/** The spans, metrics and counters of one session. */
export class SessionTelemetry {
  readonly #telemetry: Telemetry;
  readonly #session: SpanHandle;
  readonly #stats = new Stats();
  /** Spans are recorded (fixed once the session span started). */
  readonly #tracing: boolean;
  /** Anything records: spans or metrics. */
  readonly #on: boolean;
  #turns: RunningTurns | undefined;

  /**
   * Starts a session's telemetry: its span (`claude.session`) and the
   * `claude.sessions` count.
   *
   * @param options The session's `telemetry` option (none: everything off).
   * @returns The session's telemetry.
   */
  static open(options: TelemetryOptions | undefined): SessionTelemetry {
    const telemetry = options ? new Telemetry(options, VERSION) : TELEMETRY_OFF;
    const span = telemetry.root("claude.session", { ...ANTHROPIC });
    telemetry.count("claude.sessions");
    return new SessionTelemetry(telemetry, span);
  }

  /**
   * @param telemetry Where spans and metrics go (none by default, as for parts tested alone).
   * @param session The session's span.
   */
  constructor(telemetry: Telemetry = TELEMETRY_OFF, session: SpanHandle = NO_SPAN) {
    this.#telemetry = telemetry;
    this.#session = session;
    this.#tracing = telemetry.tracing;
    this.#on = telemetry.on;
  }

  /** The session span's trace context, for the transport's child process. */
  traceContext(): TraceContext | undefined {
    return this.#session.traceContext();
  }

  /** Parents the spans made while a turn runs (permissions, hooks, tools) under that turn. */
  follow(turns: RunningTurns): void {
    this.#turns = turns;
  }

  /** The counters behind `session.stats`, with the pending control requests counted now. */
  snapshot(pendingControlRequests: number): SessionStats {
    return this.#stats.snapshot(pendingControlRequests);
  }

  /** The session could not start: its span fails and ends. */
  startFailed(error: unknown): void {
    this.#session.fail(error);
    this.#session.end();
  }

  /** The transport opened: what it is, on the session span. */
  transportOpened(info: TransportInfo): void {
    if (!this.#tracing) return;
    this.#session.set({
      "claude.transport": info.kind,
      "claude.transport.description": info.description,
      "process.pid": info.pid,
    });
  }

  /** A `system/init` frame: the conversation, model and CLI version, on the session span. */
  identified(frame: SystemInitFrame): void {
    if (!this.#tracing) return;
    this.#session.set({
      "gen_ai.conversation.id": frame.session_id,
      "gen_ai.request.model": typeof frame.model === "string" ? frame.model : undefined,
      "claude.cli.version": typeof frame.claude_code_version === "string"
        ? frame.claude_code_version
        : undefined,
    });
  }

  /** The session ended: how, on its span, which ends. */
  sessionEnded(exit: TransportExit, status: ExitStatus): void {
    const span = this.#session;
    span.set({
      "process.exit.code": exit.code ?? undefined,
      "claude.exit.signal": exit.signal ?? undefined,
    });
    if (status.state === "failed") span.fail(status.error);
    else span.ok();
    span.end();
  }

  /** A control request of ours went out: its span, and `claude.control.pending`. */
  controlStarted(subtype: string, requestId: string): SpanHandle {
    if (!this.#on) return NO_SPAN;
    this.#telemetry.count("claude.control.pending", 1);
    if (!this.#tracing) return NO_SPAN;
    return this.#telemetry.span(`claude.control ${subtype}`, {
      "claude.control.subtype": subtype,
      "claude.control.request_id": requestId,
    }, this.#session);
  }

  /** A control request of ours was answered. */
  controlAnswered(span: SpanHandle): void {
    if (!this.#on) return;
    this.#telemetry.count("claude.control.pending", -1);
    span.ok();
    span.end();
  }

  /** A control request of ours failed (an error answer, a timeout, an abort, the end). */
  controlFailed(span: SpanHandle, error: unknown): void {
    const kind = this.#error(error);
    if (!this.#on) return;
    this.#telemetry.count("claude.control.pending", -1);
    if (!this.#tracing) return;
    span.set({ "error.type": kind });
    span.fail(error);
    span.end();
  }

  /** A turn's line is about to be written: its span (and its start, for the duration). */
  turnStarted(uuid: string, queued: boolean): TurnTrace {
    if (!this.#on) return UNTRACED;
    const span = this.#tracing
      ? this.#telemetry.span("invoke_agent claude", {
        ...INVOKE_AGENT,
        "gen_ai.agent.name": "claude",
        "claude.turn.uuid": uuid,
        "claude.turn.queued": queued,
      }, this.#session)
      : NO_SPAN;
    return { span, startedAt: performance.now() };
  }

  /** A turn was aborted: an `interrupt` event on its span. */
  turnInterrupted(trace: TurnTrace, reason: unknown): void {
    if (!this.#tracing) return;
    trace.span.event("interrupt", { "claude.interrupt.reason": messageOf(reason) });
  }

  /**
   * A turn settled: its outcome to the counters (and their metrics), its
   * attributes and status to its span (which ends), and the turn histograms.
   */
  turnEnded(trace: TurnTrace, outcome: Outcome): void {
    const result = "turn" in outcome ? outcome.turn.result : undefined;
    const state: TurnOutcome = "aborted" in outcome
      ? "aborted"
      : result && !result.isError
      ? "ok"
      : "error";
    this.#stats.turn(state);
    if (this.#on) {
      this.#telemetry.count("claude.turns", 1, { "claude.turn.outcome": state });
    }
    const kind = "aborted" in outcome
      ? this.#error(outcome.aborted)
      : "error" in outcome
      ? this.#error(outcome.error)
      : undefined;
    if (!this.#on) return;
    const model = result ? Object.keys(result.models)[0] : undefined;
    if (this.#tracing) endTurnSpan(trace.span, outcome, model);
    const telemetry = this.#telemetry;
    telemetry.record(
      "gen_ai.client.operation.duration",
      (performance.now() - trace.startedAt) / 1000,
      {
        ...INVOKE_AGENT,
        ...(model ? { "gen_ai.response.model": model } : {}),
        ...(state === "ok" ? {} : { "error.type": kind ?? state }),
      },
    );
    if (result) {
      telemetry.record("gen_ai.client.token.usage", result.tokens.input, {
        ...INVOKE_AGENT,
        "gen_ai.token.type": "input",
      });
      telemetry.record("gen_ai.client.token.usage", result.tokens.output, {
        ...INVOKE_AGENT,
        "gen_ai.token.type": "output",
      });
    }
  }

  /** A permission request arrived: the span of its wait. */
  permissionStarted(requestId: string, body: CanUseToolRequest): SpanHandle {
    if (!this.#tracing) return NO_SPAN;
    return this.#telemetry.span(`claude.permission ${body.tool_name}`, {
      "gen_ai.tool.name": body.tool_name,
      "gen_ai.tool.call.id": typeof body.tool_use_id === "string" ? body.tool_use_id : undefined,
      "claude.permission.request_id": requestId,
    }, this.#parent());
  }

  /** The handler deferred a permission request. */
  permissionDeferred(span: SpanHandle): void {
    if (this.#tracing) span.event("deferred");
  }

  /** A permission wait ended: how, to the counters and its span (which ends). */
  permissionEnded(
    span: SpanHandle,
    decision: PermissionOutcome,
    source: PermissionResolvedEvent["source"],
    deferred: boolean,
  ): void {
    this.#stats.permission(decision);
    if (!this.#on) return;
    this.#telemetry.count("claude.permission.requests", 1, {
      "claude.permission.decision": decision,
    });
    if (!this.#tracing) return;
    span.set({
      "claude.permission.decision": decision,
      "claude.permission.source": source,
      "claude.permission.deferred": deferred,
    });
    span.ok();
    span.end();
  }

  /**
   * A hook callback: its handler, served inside a `claude.hook` span (the
   * handler itself when not tracing).
   */
  traceHook(input: unknown, callbackId: string, handler: Handler): Handler {
    if (!this.#tracing) return handler;
    const event = isRecord(input) && typeof input.hook_event_name === "string"
      ? input.hook_event_name
      : "unknown";
    return this.#traced(`claude.hook ${event}`, {
      "claude.hook.event": event,
      "claude.hook.callback_id": callbackId,
    }, handler);
  }

  /**
   * An `mcp_message` to an in-process server: its handler, served inside an
   * `execute_tool` span when it is a `tools/call` (the handler itself when
   * not, or when not tracing).
   */
  traceTool(server: string, message: unknown, handler: Handler): Handler {
    if (!this.#tracing) return handler;
    const rpc = isRecord(message) ? message : {};
    if (rpc.method !== "tools/call") return handler;
    const params = isRecord(rpc.params) ? rpc.params : {};
    const tool = typeof params.name === "string" ? params.name : "unknown";
    return this.#traced(`execute_tool ${tool}`, {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": tool,
      "gen_ai.tool.type": "extension",
      "claude.mcp.server": server,
    }, handler);
  }

  /** An event was dropped for a slow subscriber. */
  lagged(): void {
    this.#stats.lagged();
    if (this.#on) this.#telemetry.count("claude.events.lagged");
  }

  /** The CLI wrote a line on stderr. */
  stderrLine(): void {
    this.#stats.stderrLine();
    if (this.#on) this.#telemetry.count("claude.stderr.lines");
  }

  /* Counts an error by its kind (`claude.errors`); returns the kind. */
  #error(error: unknown): string {
    const kind = this.#stats.error(error);
    if (this.#on) this.#telemetry.count("claude.errors", 1, { "error.type": kind });
    return kind;
  }

  /* The parent of a span made now: the running turn's, else the session's. */
  #parent(): SpanHandle {
    const span = this.#turns?.runningSpan ?? NO_SPAN;
    return span === NO_SPAN ? this.#session : span;
  }

  /* A handler served inside a span, a child of the running turn, started now. */
  #traced(name: string, attributes: Attributes, handler: Handler): Handler {
    const span = this.#telemetry.span(name, attributes, this.#parent());
    return async (signal) => {
      try {
        const reply = await handler(signal);
        const error = toolError(reply);
        if (error !== undefined) span.fail(String(error));
        else span.ok();
        return reply;
      } catch (error) {
        span.fail(error);
        throw error;
      } finally {
        span.end();
      }
    };
  }
}

/* The error an `mcp_message` reply reports (a JSON-RPC error, or a tool result marked isError). */
function toolError(reply: Record<string, unknown>): unknown {
  const response = reply.mcp_response;
  if (!isRecord(response)) return undefined;
  if (isRecord(response.error)) return response.error.message;
  if (isRecord(response.result) && response.result.isError === true) {
    return "the tool returned an error";
  }
  return undefined;
}

/* The turn's attributes and status, on its span, which it ends. */
function endTurnSpan(span: SpanHandle, outcome: Outcome, model: string | undefined): void {
  const result = "turn" in outcome ? outcome.turn.result : undefined;
  if (result) {
    span.set({
      "gen_ai.response.model": model,
      "gen_ai.conversation.id": result.sessionId,
      "gen_ai.usage.input_tokens": result.tokens.input,
      "gen_ai.usage.output_tokens": result.tokens.output,
      "gen_ai.usage.cache_read.input_tokens": result.tokens.cacheRead,
      "gen_ai.usage.cache_creation.input_tokens": result.tokens.cacheCreation,
      "claude.turn.cost_usd": result.costUsd,
      "claude.turn.num_turns": result.numTurns,
      "claude.turn.duration_ms": result.durationMs,
      "claude.turn.duration_api_ms": result.durationApiMs,
      "claude.turn.is_error": result.isError,
      "claude.turn.subtype": result.subtype,
      "claude.turn.terminal_reason": result.terminalReason,
    });
  }
  if ("aborted" in outcome) span.fail(outcome.aborted);
  else if ("error" in outcome) span.fail(outcome.error);
  else if (result?.isError) span.fail(result.errors[0] ?? `the turn ended with ${result.subtype}`);
  else span.ok();
  span.end();
}
