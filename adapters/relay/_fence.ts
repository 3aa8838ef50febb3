/**
 * Fencing a conversation across relays that share a session store. A relay
 * that resumes a conversation from the store (its client's connection to
 * another relay was cut, and the balancer sent it elsewhere) raises the
 * conversation's fence to its own epoch before its CLI loads the
 * transcript; a relay that still runs the old CLI (in its grace, or stalled)
 * checks the fence before each transcript append, and once a higher epoch
 * stands it writes nothing more and ends its session: the store's
 * transcript stays what the conversation's current CLI wrote.
 *
 * - Key: the reserved project key `RELAY_SESSIONS_PROJECT_KEY` and as
 *   session id the base64url SHA-256 of `fence:<CLI session id>`; entries
 *   `{ type: "duplex-relay-fence", uuid, epoch, at }`, one per resume in a
 *   new process, so a load is small whatever the conversation's length.
 * - The raiser waits {@linkcode FENCE_SETTLE_MS} after its append: an old
 *   relay's append that passed the check just before lands within it. A
 *   check that took more than half of that (a stalled process, a slow store)
 *   is made again, up to three times, and one the store does not answer fails the append (the
 *   mirror tries again later). (A store with conditional appends would close
 *   the window for good; the `SessionStore` contract has none.)
 * - Input lines have no such window: a relay saves in its record that a
 *   line may be written before it checks the fence (`StoreLink.admitsInput`),
 *   and the raiser reads the record after raising (`_store_wake.ts`), so a
 *   line the old relay writes is one the raiser sees in flight.
 *
 * @module
 */

import { abortable, deadline, sleep } from "../../src/_deadline.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { relayKey } from "./_relay_record.ts";

/** The `type` of a fence entry. */
export const FENCE_TYPE = "duplex-relay-fence";

/** How long a relay that raised a fence waits before its CLI loads the transcript. */
export const FENCE_SETTLE_MS = 250;

/**
 * The store key of a conversation's fence.
 *
 * @param cliSessionId The CLI's session id.
 */
export function fenceKey(cliSessionId: string): Promise<SessionKey> {
  return relayKey(`fence:${cliSessionId}`);
}

/**
 * Raises a conversation's fence to `epoch`: from now on, a relay running it
 * at a lower epoch writes nothing more of its transcript.
 *
 * @param store The shared store.
 * @param cliSessionId The CLI's session id.
 * @param epoch The resuming relay's epoch.
 * @param timeoutMs The bound of the append.
 * @throws {Error} When the store did not take it within the bound.
 */
export async function raiseFence(
  store: SessionStore,
  cliSessionId: string,
  epoch: number,
  timeoutMs: number,
): Promise<void> {
  const key = await fenceKey(cliSessionId);
  const entry = {
    type: FENCE_TYPE,
    uuid: crypto.randomUUID(),
    epoch,
    at: new Date().toISOString(),
  };
  using limit = deadline(timeoutMs);
  await abortable(store.append(key, [entry]), limit.signal);
}

/**
 * Takes a conversation over for a new CLI (a resume from the store, or a
 * `spawn.resume`): raises its fence above every epoch so far, at least to
 * `atLeast`, then waits {@linkcode FENCE_SETTLE_MS} so that an old relay's
 * append in flight lands before the new CLI loads the transcript.
 *
 * @param store The shared store.
 * @param cliSessionId The CLI's session id.
 * @param atLeast The lowest epoch to take (the record's next one).
 * @param timeoutMs The bound of the load and of the append.
 * @returns The epoch the new CLI runs the conversation at.
 * @throws {Error} When the store did not answer within the bound.
 */
export async function takeOver(
  store: SessionStore,
  cliSessionId: string,
  atLeast: number,
  timeoutMs: number,
): Promise<number> {
  const epoch = Math.max(atLeast, await highestFence(store, cliSessionId, timeoutMs) + 1);
  await raiseFence(store, cliSessionId, epoch, timeoutMs);
  await sleep(FENCE_SETTLE_MS);
  return epoch;
}

/**
 * The highest epoch a fence's entries name.
 *
 * @param entries What the store loaded.
 * @returns The epoch, or -1 when no fence was raised.
 */
export function fenceEpoch(entries: readonly SessionStoreEntry[] | null): number {
  let highest = -1;
  for (const entry of entries ?? []) {
    const { type, epoch } = entry as Record<string, unknown>;
    if (type === FENCE_TYPE && Number.isSafeInteger(epoch) && (epoch as number) > highest) {
      highest = epoch as number;
    }
  }
  return highest;
}

/** One relay's view of a conversation's fence, at the epoch it runs the conversation. */
export class Fence {
  readonly #store: SessionStore;
  #epoch: number;
  readonly #timeoutMs: number;
  #key: Promise<SessionKey> | undefined;
  readonly #cliSessionId: string;
  #fenced = false;

  /**
   * @param store The shared store.
   * @param cliSessionId The CLI's session id.
   * @param epoch The epoch this relay runs the conversation at.
   * @param timeoutMs The bound of each check.
   */
  constructor(store: SessionStore, cliSessionId: string, epoch: number, timeoutMs: number) {
    this.#store = store;
    this.#cliSessionId = cliSessionId;
    this.#epoch = epoch;
    this.#timeoutMs = timeoutMs;
  }

  /** The epoch this relay runs the conversation at. */
  get epoch(): number {
    return this.#epoch;
  }

  /** Whether a higher epoch was seen (then it stays so). */
  get fenced(): boolean {
    return this.#fenced;
  }

  /**
   * Whether this relay may still write the conversation's transcript: no
   * fence above its epoch. A check that took longer than half of
   * {@linkcode FENCE_SETTLE_MS} (the process was stalled, or the store slow)
   * is made again (up to three times), since the fence may have been
   * raised meanwhile; the append is to follow at once.
   *
   * @throws {Error} When the store did not answer within the bound: the
   *   append counts as failed (the mirror tries again later, with a new
   *   check).
   */
  async admits(): Promise<boolean> {
    for (let tries = 0; tries < 3; tries++) {
      if (this.#fenced) return false;
      const started = performance.now();
      if (await this.#highest() > this.#epoch) this.#fenced = true;
      if (this.#fenced) return false;
      if (performance.now() - started <= FENCE_SETTLE_MS / 2) return true;
    }
    return true; // slow three times running: a loaded machine, not a stall
  }

  /**
   * Whether no fence stands above this relay's epoch, checked once (for a
   * write whose order the store witnesses otherwise: an input line, see
   * `StoreLink.admitsInput`; a slow check needs no second one).
   *
   * @throws {Error} When the store did not answer within the bound.
   */
  async admitsOnce(): Promise<boolean> {
    if (!this.#fenced && await this.#highest() > this.#epoch) this.#fenced = true;
    return !this.#fenced;
  }

  /**
   * Takes the conversation back: its client came back to this relay, which
   * still runs its CLI, after another relay raised the fence (a resume there
   * that its client then left, before writing anything). Raises the fence
   * one above the highest and runs at that epoch from now on. A store that
   * does not answer is asked again, within the bound.
   *
   * @returns The new epoch; undefined when no higher fence stood, or when
   *   this relay's appends were refused already (its session ends).
   * @throws {Error} When the store did not answer within the bound, or did
   *   not take the raise: whether another relay runs the conversation is not
   *   known, so the client may not resume here until it is (a relay that
   *   resumed it while this one was stalled, its store going down after,
   *   must not find its client's turns answered here again).
   */
  async retake(): Promise<number | undefined> {
    if (this.#fenced) return undefined;
    const highest = await this.#highestWithin(this.#timeoutMs);
    if (highest <= this.#epoch || this.#fenced) return undefined;
    await raiseFence(this.#store, this.#cliSessionId, highest + 1, this.#timeoutMs);
    if (this.#fenced) return undefined;
    this.#epoch = highest + 1;
    return this.#epoch;
  }

  /** Takes this relay off the conversation for good, as a higher fence does. */
  standDown(): void {
    this.#fenced = true;
  }

  /* The fence's highest epoch now (-1: none), its key hashed once. */
  async #highest(timeoutMs = this.#timeoutMs): Promise<number> {
    this.#key ??= fenceKey(this.#cliSessionId);
    return await highestFence(this.#store, this.#cliSessionId, timeoutMs, await this.#key);
  }

  /* `#highest()`, asked again while the store fails, for `timeoutMs` in all. */
  async #highestWithin(timeoutMs: number): Promise<number> {
    const end = performance.now() + timeoutMs;
    for (let pause = 50;; pause = Math.min(pause * 2, 500)) {
      try {
        return await this.#highest(Math.max(1, end - performance.now()));
      } catch (error) {
        if (performance.now() + pause >= end) throw error;
        await sleep(pause);
      }
    }
  }
}

/* The highest epoch a conversation's fence names (-1: none), loaded within the bound. */
async function highestFence(
  store: SessionStore,
  cliSessionId: string,
  timeoutMs: number,
  key?: SessionKey,
): Promise<number> {
  const loading = store.load(key ?? await fenceKey(cliSessionId));
  using limit = deadline(timeoutMs);
  return fenceEpoch(await abortable(loading, limit.signal));
}
