/*
 * What a pool tells: its events (to subscribers and to `onEvent`), its
 * counters since it started, its acquire wait times, and the `health`
 * snapshot they make with the counts of the moment.
 */

import { Broadcast } from "../../../src/subscriptions/_broadcast.ts";
import type { Subscription, SubscriptionOptions } from "../../../src/subscriptions/subscription.ts";
import type { PoolEvent, PoolHealth, StartVia } from "./pool_events.ts";
import { WaitRing } from "./_wait_times.ts";

/** The counters of {@linkcode PoolHealth}. */
export type Counter =
  | "hibernations"
  | "evictions"
  | "crashes"
  | "failures"
  | "claimRefusals"
  | "handoutFailures"
  | "spareFailures"
  | "exhausted";

/** The counts of the moment (live, starting, …) that `health` reports with the counters. */
export type PoolCounts = Omit<PoolHealth, Counter | "handouts" | "acquireWait">;

/** A pool's events, counters and wait times. */
export class PoolReport {
  readonly #onEvent: ((event: PoolEvent) => void) | undefined;
  readonly #broadcast = new Broadcast<PoolEvent>((count) => ({ type: "lagged", count }));
  readonly #waits = new WaitRing();
  readonly #handouts: Record<StartVia, number> = { spare: 0, parked: 0, cold: 0, resumed: 0 };
  readonly #counts: Record<Counter, number> = {
    hibernations: 0,
    evictions: 0,
    crashes: 0,
    failures: 0,
    claimRefusals: 0,
    handoutFailures: 0,
    spareFailures: 0,
    exhausted: 0,
  };

  /** @param onEvent The pool's `onEvent` listener. */
  constructor(onEvent: ((event: PoolEvent) => void) | undefined) {
    this.#onEvent = onEvent;
  }

  /**
   * Tells every subscriber and the listener (one that throws does not break the pool).
   *
   * @param event The event.
   */
  publish(event: PoolEvent): void {
    this.#broadcast.publish(event);
    try {
      this.#onEvent?.(event);
    } catch {
      // A throwing listener must not break the pool.
    }
  }

  /**
   * Counts one more of a kind.
   *
   * @param counter The counter.
   */
  count(counter: Counter): void {
    this.#counts[counter]++;
  }

  /**
   * Counts a conversation that got its process.
   *
   * @param via How.
   */
  handedOut(via: StartVia): void {
    this.#handouts[via]++;
  }

  /**
   * Records how long a successful acquire took.
   *
   * @param ms The time, in milliseconds.
   */
  waited(ms: number): void {
    this.#waits.add(ms);
  }

  /**
   * Subscribes to the events (bounded).
   *
   * @param options Capacity, overflow policy and a signal.
   * @returns The events, from now on.
   */
  subscribe(options: SubscriptionOptions): Subscription<PoolEvent> {
    return this.#broadcast.subscribe(options);
  }

  /**
   * The health snapshot.
   *
   * @param now The counts of the moment.
   * @returns Those, the counters, the hand-outs and the wait times.
   */
  health(now: PoolCounts): PoolHealth {
    return {
      ...now,
      handouts: { ...this.#handouts },
      ...this.#counts,
      acquireWait: this.#waits.read(),
    };
  }

  /** Ends every subscription (after the last event). */
  close(): void {
    this.#broadcast.close();
  }
}
