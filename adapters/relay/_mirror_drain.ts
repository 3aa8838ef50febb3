/**
 * Knowing when the transcript mirror's appends have landed: the relay holds
 * each `result` line back until the entries the mirror flushed at that
 * result are in the store (within a bound), so that a relay killed right
 * after a turn leaves the turn in the store for the next one. The tracker
 * wraps the mirror target's store and counts the appends under way; the
 * mirror starts a flushed batch's append in the microtask after the one
 * before it settled (its chain's next link calls `append` at once), so
 * "nothing under way, after those microtasks" is "drained". (A catch-up
 * after a failure reads the local file first: the wait ends before it.)
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import type { MirrorTarget } from "../../src/store/mirror_target.ts";

/** Counts the mirror's appends under way. */
export class AppendTracker {
  /** The target to give the mirror: the same, with its store's `append` counted. */
  readonly target: MirrorTarget;
  #underWay = 0;
  #settled: PromiseWithResolvers<void> | undefined;

  /** @param target The transport's mirror target. */
  constructor(target: MirrorTarget) {
    const store = target.store;
    this.target = {
      ...target,
      store: {
        append: (key, entries) => {
          this.#underWay++;
          const appending = store.append(key, entries);
          const settle = () => {
            this.#underWay--;
            const settled = this.#settled;
            this.#settled = undefined;
            settled?.resolve();
          };
          appending.then(settle, settle);
          return appending;
        },
        load: (key) => store.load(key),
      },
    };
  }

  /**
   * Resolves once no append is under way (checked after the microtasks in
   * which the mirror starts its next batch), or after `timeoutMs`, or when a batch fails
   * (the mirror then catches the store up later): a failing store does not
   * hold output back beyond one attempt. Never rejects.
   *
   * @param timeoutMs The bound.
   */
  async drained(timeoutMs: number): Promise<void> {
    using limit = deadline(timeoutMs);
    try {
      for (;;) {
        await settledLinks();
        if (this.#underWay === 0) return;
        this.#settled ??= Promise.withResolvers<void>();
        await abortable(this.#settled.promise, limit.signal);
      }
    } catch {
      // The bound passed: the output goes on; the mirror keeps at it.
    }
  }
}

/* Lets the mirror's chain run its queued links (each calls `append` in its first microtask). */
async function settledLinks(): Promise<void> {
  for (let i = 0; i < 4; i++) await Promise.resolve();
}
