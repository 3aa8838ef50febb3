// This module is browser compatible.
/**
 * {@linkcode Subscription}: one consumer's bounded view of a stream of events.
 *
 * @module
 */

import { DuplexError } from "../errors.ts";

/** What a full subscription does with a new event. */
export type OverflowPolicy = "drop-oldest" | "error";

/** Options of a subscription. */
export interface SubscriptionOptions {
  /**
   * The most events held for this subscriber before the overflow policy applies.
   *
   * @default {256}
   */
  capacity?: number;
  /**
   * `"drop-oldest"` drops the oldest held events and tells the subscriber how
   * many with one `lagged` event where the gap is; `"error"` ends the
   * subscription with a `DuplexError` of kind `lagged` after the held events.
   *
   * @default {"drop-oldest"}
   */
  overflow?: OverflowPolicy;
  /** Ends the subscription when aborted. */
  signal?: AbortSignal;
}

/** How a subscription reports dropped events, as an event of its own. */
export type LaggedFactory<T> = (count: number) => T;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

interface Waiter<T> {
  resolve(result: IteratorResult<T, undefined>): void;
  reject(error: unknown): void;
}

/**
 * A bounded, single-consumer async iterable of events. Pushing never blocks
 * and never waits for the consumer: a slow consumer loses its oldest events
 * (and learns how many) or fails, by its chosen policy, and never slows the
 * producer or other subscribers.
 *
 * Leaving a `for await` loop (by `break`, `return` or a throw) unsubscribes.
 *
 * @typeParam T The event type.
 *
 * @example Iterate and stop
 * ```ts
 * import { DuplexSession } from "@duplex/claude";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ echo: true });
 * await using session = await DuplexSession.start({ transport: cli.transport });
 * const sub = session.subscribe({ capacity: 64 });
 * await session.send("hi");
 * const types: string[] = [];
 * for await (const event of sub) {
 *   types.push(event.type);
 *   if (event.type === "result") break;
 * }
 * assert.deepEqual(types.filter((t) => t !== "command_lifecycle"), ["system", "assistant", "result"]);
 * ```
 */
export class Subscription<T> implements AsyncIterableIterator<T, undefined> {
  readonly #capacity: number;
  readonly #overflow: OverflowPolicy;
  readonly #lagged: LaggedFactory<T>;
  readonly #onEnd: (subscription: Subscription<T>) => void;
  #buffer: (T | undefined)[];
  #head = 0;
  #length = 0;
  #droppedPending = 0;
  #droppedTotal = 0;
  #taken = 0;
  #waiters: Waiter<T>[] = [];
  #ended = false;
  #failure: DuplexError | undefined;
  #iterating = false;
  #signal: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;

  /**
   * Makes a subscription. Use `session.subscribe()` rather than this.
   *
   * @param lagged Makes the event that reports dropped events.
   * @param onEnd Called once when the subscription ends, to unregister it.
   * @param options Capacity, overflow policy and signal.
   */
  constructor(
    lagged: LaggedFactory<T>,
    onEnd: (subscription: Subscription<T>) => void,
    options: SubscriptionOptions = {},
  ) {
    const capacity = options.capacity ?? 256;
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
    this.#capacity = capacity;
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

  /** The most events held for this subscriber. */
  get capacity(): number {
    return this.#capacity;
  }

  /** How many held events the subscriber has read, in all (waiters served at once not counted). */
  get taken(): number {
    return this.#taken;
  }

  /** How many events are waiting to be read. */
  get size(): number {
    return this.#length;
  }

  /** How many events this subscriber has lost to overflow, in all. */
  get dropped(): number {
    return this.#droppedTotal;
  }

  /** True once the subscription delivers nothing more (after its held events). */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Offers an event. Never blocks. Called by the producer.
   *
   * @param event The event.
   */
  push(event: T): void {
    if (this.#ended || this.#failure) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.resolve({ done: false, value: event });
      return;
    }
    if (this.#length === this.#capacity) {
      if (this.#overflow === "error") {
        this.#failure = new DuplexError(
          "lagged",
          `Cannot deliver event: the subscriber fell ${this.#capacity} events behind; ` +
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
    }
    if (this.#length === this.#buffer.length) this.#grow();
    this.#buffer[(this.#head + this.#length) % this.#buffer.length] = event;
    this.#length++;
  }

  /**
   * Ends the subscription after its held events are read. Called by the producer.
   */
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

  /**
   * Reads the next event.
   *
   * @returns The next event, or done once the subscription ended.
   */
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

  /**
   * Ends the subscription (what `break` in `for await` calls).
   *
   * @returns Done.
   */
  return(): Promise<IteratorResult<T, undefined>> {
    this.unsubscribe();
    return Promise.resolve(DONE);
  }

  /**
   * Returns this subscription as its own iterator, once.
   *
   * @returns This subscription.
   * @throws {TypeError} When iterated a second time.
   */
  [Symbol.asyncIterator](): this {
    if (this.#iterating) {
      throw new TypeError(
        "Cannot iterate a subscription twice: call subscribe() again for another consumer",
      );
    }
    this.#iterating = true;
    return this;
  }

  /** Same as {@linkcode Subscription.unsubscribe}. */
  [Symbol.asyncDispose](): Promise<void> {
    this.unsubscribe();
    return Promise.resolve();
  }

  /** Same as {@linkcode Subscription.unsubscribe}. */
  [Symbol.dispose](): void {
    this.unsubscribe();
  }

  /**
   * Offers this subscription as a `ReadableStream` (cancelling it unsubscribes).
   *
   * @returns A stream of the same events.
   */
  toReadableStream(): ReadableStream<T> {
    return new ReadableStream<T>({
      pull: async (controller) => {
        const result = await this.next();
        if (result.done) controller.close();
        else controller.enqueue(result.value);
      },
      cancel: () => this.unsubscribe(),
    }, { highWaterMark: 0 });
  }

  #grow(): void {
    const size = Math.min(this.#capacity, this.#buffer.length * 2);
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
