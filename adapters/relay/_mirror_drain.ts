/**
 * Knowing when the transcript mirror's appends have landed: the relay holds
 * each `result` line back until the entries the mirror flushed at that
 * result are in the store (within a bound), so that a relay killed right
 * after a turn leaves the turn in the store for the next one. The tracker
 * wraps the mirror target's store and counts the appends under way; the
 * mirror starts a flushed batch's append once the one before it has settled
 * (a later task at most), so "nothing under way, after a task" is "drained".
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
   * Resolves once no append is under way (checked after a task, as the
   * mirror chains its batches), or after `timeoutMs`, or when a batch fails
   * (the mirror then catches the store up later): a failing store does not
   * hold output back beyond one attempt. Never rejects.
   *
   * @param timeoutMs The bound.
   */
  async drained(timeoutMs: number): Promise<void> {
    using limit = deadline(timeoutMs);
    try {
      for (;;) {
        await abortable(nextTask(), limit.signal);
        if (this.#underWay === 0) return;
        this.#settled ??= Promise.withResolvers<void>();
        await abortable(this.#settled.promise, limit.signal);
      }
    } catch {
      // The bound passed: the output goes on; the mirror keeps at it.
    }
  }
}

function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
