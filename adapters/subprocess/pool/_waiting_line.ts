/*
 * The pool's waiting line: acquires that need a live slot, in arrival order.
 * A place joins once, waits until woken (or its signal aborts), looks again
 * and leaves when it got its slot or gave up. Only the first place may start
 * a process, so a newcomer never overtakes the line; the pool says when the
 * line may move (`wake`), the line never decides.
 */

import { abortable } from "../../../src/_deadline.ts";

/** One acquire's place; `wake` is set while it waits. */
export interface Place {
  wake: (() => void) | undefined;
}

/** The acquires waiting for a live slot, first come first. */
export class WaitingLine {
  readonly #places: Place[] = [];

  /** How many places wait. */
  get length(): number {
    return this.#places.length;
  }

  /**
   * Where a place stands.
   *
   * @param place The place.
   * @returns Its position from 1, or 0 when it is not in the line.
   */
  standing(place: Place): number {
    return this.#places.indexOf(place) + 1;
  }

  /**
   * Puts a place at the end of the line.
   *
   * @param place A place not in the line.
   * @returns Its position (the new length).
   */
  join(place: Place): number {
    return this.#places.push(place);
  }

  /**
   * Takes a place out of the line (a place not in it: nothing happens); when
   * it was the first, every other place looks again (the next may start now).
   *
   * @param place The place.
   */
  leave(place: Place): void {
    const at = this.#places.indexOf(place);
    if (at < 0) return;
    this.#places.splice(at, 1);
    if (at === 0) this.wake();
  }

  /**
   * Waits until the place is woken.
   *
   * @param place A place in the line.
   * @param signal Stops the wait.
   * @returns Once woken.
   * @throws {unknown} `signal.reason` when the signal aborts.
   */
  async wait(place: Place, signal: AbortSignal): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    place.wake = resolve;
    await abortable(promise, signal);
  }

  /** Room may have been made: every waiting place looks again, in arrival order. */
  wake(): void {
    for (const place of this.#places) {
      place.wake?.();
      place.wake = undefined;
    }
  }
}
