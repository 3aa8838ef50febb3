// This module is browser compatible.
/**
 * {@linkcode Subscription}: one consumer's bounded view of a stream of events.
 *
 * @module
 */

import { DONE, EventQueue } from "./_event_queue.ts";

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

/* Only the library opens subscriptions (`session.subscribe()`). */
const OPEN = Symbol("Subscription.open");

/**
 * Opens a subscription and its producer side (for the broadcast; not public).
 *
 * @param lagged Makes the event that reports dropped events.
 * @param onEnd Called once when the subscription ends, to unregister its queue.
 * @param options Capacity, overflow policy and signal.
 * @returns The consumer's subscription and the producer's queue.
 */
export function openSubscription<T>(
  lagged: LaggedFactory<T>,
  onEnd: (queue: EventQueue<T>) => void,
  options: SubscriptionOptions = {},
): { subscription: Subscription<T>; queue: EventQueue<T> } {
  const queue = new EventQueue(lagged, onEnd, options);
  return { subscription: new Subscription(OPEN, queue), queue };
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
  readonly #queue: EventQueue<T>;
  #consumed = false;

  /**
   * Use `session.subscribe()`.
   *
   * @param token A private token.
   * @param queue The producer's side.
   */
  constructor(token: typeof OPEN, queue: EventQueue<T>) {
    if (token !== OPEN) {
      throw new TypeError("Cannot construct a Subscription: use session.subscribe()");
    }
    this.#queue = queue;
  }

  /** The most events held for this subscriber. */
  get capacity(): number {
    return this.#queue.capacity;
  }

  /** How many events are waiting to be read. */
  get size(): number {
    return this.#queue.size;
  }

  /** How many events this subscriber has lost to overflow, in all. */
  get dropped(): number {
    return this.#queue.dropped;
  }

  /** True once the subscription delivers nothing more (after its held events). */
  get ended(): boolean {
    return this.#queue.ended;
  }

  /** Stops delivery now, drops held events and ends any pending read. */
  unsubscribe(): void {
    this.#queue.unsubscribe();
  }

  /**
   * Reads the next event.
   *
   * @returns The next event, or done once the subscription ended.
   */
  next(): Promise<IteratorResult<T, undefined>> {
    return this.#queue.next();
  }

  /**
   * Ends the subscription (what `break` in `for await` calls).
   *
   * @returns Done.
   */
  return(): Promise<IteratorResult<T, undefined>> {
    this.#queue.unsubscribe();
    return Promise.resolve(DONE);
  }

  /**
   * Returns this subscription as its own iterator, once.
   *
   * @returns This subscription.
   * @throws {TypeError} When iterated a second time, or after `toReadableStream()`.
   */
  [Symbol.asyncIterator](): this {
    this.#consume("iterate a subscription twice");
    return this;
  }

  /** Same as {@linkcode Subscription.unsubscribe}. */
  [Symbol.asyncDispose](): Promise<void> {
    this.#queue.unsubscribe();
    return Promise.resolve();
  }

  /** Same as {@linkcode Subscription.unsubscribe}. */
  [Symbol.dispose](): void {
    this.#queue.unsubscribe();
  }

  /**
   * Offers this subscription as a `ReadableStream` (cancelling it
   * unsubscribes). Like iteration, this takes the subscription's one consumer.
   *
   * @returns A stream of the same events.
   * @throws {TypeError} When the subscription is already iterated or streamed.
   */
  toReadableStream(): ReadableStream<T> {
    this.#consume("stream a subscription that already has a consumer");
    return new ReadableStream<T>({
      pull: async (controller) => {
        const result = await this.#queue.next();
        if (result.done) controller.close();
        else controller.enqueue(result.value);
      },
      cancel: () => this.#queue.unsubscribe(),
    }, { highWaterMark: 0 });
  }

  #consume(what: string): void {
    if (this.#consumed) {
      throw new TypeError(`Cannot ${what}: call subscribe() again for another consumer`);
    }
    this.#consumed = true;
  }
}
