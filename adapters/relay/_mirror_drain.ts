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

/** Decides whether an append may go to the store (the conversation's fence, `_fence.ts`). */
export interface AppendGate {
  /** Whether the next append may go. */
  admits(): Promise<boolean>;
}

/** Counts the mirror's appends under way, and holds back those its gate refuses. */
export class AppendTracker {
  /** The target to give the mirror: the same, with its store's `append` counted. */
  readonly target: MirrorTarget;
  #underWay = 0;
  #settled: PromiseWithResolvers<void> | undefined;

  /**
   * @param target The transport's mirror target.
   * @param gate Checked before each append: a refused one rejects (and calls `refused`).
   * @param refused Told of each refused append.
   */
  constructor(target: MirrorTarget, gate?: AppendGate, refused?: () => void) {
    const store = target.store;
    const append = gate === undefined
      ? (key: Parameters<typeof store.append>[0], entries: Parameters<typeof store.append>[1]) =>
        store.append(key, entries)
      : async (
        key: Parameters<typeof store.append>[0],
        entries: Parameters<typeof store.append>[1],
      ) => {
        if (!(await gate.admits())) {
          refused?.();
          throw new Error(
            "Cannot mirror the transcript: another relay resumed the conversation (its fence is higher)",
          );
        }
        await store.append(key, entries);
      };
    this.target = {
      ...target,
      store: {
        append: (key, entries) => {
          this.#underWay++;
          const appending = append(key, entries);
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
