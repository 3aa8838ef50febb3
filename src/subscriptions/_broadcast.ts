// This module is browser compatible.
/* Fan-out of one event stream to many bounded subscriptions. */

import { type LaggedFactory, Subscription, type SubscriptionOptions } from "./subscription.ts";

/** Delivers each published event to every live subscription, never waiting on any. */
export class Broadcast<T> {
  readonly #subscriptions = new Set<Subscription<T>>();
  readonly #lagged: LaggedFactory<T>;
  readonly #remove = (subscription: Subscription<T>): void => {
    this.#subscriptions.delete(subscription);
  };
  #closed = false;

  constructor(lagged: LaggedFactory<T>) {
    this.#lagged = lagged;
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
    const subscription = new Subscription(this.#lagged, this.#remove, options);
    for (const event of backlog) subscription.push(event);
    if (this.#closed) subscription.end();
    else if (!subscription.ended) this.#subscriptions.add(subscription);
    return subscription;
  }

  publish(event: T): void {
    for (const subscription of this.#subscriptions) subscription.push(event);
  }

  /** Ends every subscription after what it holds; later subscriptions start ended. */
  close(): void {
    this.#closed = true;
    for (const subscription of [...this.#subscriptions]) subscription.end();
    this.#subscriptions.clear();
  }
}
