/**
 * The relay's telemetry: a span per WebSocket connection
 * (`claude.relay.connection`), a span per spawned CLI
 * (`claude.relay.session`, from spawn to exit) and the relay's metrics. With
 * telemetry off every method returns at once and nothing is allocated for it.
 *
 * @module
 */

import type { TransportExit } from "../../src/errors.ts";
import type { Refusal } from "../../src/wire/wire.ts";
import type { TraceContext } from "../../src/telemetry/_trace_context.ts";
import type { MirrorEvent } from "../../src/store/mirror_target.ts";
import { NO_SPAN, type SpanHandle, type Telemetry } from "../../src/telemetry/_telemetry.ts";

/** OpenTelemetry's `SpanKind.SERVER`. */
const SERVER = 1;

/** How a connection ended up: attached to a session, refused, or closed before either. */
type Outcome = "ready" | "refused" | "closed";

function now(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * The span of one WebSocket connection. It starts when the hello arrives, a
 * child of the client's trace context, dated back to when the socket opened;
 * a connection that ends without a hello gets a root span all the same.
 */
export class ConnectionTrace {
  readonly #telemetry: Telemetry;
  readonly #opened: number;
  readonly #peer: { readonly hostname: string; readonly port: number } | undefined;
  #span: SpanHandle | undefined;
  #outcome: Outcome | undefined;
  #ended = false;

  /**
   * @param telemetry The relay's telemetry.
   * @param peer The client's address, when the server knows it.
   */
  constructor(telemetry: Telemetry, peer?: { hostname: string; port: number }) {
    this.#telemetry = telemetry;
    this.#opened = telemetry.on ? now() : 0;
    this.#peer = peer;
  }

  /**
   * The hello arrived: the span starts, in the client's trace when it sent one.
   *
   * @param trace The hello's checked trace context.
   * @param resume Whether it asks to resume a session.
   */
  hello(trace: TraceContext | undefined, resume: boolean): void {
    this.#start(trace);
    this.#span?.set({ "claude.relay.resumed": resume });
  }

  /**
   * The connection is attached to a session.
   *
   * @param sessionId The session's telemetry id (never its resume token).
   * @param resumed Whether it resumed the session.
   */
  ready(sessionId: string, resumed: boolean): void {
    if (!this.#telemetry.on) return;
    this.#settle("ready", { "claude.relay.resumed": resumed });
    this.#span?.set({ "claude.relay.session.id": sessionId });
  }

  /**
   * The relay refused the connection (counted by kind).
   *
   * @param refusal What it sent.
   * @param code The close code that goes with it.
   */
  refused(refusal: Refusal, code: number): void {
    if (!this.#telemetry.on || this.#outcome !== undefined) return;
    this.#refused(refusal);
    this.closed(code);
  }

  /**
   * The relay refused the upgrade request itself (a credential or an origin),
   * with an HTTP status: no WebSocket was opened (counted by kind, as `refused`).
   *
   * @param refusal What the response's body says.
   * @param status The response's status (401, 403).
   */
  rejected(refusal: Refusal, status: number): void {
    if (!this.#telemetry.on || this.#outcome !== undefined) return;
    this.#refused(refusal);
    this.#ended = true;
    this.#span?.set({ "http.response.status_code": status });
    this.#span?.end();
  }

  #refused(refusal: Refusal): void {
    this.#telemetry.count("claude.relay.refusals", 1, {
      "claude.relay.refusal.kind": refusal.kind,
    });
    this.#settle("refused", { "claude.relay.refusal.kind": refusal.kind });
    this.#span?.fail(new Error(`${refusal.kind}: ${refusal.message}`));
  }

  /**
   * The connection is done: the span ends with its close code.
   *
   * @param code The close code, when known.
   */
  closed(code: number | undefined): void {
    if (!this.#telemetry.on || this.#ended) return;
    this.#ended = true;
    this.#settle("closed", {});
    this.#span?.set({ "claude.relay.close.code": code });
    this.#span?.end();
  }

  #start(trace: TraceContext | undefined): void {
    if (!this.#telemetry.on || this.#span !== undefined) return;
    const peer = this.#peer;
    this.#span = this.#telemetry.spanFrom("claude.relay.connection", {
      "network.peer.address": peer?.hostname,
      "network.peer.port": peer?.port,
    }, { remote: trace, startTime: this.#opened, kind: SERVER });
  }

  /** Records the outcome once, and counts the connection with it. */
  #settle(outcome: Outcome, attributes: Record<string, string | boolean>): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = outcome;
    this.#start(undefined);
    this.#span?.set({ "claude.relay.connection.outcome": outcome, ...attributes });
    this.#telemetry.count("claude.relay.connections", 1, {
      "claude.relay.connection.outcome": outcome,
    });
  }
}

/** What the session span tells about the spawn (never a token or subject). */
export interface SpawnAttributes {
  /** The model the CLI runs with, if one was chosen. */
  readonly model: string | undefined;
  /** Its permission mode, if one was chosen. */
  readonly permissionMode: string | undefined;
  /** The credential's owner (`token:…` or `sub:…`): only its kind is recorded. */
  readonly owner: string;
}

/** Ends a flow-control stall (records its duration). */
export type StallEnd = () => void;

const NO_STALL: StallEnd = () => {};

/**
 * The span of one spawned CLI, from spawn to exit, a child of the client's
 * trace context: resumes, lost connections and flow-control stalls are its
 * events.
 */
export class SessionTrace {
  /** A random id for telemetry, told apart from the session's resume token. */
  readonly id: string;
  readonly #telemetry: Telemetry;
  readonly #span: SpanHandle;
  readonly #remote: TraceContext | undefined;

  /**
   * Starts the span.
   *
   * @param telemetry The relay's telemetry.
   * @param spawn What is spawned, and for whom.
   * @param remote The client's checked trace context, if it sent one.
   */
  constructor(telemetry: Telemetry, spawn: SpawnAttributes, remote: TraceContext | undefined) {
    this.#telemetry = telemetry;
    this.#remote = remote;
    this.id = telemetry.on ? crypto.randomUUID() : "";
    this.#span = telemetry.tracing
      ? telemetry.spanFrom("claude.relay.session", {
        "claude.relay.session.id": this.id,
        "gen_ai.request.model": spawn.model,
        "claude.permission.mode": spawn.permissionMode,
        "claude.relay.owner.kind": spawn.owner.startsWith("sub:") ? "subject" : "token",
      }, { remote })
      : NO_SPAN;
  }

  /**
   * The trace context the CLI gets: the session span's, else (telemetry off,
   * or nothing records it) the client's, so the CLI still joins its trace.
   */
  traceContext(): TraceContext | undefined {
    const own = this.#span.traceContext();
    const remote = this.#remote;
    if (own === undefined) return remote;
    // Same trace: carry the client's tracestate on when the span's context has none.
    if (own.tracestate === undefined && remote?.tracestate !== undefined) {
      const traceId = (text: string) => text.slice(3, 35);
      if (traceId(own.traceparent) === traceId(remote.traceparent)) {
        return { traceparent: own.traceparent, tracestate: remote.tracestate };
      }
    }
    return own;
  }

  /**
   * The CLI started.
   *
   * @param pid Its process id, if known.
   */
  spawned(pid: number | undefined): void {
    this.#span.set({ "process.pid": pid });
  }

  /**
   * The spawn failed: the span ends in error.
   *
   * @param error Why.
   */
  failed(error: unknown): void {
    this.#span.fail(error);
    this.#span.end();
  }

  /**
   * A connection resumed the session (an event, and counted).
   *
   * @param after The last output the client had.
   * @param replayed How many output entries were sent again.
   */
  resumed(after: number, replayed: number): void {
    if (!this.#telemetry.on) return;
    this.#telemetry.count("claude.relay.resumes");
    this.#span.event("resume", {
      "claude.relay.resume.after": after,
      "claude.relay.resume.replayed": replayed,
    });
  }

  /**
   * The transcript mirror reported a failure, a catch-up or a drop (an event).
   *
   * @param event The mirror's event.
   */
  mirror(event: MirrorEvent): void {
    if (!this.#telemetry.tracing) return;
    this.#span.event("mirror", {
      "claude.relay.mirror.status": event.status,
      "claude.relay.mirror.entries": event.entries,
    });
  }

  /** Another relay resumed the conversation (its fence is higher): this one ends. */
  fenced(): void {
    this.#telemetry.count("claude.relay.fenced");
    if (this.#telemetry.tracing) this.#span.event("fenced");
  }

  /** The connection dropped: the session waits for a resume. */
  disconnected(): void {
    if (this.#telemetry.tracing) this.#span.event("disconnected");
  }

  /**
   * The relay stopped reading the CLI's stdout: output waits for acknowledgements.
   *
   * @param unacknowledged The bytes of output the client has not acknowledged.
   * @returns Call it when reading goes on: records the stall with its duration.
   */
  stalled(unacknowledged: number): StallEnd {
    if (!this.#telemetry.on) return NO_STALL;
    const started = performance.now();
    return () => {
      const seconds = (performance.now() - started) / 1000;
      this.#telemetry.count("claude.relay.flow_stalls");
      this.#telemetry.record("claude.relay.stall.duration", seconds);
      this.#span.event("flow_stall", {
        "claude.relay.stall.duration": seconds,
        "claude.relay.stall.unacknowledged_bytes": unacknowledged,
      });
    };
  }

  /**
   * The CLI exited: the span ends, in error unless it exited with 0 or was
   * closed on request.
   *
   * @param exit How it ended.
   */
  exited(exit: TransportExit): void {
    const span = this.#span;
    if (span === NO_SPAN) return;
    span.set({
      "process.exit.code": exit.code ?? undefined,
      "claude.exit.signal": exit.signal ?? undefined,
      "claude.exit.requested": exit.requested,
    });
    if (exit.code === 0 || exit.requested) span.ok();
    else span.fail(new Error(`claude ended (${exitOf(exit)})`)); // no stderr: it stays on the relay
    span.end();
  }
}

function exitOf(exit: TransportExit): string {
  return exit.signal !== null
    ? `signal ${exit.signal}`
    : exit.code !== null
    ? `exit code ${exit.code}`
    : "end of stream";
}
