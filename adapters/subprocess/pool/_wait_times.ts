/** Acquire wait times: a ring of the last 1024, read as percentiles. */

import type { WaitTimes } from "./pool_events.ts";

const SIZE = 1024;

/** The last {@linkcode SIZE} wait times of a pool. */
export class WaitRing {
  readonly #ring = new Float64Array(SIZE);
  #count = 0;

  /** Records one wait, in milliseconds. */
  add(ms: number): void {
    this.#ring[this.#count % SIZE] = ms;
    this.#count++;
  }

  /** The percentiles of what the ring holds. */
  read(): WaitTimes {
    const held = this.#ring.slice(0, Math.min(this.#count, SIZE)).sort();
    const at = (q: number): number =>
      held.length === 0 ? 0 : held[Math.min(held.length - 1, Math.floor(q * held.length))]!;
    return {
      count: this.#count,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: held.length === 0 ? 0 : held[held.length - 1]!,
    };
  }
}
