// This module is browser compatible.
/*
 * The turns of a session: the running ones and the queued ones, each settled
 * exactly once, attributed by the user line's uuid.
 *
 * How the CLI runs lines (observed on 2.1.332): a line written while a turn
 * runs is queued (`command_lifecycle` `queued`); when the turn ends, the
 * queued lines of default priority start together (`started` each) and run
 * as ONE turn whose `result` names them all (`user_message_uuids`); a line of
 * priority `next` runs alone before those, `later` alone after them, and
 * `now` cancels the running turn and runs at once. A line cancelled before it
 * started (`cancel_async_message`, `interrupt` with `cancel_queued`) gets
 * `command_lifecycle` `cancelled`. Each `send` resolves with the turn that ran
 * its line: lines batched into one turn share its result.
 *
 * The abort ladder (interrupt, grace, then abandon the turn or close an
 * unresponsive CLI) is in `_abort_ladder.ts`.
 */

import { deadline } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { CommandLifecycleFrame, ResultFrame } from "../protocol/messages.ts";
import { NO_SPAN, type SpanHandle } from "../telemetry/_telemetry.ts";
import { AbortLadder, type LadderHost, type LadderOptions } from "./_abort_ladder.ts";
import type { SessionTelemetry, TurnTrace } from "./_session_telemetry.ts";
import type { SessionEvent } from "./events.ts";
import { type PreviousTotals, readTurnResult, type Turn } from "./turn.ts";

/** What the tracker needs from its session. */
export interface TrackerHost extends LadderHost {
  /** Publishes an event of the tracker's own (`turn_queued`, `turn_started`). */
  event(event: SessionEvent): void;
  /** Withdraws a queued line (`cancel_async_message`); true when the CLI cancelled it. */
  cancelQueued(uuid: string): Promise<boolean>;
  /** Where turns report: their spans, metrics and stats. */
  readonly telemetry: SessionTelemetry;
}

/** The tracker's settings. */
export type TrackerOptions = LadderOptions;

/** A new turn. */
export interface TurnSpec {
  /** The user line's uuid. */
  readonly uuid: string;
  /** Which events to keep in `turn.events`. */
  readonly collect: boolean | "all";
  /** The caller's signal: aborting it aborts the turn (or withdraws it while queued). */
  readonly signal?: AbortSignal | undefined;
  /** A checked duration after which the turn is aborted with a `timeout` error. */
  readonly timeoutMs?: number | undefined;
  /** Queue the line when a turn runs (instead of `turn_in_flight`); report queue events. */
  readonly queue?: boolean;
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
  /** Sent with the queue: report `turn_started`. */
  readonly queued: boolean;
  readonly resolve: (turn: Turn) => void;
  readonly reject: (error: unknown) => void;
  /**
   * Aborted once the turn settled: ends its deadline and its grace wait.
   * Made only when a turn has either (most turns need neither, and an
   * AbortController per turn is a measurable part of a turn's cost).
   */
  done: AbortController | undefined;
  /** The turn's span and start (a shared no-op without telemetry). */
  readonly trace: TurnTrace;
  phase: "waiting" | "running" | "aborting" | "settled";
  abortReason: unknown;
}

/* The reason a settled turn's signal aborts with (no DOMException made per turn). */
const SETTLED = Symbol("settled");

export class TurnTracker {
  readonly #host: TrackerHost;
  readonly #ladder: AbortLadder;
  /** Every unsettled turn, in the order its line was written. */
  readonly #turns = new Map<string, TrackedTurn>();
  #previous: PreviousTotals = { totalCostUsd: 0 };
  /**
   * The CLI names the lines its results answer (it sent a lifecycle frame or
   * a result with uuids): from then on a result that names none is a turn the
   * CLI started itself (a background task's notification) and settles no send.
   */
  #cliNamesLines = false;

  constructor(host: TrackerHost, options: TrackerOptions) {
    this.#host = host;
    this.#ladder = new AbortLadder(host, options);
  }

  /** True while a turn runs or waits. */
  get busy(): boolean {
    return this.#turns.size > 0;
  }

  /** The span of the turn running now (`NO_SPAN` when none runs). */
  get runningSpan(): SpanHandle {
    return this.#running()?.trace.span ?? NO_SPAN;
  }

  /** The events the running turn has collected so far. */
  get activeEvents(): readonly SessionEvent[] {
    return this.#running()?.events ?? [];
  }

  /**
   * Checks that a new turn can start now.
   *
   * @throws {DuplexError} `turn_in_flight` while another turn runs or waits.
   */
  assertIdle(): void {
    if (this.#turns.size === 0) return;
    throw new DuplexError(
      "turn_in_flight",
      "Cannot send a turn: another turn is running; await its send(), call interrupt(), " +
        "or send with { queue: true }",
    );
  }

  /**
   * Starts tracking a turn (the caller writes its user line next). With
   * `queue`, a turn that cannot run now waits for the ones before it.
   *
   * @throws {DuplexError} `turn_in_flight` while another turn runs, without `queue`.
   * @throws {TypeError} For a uuid already in use by an unsettled turn.
   */
  begin(spec: TurnSpec): TurnHandle {
    if (!spec.queue) this.assertIdle();
    if (this.#turns.has(spec.uuid)) {
      throw new TypeError(`Cannot send a turn: uuid ${spec.uuid} belongs to a pending turn`);
    }
    const ahead = this.#turns.size;
    const { promise, resolve, reject } = Promise.withResolvers<Turn>();
    const turn: TrackedTurn = {
      uuid: spec.uuid,
      promise,
      events: spec.collect ? [] : undefined,
      streamEvents: spec.collect === "all",
      queued: spec.queue === true,
      resolve,
      reject,
      done: undefined,
      trace: this.#host.telemetry.turnStarted(spec.uuid, ahead > 0),
      phase: ahead === 0 ? "running" : "waiting",
      abortReason: undefined,
    };
    this.#turns.set(turn.uuid, turn);
    if (turn.queued) {
      if (ahead > 0) this.#host.event({ type: "turn_queued", uuid: turn.uuid, position: ahead });
      else this.#host.event({ type: "turn_started", uuid: turn.uuid });
    }
    this.#watch(turn, spec);
    return turn;
  }

  /** Keeps an event the session delivered in the running turns' events. */
  record(event: SessionEvent): void {
    for (const turn of this.#turns.values()) {
      if (turn.phase === "waiting") continue;
      if (turn.events && (event.type !== "stream_event" || turn.streamEvents)) {
        turn.events.push(event);
      }
    }
  }

  /** Follows the CLI's queue: lines that started, and lines it cancelled before they ran. */
  onLifecycle(frame: CommandLifecycleFrame): void {
    this.#cliNamesLines = true;
    const turn = this.#turns.get(frame.command_uuid);
    if (!turn) return;
    if (frame.state === "started") this.#start(turn);
    else if (frame.state === "cancelled") this.#withdrawn(turn);
  }

  /**
   * Reads a `result`: it settles the turns of the lines it names (or, when it
   * names none, the oldest running turn), with one result for all of them.
   * Keeps the cumulative cost.
   */
  onResult(frame: ResultFrame): void {
    const previous = this.#previous;
    this.#previous = {
      totalCostUsd: typeof frame.total_cost_usd === "number"
        ? frame.total_cost_usd
        : previous.totalCostUsd,
      modelUsage: frame.modelUsage ?? previous.modelUsage,
    };
    const uuids = Array.isArray(frame.user_message_uuids)
      ? frame.user_message_uuids
      : typeof frame.user_message_uuid === "string"
      ? [frame.user_message_uuid]
      : undefined;
    if (uuids !== undefined) this.#cliNamesLines = true;
    const turns = uuids !== undefined
      ? uuids.flatMap((uuid) => this.#turns.get(uuid) ?? [])
      : this.#cliNamesLines
      ? []
      : [this.#running()].filter((turn) => turn !== undefined);
    if (turns.length === 0) return; // a turn-less result, or an earlier line's
    const result = readTurnResult(frame, previous);
    for (const turn of turns) {
      this.#settle(turn, { turn: { result, events: turn.events ?? [], uuid: turn.uuid } });
    }
    this.#promote();
  }

  /** Fails a turn (its line could not be written). */
  fail(handle: TurnHandle, error: unknown): void {
    const turn = this.#turns.get(handle.uuid);
    if (turn === handle) this.#settle(turn, { error });
    this.#promote();
  }

  /** Fails the running turn, if any (its session failed to initialize). True when there was one. */
  failActive(error: unknown): boolean {
    const turn = this.#running();
    if (!turn) return false;
    this.#settle(turn, { error });
    this.#promote();
    return true;
  }

  /** Rejects the turns whose queued lines the CLI cancelled (an interrupt's receipt). */
  cancelled(uuids: readonly string[]): void {
    for (const uuid of uuids) {
      const turn = this.#turns.get(uuid);
      if (turn) this.#withdrawn(turn);
    }
  }

  /** The session ended: every turn fails with `error`. */
  failAll(error: unknown): void {
    for (const turn of [...this.#turns.values()]) this.#settle(turn, { error });
  }

  #running(): TrackedTurn | undefined {
    for (const turn of this.#turns.values()) if (turn.phase !== "waiting") return turn;
    return undefined;
  }

  #start(turn: TrackedTurn): void {
    if (turn.phase !== "waiting") return;
    turn.phase = "running";
    if (turn.abortReason !== undefined) {
      // Aborted while it waited, and the CLI started it anyway: interrupt it now.
      const reason = turn.abortReason;
      turn.abortReason = undefined;
      this.#abort(turn, reason);
    }
    if (turn.queued) this.#host.event({ type: "turn_started", uuid: turn.uuid });
  }

  /* The CLI cancelled a queued line before it ran. */
  #withdrawn(turn: TrackedTurn): void {
    if (turn.phase !== "waiting") return;
    this.#settle(turn, {
      error: new DuplexError(
        "aborted",
        `Cannot finish the turn: the CLI cancelled the queued prompt ${turn.uuid} before it ran`,
      ),
    });
  }

  /* A CLI that sends no lifecycle frames: the oldest waiting turn runs once nothing runs. */
  #promote(): void {
    if (this.#running()) return;
    const next = this.#turns.values().next();
    if (!next.done) this.#start(next.value);
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

  /* A waiting turn is withdrawn from the CLI's queue; a running one goes down the ladder. */
  #abort(turn: TrackedTurn, reason: unknown): void {
    if (turn.phase === "waiting") {
      if (turn.abortReason !== undefined) return;
      turn.abortReason = reason;
      this.#host.cancelQueued(turn.uuid).then((cancelled) => {
        if (cancelled) this.#settle(turn, { error: reason });
      }, () => {/* the session's end settles it */});
      return;
    }
    if (turn.phase !== "running") return;
    turn.phase = "aborting";
    turn.abortReason = reason;
    this.#host.telemetry.turnInterrupted(turn.trace, reason);
    this.#ladder.climb(reason, this.#doneSignal(turn), () => this.#settle(turn, { error: reason }));
  }

  #settle(turn: TrackedTurn, outcome: { turn: Turn } | { error: unknown }): void {
    if (turn.phase === "settled") return;
    const aborted = turn.abortReason !== undefined;
    turn.phase = "settled";
    this.#turns.delete(turn.uuid);
    turn.done?.abort(SETTLED);
    this.#host.telemetry.turnEnded(turn.trace, aborted ? { aborted: turn.abortReason } : outcome);
    // An aborted turn rejects with the abort's reason, even if its result came in the grace.
    if (aborted) turn.reject(turn.abortReason);
    else if ("turn" in outcome) turn.resolve(outcome.turn);
    else turn.reject(outcome.error);
  }

  #doneSignal(turn: TrackedTurn): AbortSignal {
    turn.done ??= new AbortController();
    return turn.done.signal;
  }
}
