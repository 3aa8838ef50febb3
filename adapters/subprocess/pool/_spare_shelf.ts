/**
 * The spares of a pool: keeps the wanted number of each kind started,
 * replaces a hand-out or a dead one in the background, starts at most
 * `concurrency` at once and none while a conversation is starting or a new
 * conversation's first turn runs, and backs off after failures.
 *
 * @module
 */

import { errorOf } from "../../../src/_values.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import type { PoolEvent, SpareKind } from "./pool_events.ts";

/** Backoff after consecutive failures of a kind: 500 ms doubling, at most 30 s. */
const BACKOFF_MS = 500;
const BACKOFF_MAX_MS = 30_000;

/** The longest spares wait for a new conversation's first turn to end. */
const FIRST_TURN_HOLD_MS = 5000;

/** One spare: starting (`session` unset) or ready. */
export interface Spare {
  readonly kind: SpareKind;
  /** Resolves with the ready session; rejects when it could not start. */
  readonly ready: Promise<DuplexSession>;
  session: DuplexSession | undefined;
}

interface Slot extends Spare {
  readonly controller: AbortController;
}

/** What the shelf needs from the pool. */
export interface ShelfDeps {
  /** Starts a spare of a kind, ready (initialised) when it resolves. */
  open(kind: SpareKind, signal: AbortSignal): Promise<DuplexSession>;
  /** True while a conversation is starting: spares wait. */
  demandStarting(): boolean;
  publish(event: PoolEvent): void;
  /** Counts a spare that failed or died. */
  failed(): void;
}

/** Keeps the spares of a pool. */
export class SpareShelf {
  #want: Readonly<Record<SpareKind, number>>;
  readonly #concurrency: number;
  readonly #deps: ShelfDeps;
  readonly #slots: Record<SpareKind, Set<Slot>> = { warm: new Set(), parked: new Set() };
  readonly #failures: Record<SpareKind, number> = { warm: 0, parked: 0 };
  readonly #retryAt: Record<SpareKind, number> = { warm: 0, parked: 0 };
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #all = new Set<Promise<unknown>>();
  #starting = 0;
  /** Conversations just started whose first turn has not ended (spares wait for them). */
  #firstTurns = 0;
  #closed = false;

  /**
   * @param want How many of each kind to keep.
   * @param concurrency The most spares starting at once.
   * @param deps What the shelf needs from the pool.
   */
  constructor(want: Record<SpareKind, number>, concurrency: number, deps: ShelfDeps) {
    this.#want = want;
    this.#concurrency = concurrency;
    this.#deps = deps;
  }

  /**
   * Parked spares cannot start (the CLI has no `--await-claim`): keeps as
   * many warm spares instead, from now on.
   */
  parkAsWarm(): void {
    const { warm, parked } = this.#want;
    if (parked === 0) return;
    this.#want = { warm: warm + parked, parked: 0 };
    this.fill();
  }

  /** How many spares of a kind are held (starting or ready). */
  count(kind: SpareKind): number {
    return this.#slots[kind].size;
  }

  /**
   * Takes a spare of a kind (a ready one first, else one still starting) and
   * starts its replacement.
   *
   * @param kind The kind.
   * @returns The spare, or `undefined` when none is held.
   */
  take(kind: SpareKind): Spare | undefined {
    let chosen: Slot | undefined;
    for (const slot of this.#slots[kind]) {
      if (slot.session?.alive) {
        chosen = slot;
        break;
      }
      if (!slot.session) chosen ??= slot;
    }
    if (!chosen) return undefined;
    this.#slots[kind].delete(chosen);
    this.#failures[kind] = 0; // one that lived to be handed out ends a run of failures
    this.fill();
    return chosen;
  }

  /** Starts what is missing, as the concurrency bound and conversations starting allow. */
  fill(): void {
    if (this.#closed) return;
    for (const kind of ["warm", "parked"] as const) {
      while (this.#slots[kind].size < this.#want[kind] && this.#canStart(kind)) this.#start(kind);
    }
  }

  #canStart(kind: SpareKind): boolean {
    if (
      this.#starting >= this.#concurrency || this.#firstTurns > 0 || this.#deps.demandStarting()
    ) {
      return false;
    }
    const wait = this.#retryAt[kind] - performance.now();
    if (wait <= 0) return true;
    if (this.#timers.size === 0) {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.fill();
      }, wait);
      this.#timers.add(timer);
    }
    return false;
  }

  /**
   * Starts no spare during a new conversation's first turn (the CLI's
   * heaviest: a spawn beside it on 2 cores made it ~30 % slower, median of
   * five runs of bench row 8f), nor longer than {@linkcode FIRST_TURN_HOLD_MS}.
   *
   * @param session The session of a conversation just started.
   */
  holdForFirstTurn(session: DuplexSession): void {
    this.#firstTurns++;
    const events = session.subscribe({ capacity: 64 });
    const hold = setTimeout(() => void events.return(), FIRST_TURN_HOLD_MS);
    void (async () => {
      try {
        for await (const event of events) {
          if (event.type === "result" || event.type === "exit") break;
        }
      } catch {
        // A lagged subscriber: the turn is under way anyway.
      } finally {
        clearTimeout(hold);
        this.#firstTurns--;
        this.fill();
      }
    })();
  }

  #start(kind: SpareKind): void {
    const controller = new AbortController();
    const began = performance.now();
    this.#starting++;
    const ready = this.#deps.open(kind, controller.signal);
    const slot: Slot = { kind, ready, session: undefined, controller };
    this.#slots[kind].add(slot);
    const settled = ready.then(
      (session) => {
        slot.session = session;
        this.#deps.publish({ type: "spare_ready", kind, ms: performance.now() - began });
        void session.waitForExit().then((status) => {
          // Died on the shelf (a hand-out is no longer in the set): replace it.
          if (!this.#slots[kind].delete(slot) || this.#closed || status.state === "running") return;
          this.#deps.failed();
          this.#deps.publish({ type: "spare_died", kind, exit: status.exit });
          this.#backOff(kind);
          this.fill();
        });
      },
      (error) => {
        const held = this.#slots[kind].delete(slot);
        if (this.#closed || !held && controller.signal.aborted) return;
        if (this.#want[kind] === 0) return; // a kind given up (parkAsWarm), not a failure
        this.#deps.failed();
        const retryInMs = this.#backOff(kind);
        this.#deps.publish({
          type: "spare_failed",
          kind,
          error: errorOf(error),
          retryInMs,
        });
      },
    ).finally(() => {
      this.#starting--;
      this.#all.delete(settled);
      this.fill();
    });
    this.#all.add(settled);
  }

  #backOff(kind: SpareKind): number {
    const failures = ++this.#failures[kind];
    const ms = Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** (failures - 1));
    this.#retryAt[kind] = performance.now() + ms;
    return ms;
  }

  /** Closes every spare held and stops replacing them. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const slots = [...this.#slots.warm, ...this.#slots.parked];
    this.#slots.warm.clear();
    this.#slots.parked.clear();
    for (const slot of slots) slot.controller.abort(new Error("The pool is closing"));
    await Promise.all([
      ...slots.map((slot) =>
        slot.ready.then((session) => session.close(), () => {}).catch(() => {})
      ),
      ...this.#all,
    ]);
  }
}
