/**
 * The relay's room for sessions: how many it holds and starts, in all
 * (`maxSessions`) and per owner (`maxSessionsPerOwner`), and the refusal of
 * a start beyond either bound.
 *
 * @module
 */

import { Refusal } from "./_policy.ts";

/** The bounds of {@linkcode SessionRoom}. */
export interface RoomLimits {
  /** The most sessions at once, starts in progress included. */
  readonly maxSessions: number;
  /** The most sessions (and starts) of one owner at once. */
  readonly maxSessionsPerOwner: number;
}

/** Counts the sessions and starts of each owner, and refuses one beyond the bounds. */
export class SessionRoom {
  readonly #limits: RoomLimits;
  /** How many sessions the relay holds now. */
  readonly #live: () => number;
  /** Each owner's sessions and starts in progress. */
  readonly #held = new Map<string, number>();
  readonly #starting = new Set<Promise<unknown>>();

  /**
   * An empty room.
   *
   * @param limits The relay's `maxSessions` and `maxSessionsPerOwner`.
   * @param live How many sessions the relay holds now.
   */
  constructor(limits: RoomLimits, live: () => number) {
    this.#limits = limits;
    this.#live = live;
  }

  /**
   * Counts a start in progress until it settles.
   *
   * @param starting The start.
   * @returns The same promise.
   */
  track<T>(starting: Promise<T>): Promise<T> {
    this.#starting.add(starting);
    const forget = () => this.#starting.delete(starting);
    starting.then(forget, forget);
    return starting;
  }

  /**
   * Refuses a start beyond `maxSessionsPerOwner` of the owner's or beyond
   * `maxSessions`.
   *
   * @param owner The credential's owner.
   * @param tracked Whether this start is among those tracked already.
   * @throws {Refusal} `busy`, naming the bound.
   */
  assert(owner: string, tracked = false): void {
    const { maxSessions, maxSessionsPerOwner } = this.#limits;
    const held = this.#held.get(owner) ?? 0;
    if (held >= maxSessionsPerOwner && maxSessionsPerOwner < maxSessions) {
      throw new Refusal(
        "busy",
        `Cannot start a session: this credential's owner holds ${maxSessionsPerOwner} already, ` +
          `the most one owner may (the relay's maxSessionsPerOwner); close one or try again later`,
      );
    }
    const others = this.#starting.size - (tracked ? 1 : 0);
    if (this.#live() + others >= maxSessions) {
      throw new Refusal(
        "busy",
        `Cannot start a session: the relay runs its maximum of ${maxSessions}; try again later`,
      );
    }
  }

  /**
   * Counts one more session (or start) of an owner.
   *
   * @param owner The owner.
   * @returns The function that counts it off (idempotent).
   */
  hold(owner: string): () => void {
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.#held.get(owner)! - 1;
      if (left === 0) this.#held.delete(owner);
      else this.#held.set(owner, left);
    };
  }

  /**
   * Waits for every start in progress to settle.
   *
   * @returns Resolves once none is left (whatever their outcome).
   */
  async started(): Promise<void> {
    await Promise.allSettled([...this.#starting]);
  }
}
