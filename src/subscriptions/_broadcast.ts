// This module is browser compatible.
/* Fan-out of one event stream to many bounded subscriptions. */

import type { EventQueue } from "./_event_queue.ts";
import {
  type LaggedFactory,
  openSubscription,
  type Subscription,
  type SubscriptionOptions,
} from "./subscription.ts";

/** Microtask turns {@linkcode Broadcast.drain} waits for some subscriber to read. */
const DRAIN_PATIENCE = 16;

/** Held events that make a subscription pressured (or half its capacity, if less). */
const PRESSURE_EVENTS = 16;

/** Delivers each published event to every live subscription, never waiting on any. */
export class Broadcast<T> {
  readonly #subscriptions = new Set<EventQueue<T>>();
  /** Subscriptions that read nothing during a drain, with what they had read then. */
  readonly #idle = new WeakMap<EventQueue<T>, number>();
  readonly #lagged: LaggedFactory<T>;
  readonly #remove = (queue: EventQueue<T>): void => {
    this.#subscriptions.delete(queue);
  };
  #closed = false;

  readonly #onDropped: (() => void) | undefined;

  /**
   * @param lagged Makes the event that reports dropped events.
   * @param onDropped Called for each event a subscription drops to overflow.
   */
  constructor(lagged: LaggedFactory<T>, onDropped?: () => void) {
    this.#lagged = lagged;
    this.#onDropped = onDropped;
  }

  /** How many subscriptions are live. */
  get size(): number {
    return this.#subscriptions.size;
  }

  /** True once {@linkcode Broadcast.close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Adds a subscription, pre-filled with `backlog`; an already closed broadcast gives an ended one. */
  subscribe(options: SubscriptionOptions = {}, backlog: readonly T[] = []): Subscription<T> {
    const { subscription, queue } = openSubscription(this.#lagged, this.#remove, options);
    queue.onDropped = this.#onDropped;
    for (const event of backlog) queue.push(event);
    if (this.#closed) queue.end();
    else if (!queue.ended) this.#subscriptions.add(queue);
    return subscription;
  }

  /**
   * True when a live subscription holds {@linkcode PRESSURE_EVENTS} events or
   * half its capacity. Kept low on purpose: events that wait in a queue when
   * V8 collects its young generation survive the collection, and enough
   * survivors make V8 double the young generation (+4 MB RSS during a burst).
   */
  get pressured(): boolean {
    for (const subscription of this.#subscriptions) {
      // One that read nothing during the last drain is not waited for again until it reads.
      if (this.#idle.get(subscription) === subscription.taken) continue;
      const size = subscription.size;
      if (size >= PRESSURE_EVENTS || size * 2 >= subscription.capacity) return true;
    }
    return false;
  }

  /**
   * Lets subscribers that read at microtask speed catch up: waits as long as
   * some subscriber keeps reading what it holds. Returns once all are empty,
   * or none read anything for {@linkcode DRAIN_PATIENCE} microtask turns
   * (a stalled subscriber, or one waiting on I/O or timers, is not waited for).
   * A subscriber that read nothing during a drain no longer makes the
   * broadcast pressured until it reads again, so a stalled one costs one
   * drain, not one per chunk.
   */
  async drain(): Promise<void> {
    const before = new Map<EventQueue<T>, number>();
    for (const subscription of this.#subscriptions) before.set(subscription, subscription.taken);
    let held = this.#held();
    while (held > 0) {
      for (let i = 0; i < DRAIN_PATIENCE; i++) await undefined;
      const now = this.#held();
      if (now >= held) break;
      held = now;
    }
    for (const [subscription, taken] of before) {
      if (subscription.taken === taken && subscription.size > 0) {
        this.#idle.set(subscription, taken);
      }
    }
  }

  publish(event: T): void {
    for (const subscription of this.#subscriptions) subscription.push(event);
  }

  #held(): number {
    let held = 0;
    for (const subscription of this.#subscriptions) held += subscription.size;
    return held;
  }

  /** Ends every subscription after what it holds; later subscriptions start ended. */
  close(): void {
    this.#closed = true;
    for (const subscription of [...this.#subscriptions]) subscription.end();
    this.#subscriptions.clear();
  }
}
