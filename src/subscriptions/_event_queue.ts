// This module is browser compatible.
/*
 * The producer's side of one subscription: a bounded ring of events with a
 * drop-oldest or error overflow policy, and the reads waiting on it. Only the
 * broadcast pushes into it; consumers see it through `Subscription`.
 */

import { DuplexError } from "../errors.ts";
import type { LaggedFactory, OverflowPolicy, SubscriptionOptions } from "./subscription.ts";

/** The default {@linkcode SubscriptionOptions.capacity}. */
export const DEFAULT_CAPACITY = 256;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

interface Waiter<T> {
  resolve(result: IteratorResult<T, undefined>): void;
  reject(error: unknown): void;
}

export class EventQueue<T> {
  readonly capacity: number;
  /** Called for each event dropped to overflow (the session counts them). */
  onDropped: (() => void) | undefined;
  readonly #overflow: OverflowPolicy;
  readonly #lagged: LaggedFactory<T>;
  readonly #onEnd: (queue: EventQueue<T>) => void;
  #buffer: (T | undefined)[];
  #head = 0;
  #length = 0;
  #droppedPending = 0;
  #droppedTotal = 0;
  #taken = 0;
  #waiters: Waiter<T>[] = [];
  #ended = false;
  #failure: DuplexError | undefined;
  #signal: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;

  constructor(
    lagged: LaggedFactory<T>,
    onEnd: (queue: EventQueue<T>) => void,
    options: SubscriptionOptions,
  ) {
    const capacity = options.capacity ?? DEFAULT_CAPACITY;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `Cannot subscribe: capacity must be a positive integer, got ${capacity}`,
      );
    }
    const overflow = options.overflow ?? "drop-oldest";
    if (overflow !== "drop-oldest" && overflow !== "error") {
      throw new TypeError(
        `Cannot subscribe: overflow must be "drop-oldest" or "error", got ${String(overflow)}`,
      );
    }
    this.capacity = capacity;
    this.#overflow = overflow;
    this.#lagged = lagged;
    this.#onEnd = onEnd;
    this.#buffer = new Array(Math.min(capacity, 16));
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) {
        this.#ended = true;
        queueMicrotask(() => this.#onEnd(this));
      } else {
        this.#signal = signal;
        this.#onAbort = () => this.unsubscribe();
        signal.addEventListener("abort", this.#onAbort, { once: true });
      }
    }
  }

  /** How many held events were read, in all (waiters served at once not counted). */
  get taken(): number {
    return this.#taken;
  }

  get size(): number {
    return this.#length;
  }

  get dropped(): number {
    return this.#droppedTotal;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Offers an event. Never blocks. */
  push(event: T): void {
    if (this.#ended || this.#failure) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.resolve({ done: false, value: event });
      return;
    }
    if (this.#length === this.capacity) {
      if (this.#overflow === "error") {
        this.#failure = new DuplexError(
          "lagged",
          `Cannot deliver event: the subscriber fell ${this.capacity} events behind; ` +
            `read faster, raise capacity, or use overflow "drop-oldest"`,
        );
        this.#detach();
        return;
      }
      this.#buffer[this.#head] = undefined;
      this.#head = (this.#head + 1) % this.#buffer.length;
      this.#length--;
      this.#droppedPending++;
      this.#droppedTotal++;
      this.onDropped?.();
    }
    if (this.#length === this.#buffer.length) this.#grow();
    this.#buffer[(this.#head + this.#length) % this.#buffer.length] = event;
    this.#length++;
  }

  /** Ends the queue after its held events are read. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#detach();
    if (this.#length === 0 && this.#droppedPending === 0) this.#flushWaiters();
  }

  /** Stops delivery now, drops held events and ends any pending read. */
  unsubscribe(): void {
    this.#buffer = [];
    this.#head = 0;
    this.#length = 0;
    this.#droppedPending = 0;
    this.#failure = undefined;
    this.#ended = true;
    this.#detach();
    this.#flushWaiters();
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.#droppedPending > 0) {
      const count = this.#droppedPending;
      this.#droppedPending = 0;
      return Promise.resolve({ done: false, value: this.#lagged(count) });
    }
    if (this.#length > 0) {
      const value = this.#buffer[this.#head] as T;
      this.#buffer[this.#head] = undefined;
      this.#head = (this.#head + 1) % this.#buffer.length;
      this.#length--;
      this.#taken++;
      return Promise.resolve({ done: false, value });
    }
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = undefined;
      this.#ended = true;
      return Promise.reject(failure);
    }
    if (this.#ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  #grow(): void {
    const size = Math.min(this.capacity, this.#buffer.length * 2);
    const next = new Array<T | undefined>(size);
    for (let i = 0; i < this.#length; i++) {
      next[i] = this.#buffer[(this.#head + i) % this.#buffer.length];
    }
    this.#buffer = next;
    this.#head = 0;
  }

  #detach(): void {
    if (this.#signal && this.#onAbort) {
      this.#signal.removeEventListener("abort", this.#onAbort);
    }
    this.#signal = undefined;
    this.#onAbort = undefined;
    this.#onEnd(this);
    if (this.#failure && this.#length === 0 && this.#droppedPending === 0) {
      const failure = this.#failure;
      this.#failure = undefined;
      this.#ended = true;
      for (const waiter of this.#waiters.splice(0)) waiter.reject(failure);
    }
  }

  #flushWaiters(): void {
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(DONE);
  }
}

export { DONE };
