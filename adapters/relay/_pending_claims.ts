/**
 * The conversation owner claims the session store did not take (it failed
 * or did not answer within its bound), kept in memory and appended again in
 * the background until it does:
 *
 * - Bounded: at most `limit` claims in all and `perOwner` of one owner, the
 *   oldest dropped first ({@linkcode OwnerLru}), so a store that is down for
 *   long cannot grow the memory, and one owner's starts drop its own claims,
 *   never another's. Each claim dropped is told (`onDropped`).
 * - Retried with exponential backoff and equal jitter
 *   ({@linkcode RETRY_BACKOFF}: 100 ms, doubling to 5 s, back to 100 ms
 *   after an append that lands), one timer at a time. A round tries the
 *   claims oldest first and stops at the first failure (the store is likely
 *   still down); the failed claim goes last, so one the store refuses for
 *   reasons of its own does not hold back the others.
 * - Every attempt appends the same entry (same `uuid`, same `at`): the
 *   `SessionStore` contract stores an entry with a `uuid` once per key, so a
 *   retry after an append that landed but was not answered in time adds
 *   nothing (and were a store to keep both, the first owner entry counts
 *   and both name the same owner).
 * - `close()` stops the retries and makes one last attempt at each claim,
 *   within the caller's signal; no timer outlives it.
 *
 * @module
 */

import { abortable, deadline, sleep } from "../../src/_deadline.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { OwnerLru } from "./_owner_lru.ts";

/** One claim: where, and what, to append. */
export interface PendingClaim {
  /** The conversation's owner key (`conversationKey`). */
  readonly key: SessionKey;
  /** The owner entry, appended unchanged at every attempt. */
  readonly entry: SessionStoreEntry;
}

/** The delays between retry rounds: `initialMs`, doubling to `maxMs`. */
export interface Backoff {
  /** The first delay, and the one after an append that landed. */
  readonly initialMs: number;
  /** The longest delay. */
  readonly maxMs: number;
}

/** The retries' backoff: 100 ms doubling to 5 s (each delay jittered to half of it and up). */
export const RETRY_BACKOFF: Backoff = { initialMs: 100, maxMs: 5000 };

/** What {@linkcode PendingClaims} appends to, and how much it keeps. */
export interface PendingClaimsSettings {
  /** The shared store. */
  readonly store: SessionStore;
  /** The bound of each append. */
  readonly timeoutMs: number;
  /** The most claims kept in all. */
  readonly limit: number;
  /** The most claims of one owner kept. */
  readonly perOwner: number;
  /** Told of each claim dropped for the bound (it is then lost). */
  readonly onDropped?: (() => void) | undefined;
  /** The delays between rounds (default {@linkcode RETRY_BACKOFF}). */
  readonly backoff?: Backoff | undefined;
}

/** Claims waiting for the store, retried in the background until it takes them. */
export class PendingClaims {
  readonly #store: SessionStore;
  readonly #timeoutMs: number;
  readonly #backoff: Backoff;
  readonly #onDropped: (() => void) | undefined;
  /** By CLI session id, owned by the hashed owner, oldest first. */
  readonly #claims: OwnerLru<PendingClaim>;
  readonly #stop = new AbortController();
  #retrying: Promise<void> | undefined;

  /** @param settings The store, its bound, the bounds on memory, the drop hook. */
  constructor(settings: PendingClaimsSettings) {
    this.#store = settings.store;
    this.#timeoutMs = settings.timeoutMs;
    this.#backoff = settings.backoff ?? RETRY_BACKOFF;
    this.#onDropped = settings.onDropped;
    this.#claims = new OwnerLru(settings.limit, settings.perOwner, "oldest");
  }

  /** How many claims wait for the store. */
  get size(): number {
    return this.#claims.size;
  }

  /**
   * The hashed owner of a waiting claim.
   *
   * @param cliSessionId The CLI's session id.
   * @returns Undefined when none waits for it.
   */
  owner(cliSessionId: string): string | undefined {
    return this.#claims.get(cliSessionId)?.owner;
  }

  /**
   * Keeps a claim the store did not take, and retries it (unless closed:
   * then it is only kept, for this relay's answers).
   *
   * @param cliSessionId The CLI's session id.
   * @param hashedOwner The owner, hashed as in the entry.
   * @param claim The key and the entry.
   */
  add(cliSessionId: string, hashedOwner: string, claim: PendingClaim): void {
    const before = this.#claims.size + (this.#claims.get(cliSessionId) === undefined ? 1 : 0);
    const kept = this.#claims.add(cliSessionId, hashedOwner, claim);
    // OwnerLru drops at most one (the owner's oldest, or the oldest of all) to keep one.
    const dropped = before - this.#claims.size;
    for (let i = 0; i < dropped; i++) this.#onDropped?.();
    if (kept && !this.#stop.signal.aborted) this.#retrying ??= this.#retry();
  }

  /**
   * Forgets a claim (the store holds the conversation's owner).
   *
   * @param cliSessionId The CLI's session id.
   */
  delete(cliSessionId: string): void {
    this.#claims.delete(cliSessionId);
  }

  /**
   * Stops the retries, then makes one last attempt at each claim (oldest
   * first) until `signal` aborts. Those the store still did not take stay
   * kept, never retried. Idempotent in effect; never rejects.
   *
   * @param signal Bounds the last attempt.
   */
  async close(signal: AbortSignal): Promise<void> {
    this.#stop.abort();
    await this.#retrying;
    for (const id of this.#claims.keys()) {
      if (signal.aborted) return;
      await this.#attempt(id, signal);
    }
  }

  async #retry(): Promise<void> {
    const { initialMs, maxMs } = this.#backoff;
    const signal = this.#stop.signal;
    let delay = initialMs;
    try {
      while (this.#claims.size > 0) {
        await sleep(delay / 2 + Math.random() * delay / 2, { signal });
        delay = await this.#round(signal) ? initialMs : Math.min(delay * 2, maxMs);
      }
    } catch {
      // Stopped (close): it makes the last attempt.
    } finally {
      this.#retrying = undefined;
    }
  }

  /** One attempt at each claim, oldest first, up to the first failure; true if one landed. */
  async #round(signal: AbortSignal): Promise<boolean> {
    let landed = false;
    for (const id of this.#claims.keys()) {
      if (this.#claims.get(id) === undefined) continue; // dropped meanwhile
      if (!await this.#attempt(id, signal)) {
        signal.throwIfAborted();
        const claim = this.#claims.get(id);
        if (claim !== undefined) this.#claims.add(id, claim.owner, claim.value); // goes last
        return landed;
      }
      landed = true;
    }
    return landed;
  }

  /** Appends one claim (the same entry every time); true once the store took it. */
  async #attempt(id: string, signal: AbortSignal): Promise<boolean> {
    const claim = this.#claims.get(id)?.value;
    if (claim === undefined) return true; // forgotten meanwhile (stored, or dropped)
    try {
      using limit = deadline(this.#timeoutMs, { signal });
      await abortable(this.#store.append(claim.key, [claim.entry]), limit.signal);
    } catch {
      return false;
    }
    if (this.#claims.get(id)?.value === claim) this.#claims.delete(id);
    return true;
  }
}
