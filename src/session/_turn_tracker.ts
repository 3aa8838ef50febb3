// This module is browser compatible.
/*
 * The turns of a session: the one running, each settled exactly once, results
 * attributed by the user line's uuid, and the abort ladder (interrupt, grace,
 * then abandon the turn or close an unresponsive CLI). Turns are kept by uuid
 * so that queued turns can be tracked alongside the running one.
 */

import { deadline, sleep } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { ResultFrame } from "../protocol/messages.ts";
import type { DiagnosticEvent, SessionEvent } from "./events.ts";
import { readTurnResult, type Turn } from "./turn.ts";

/** What the tracker needs from its session. */
export interface TrackerHost {
  /** Sends `interrupt` to the CLI; resolves once the CLI acknowledged it. */
  interrupt(timeoutMs: number): Promise<unknown>;
  /** Reports a step of the abort ladder. */
  publish(event: DiagnosticEvent): void;
  /** True while the session accepts work. */
  alive(): boolean;
  /** Closes the session (its CLI did not acknowledge an interrupt). */
  close(): void;
}

/** The tracker's settings. */
export interface TrackerOptions {
  /** A checked duration: how long an aborted turn waits for its result. */
  readonly graceMs: number;
  readonly onUnresponsive: "close" | "keep";
}

/** A new turn. */
export interface TurnSpec {
  /** The user line's uuid. */
  readonly uuid: string;
  /** Which events to keep in `turn.events`. */
  readonly collect: boolean | "all";
  /** The caller's signal: aborting it aborts the turn. */
  readonly signal?: AbortSignal | undefined;
  /** A checked duration after which the turn is aborted with a `timeout` error. */
  readonly timeoutMs?: number | undefined;
}

/** A turn being tracked, as its session sees it. */
export interface TurnHandle {
  readonly uuid: string;
  /** Settles once: the turn, or why it failed. */
  readonly promise: Promise<Turn>;
}

interface TrackedTurn extends TurnHandle {
  readonly events: SessionEvent[] | undefined;
  /** Keep `stream_event` frames in `events` too. */
  readonly streamEvents: boolean;
  readonly resolve: (turn: Turn) => void;
  readonly reject: (error: unknown) => void;
  /**
   * Aborted once the turn settled: ends its deadline and its grace wait.
   * Made only when a turn has either (most turns need neither, and an
   * AbortController per turn is a measurable part of a turn's cost).
   */
  done: AbortController | undefined;
  phase: "running" | "aborting" | "settled";
  abortReason: unknown;
}

/* The reason a settled turn's signal aborts with (no DOMException made per turn). */
const SETTLED = Symbol("settled");

export class TurnTracker {
  readonly #host: TrackerHost;
  readonly #options: TrackerOptions;
  readonly #turns = new Map<string, TrackedTurn>();
  #active: TrackedTurn | undefined;
  #totalCostUsd = 0;

  constructor(host: TrackerHost, options: TrackerOptions) {
    this.#host = host;
    this.#options = options;
  }

  /** True while a turn runs. */
  get busy(): boolean {
    return this.#active !== undefined;
  }

  /** The events the running turn has collected so far. */
  get activeEvents(): readonly SessionEvent[] {
    return this.#active?.events ?? [];
  }

  /**
   * Checks that a new turn can start.
   *
   * @throws {DuplexError} `turn_in_flight` while another turn runs.
   */
  assertIdle(): void {
    if (!this.#active) return;
    throw new DuplexError(
      "turn_in_flight",
      "Cannot send a turn: another turn is running; await its send() or call interrupt()",
    );
  }

  /**
   * Starts tracking a turn (the caller writes its user line next).
   *
   * @throws {DuplexError} `turn_in_flight` while another turn runs.
   */
  begin(spec: TurnSpec): TurnHandle {
    this.assertIdle();
    const { promise, resolve, reject } = Promise.withResolvers<Turn>();
    const turn: TrackedTurn = {
      uuid: spec.uuid,
      promise,
      events: spec.collect ? [] : undefined,
      streamEvents: spec.collect === "all",
      resolve,
      reject,
      done: undefined,
      phase: "running",
      abortReason: undefined,
    };
    this.#turns.set(turn.uuid, turn);
    this.#active = turn;
    this.#watch(turn, spec);
    return turn;
  }

  /** Keeps an event the session delivered in the running turn's events. */
  record(event: SessionEvent): void {
    const turn = this.#active;
    if (turn?.events && (event.type !== "stream_event" || turn.streamEvents)) {
      turn.events.push(event);
    }
  }

  /**
   * Reads a `result`: it settles the running turn unless it names other
   * user lines (the result of an earlier line). Keeps the cumulative cost.
   */
  onResult(frame: ResultFrame): void {
    const previous = this.#totalCostUsd;
    if (typeof frame.total_cost_usd === "number") this.#totalCostUsd = frame.total_cost_usd;
    const turn = this.#active;
    if (!turn) return;
    const uuids = Array.isArray(frame.user_message_uuids)
      ? frame.user_message_uuids
      : typeof frame.user_message_uuid === "string"
      ? [frame.user_message_uuid]
      : undefined;
    if (uuids && !uuids.includes(turn.uuid)) return;
    const result = readTurnResult(frame, previous);
    this.#settle(turn, { turn: { result, events: turn.events ?? [], uuid: turn.uuid } });
  }

  /** Fails a turn (its line could not be written, its session failed to initialize). */
  fail(handle: TurnHandle, error: unknown): void {
    const turn = this.#turns.get(handle.uuid);
    if (turn === handle) this.#settle(turn, { error });
  }

  /** Fails the running turn, if any. True when there was one. */
  failActive(error: unknown): boolean {
    if (!this.#active) return false;
    this.#settle(this.#active, { error });
    return true;
  }

  /** The session ended: every turn fails with `error`. */
  failAll(error: unknown): void {
    for (const turn of [...this.#turns.values()]) this.#settle(turn, { error });
  }

  #watch(turn: TrackedTurn, spec: TurnSpec): void {
    const { signal, timeoutMs } = spec;
    if (!signal && timeoutMs === undefined) return;
    const limit = deadline(timeoutMs ?? Infinity, {
      signal,
      reason: () =>
        new DuplexError(
          "timeout",
          `Cannot finish the turn: no result within ${timeoutMs} ms; the turn was interrupted`,
        ),
    });
    const onAbort = (): void => this.#abort(turn, limit.signal.reason);
    limit.signal.addEventListener("abort", onAbort, { once: true });
    this.#doneSignal(turn).addEventListener("abort", () => {
      limit.signal.removeEventListener("abort", onAbort);
      limit[Symbol.dispose]();
    }, { once: true });
  }

  /*
   * Ends a turn the caller gave up on: interrupt it, then wait for its result.
   * If the CLI acknowledges the interrupt but sends no result within the
   * grace, the turn is given up (the session stays usable). If it does not
   * even acknowledge the interrupt, it is unresponsive: with
   * `onUnresponsive: "close"` (the default) the session is closed. Each step
   * is reported as a `diagnostic` event.
   */
  #abort(turn: TrackedTurn, reason: unknown): void {
    if (turn.phase !== "running") return;
    turn.phase = "aborting";
    turn.abortReason = reason;
    const { graceMs } = this.#options;
    const why = reason instanceof Error ? reason.message : String(reason);
    this.#diagnose("turn_interrupted", `Interrupting the turn (${why})`);
    let acknowledged = false;
    this.#host.interrupt(graceMs).then(() => acknowledged = true, () => {});
    sleep(graceMs, { signal: this.#doneSignal(turn) }).then(() => {
      this.#settle(turn, { error: reason });
      if (acknowledged || !this.#host.alive()) {
        this.#diagnose(
          "turn_abandoned",
          `The CLI acknowledged the interrupt but sent no result within ${graceMs} ms; ` +
            `the turn was given up`,
        );
      } else if (this.#options.onUnresponsive === "close") {
        this.#diagnose(
          "cli_unresponsive",
          `The CLI did not acknowledge an interrupt within ${graceMs} ms; closing the session`,
        );
        this.#host.close();
      } else {
        this.#diagnose(
          "cli_unresponsive",
          `The CLI did not acknowledge an interrupt within ${graceMs} ms; the session is kept ` +
            `(onUnresponsive: "keep")`,
        );
      }
    }, () => {/* settled before the grace ended */});
  }

  #settle(turn: TrackedTurn, outcome: { turn: Turn } | { error: unknown }): void {
    if (turn.phase === "settled") return;
    const aborted = turn.phase === "aborting";
    turn.phase = "settled";
    this.#turns.delete(turn.uuid);
    if (this.#active === turn) this.#active = undefined;
    turn.done?.abort(SETTLED);
    // An aborted turn rejects with the abort's reason, even if its result came in the grace.
    if (aborted) turn.reject(turn.abortReason);
    else if ("turn" in outcome) turn.resolve(outcome.turn);
    else turn.reject(outcome.error);
  }

  #doneSignal(turn: TrackedTurn): AbortSignal {
    turn.done ??= new AbortController();
    return turn.done.signal;
  }

  #diagnose(kind: DiagnosticEvent["kind"], message: string): void {
    this.#host.publish({ type: "diagnostic", kind, message });
  }
}
