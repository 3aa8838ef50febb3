/**
 * Who owns each CLI conversation the relay started, so that `spawn.resume`
 * opens only the asking owner's own: without it, `claude --resume <id>`
 * would read any transcript the host or the shared store holds, and the id
 * is in every frame the conversation's client receives.
 *
 * - With a session store, the owner is kept there, so that every relay
 *   sharing it knows: key `RELAY_SESSIONS_PROJECT_KEY` and as
 *   session id the base64url SHA-256 of `conversation:<CLI session id>`;
 *   entries `{ type: "duplex-relay-conversation", uuid, owner, at }`, the
 *   owner hashed as in the session records; the first one counts.
 * - A claim the store does not take within its bound (it fails, or is slow)
 *   is kept in this relay's memory and appended again in the background,
 *   the same entry each time, with backoff, until the store takes it
 *   (`_pending_claims.ts`: bounded, {@linkcode REMEMBERED} in all and the
 *   per-owner share, the oldest dropped first and counted). Until then this
 *   relay answers its owner from it: a `spawn.resume` by that owner here
 *   succeeds while the store is down or before it holds the entry; for
 *   anyone else the answer is the one the store alone gives. `close()`
 *   stops the retries after one last attempt.
 * - Without one, the relay remembers the owners of the conversations it
 *   started since it started, in memory, bounded ({@linkcode REMEMBERED}
 *   in all, a share of it per owner, the oldest forgotten first).
 *
 * An unknown id, a name, an id the store does not know, and another owner's
 * id all get the same answer after the same work: one lookup, then one
 * timing-safe comparison.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, deadline } from "../../src/_deadline.ts";
import type { SessionKey, SessionStore } from "../../src/store/session_store.ts";
import { ownedBy } from "./_access.ts";
import { OwnerLru } from "./_owner_lru.ts";
import { type Backoff, PendingClaims } from "./_pending_claims.ts";
import { Refusal } from "./_policy.ts";
import { isCliSessionId, relayKey, sha256 } from "./_relay_record.ts";

/** The `type` of a conversation's owner entry. */
export const CONVERSATION_TYPE = "duplex-relay-conversation";

/**
 * Without a store: the most conversations whose owners the relay remembers;
 * with one: the most claims it keeps while the store has not taken them.
 */
export const REMEMBERED = 10_000;

/**
 * The store key of a conversation's owner.
 *
 * @param cliSessionId The CLI's session id.
 */
export function conversationKey(cliSessionId: string): Promise<SessionKey> {
  return relayKey(`conversation:${cliSessionId}`);
}

/** Where the owners are kept. */
export interface OwnersSettings {
  /** The shared store, if any (then the owners are kept there only). */
  readonly store: SessionStore | undefined;
  /** The bound of each load and append. */
  readonly timeoutMs: number;
  /** How many of one owner's conversations may be remembered (or claims kept). */
  readonly perOwner: number;
  /** With a store: the most claims kept while it has not taken them (default {@linkcode REMEMBERED}). */
  readonly maxPending?: number | undefined;
  /** With a store: told of each kept claim dropped for that bound (the claim is lost). */
  readonly onClaimDropped?: (() => void) | undefined;
  /** With a store: the delays between retries (default `RETRY_BACKOFF`, 100 ms to 5 s). */
  readonly backoff?: Backoff | undefined;
}

/** The owners of the conversations the relay started. */
export class ConversationOwners {
  readonly #store: SessionStore | undefined;
  readonly #timeoutMs: number;
  readonly #local: OwnerLru<true>;
  /** With a store: the claims it has not taken yet, retried. */
  readonly #pending: PendingClaims | undefined;
  /** The claims whose first append is under way. */
  readonly #claiming = new Set<Promise<void>>();
  #closing: Promise<void> | undefined;

  /** @param settings The store, its bound, and the memory's share per owner. */
  constructor(settings: OwnersSettings) {
    this.#store = settings.store;
    this.#timeoutMs = settings.timeoutMs;
    this.#local = new OwnerLru(REMEMBERED, settings.perOwner, "oldest");
    this.#pending = settings.store === undefined ? undefined : new PendingClaims({
      store: settings.store,
      timeoutMs: settings.timeoutMs,
      limit: settings.maxPending ?? REMEMBERED,
      perOwner: settings.perOwner,
      onDropped: settings.onClaimDropped,
      backoff: settings.backoff,
    });
  }

  /** How many claims are kept while the store has not taken them. */
  get pending(): number {
    return this.#pending?.size ?? 0;
  }

  /**
   * Records the owner of a conversation the relay just named. Resolves when
   * the store took it, or after the bound: then it is kept in memory and
   * retried until the store takes it (see the module), and this relay
   * already answers its owner from it. Never rejects.
   *
   * @param cliSessionId The CLI's session id (a fresh UUID).
   * @param owner The starting credential's owner (`Credential.owner`).
   */
  async claim(cliSessionId: string, owner: string): Promise<void> {
    const store = this.#store;
    if (store === undefined) {
      this.#local.add(cliSessionId, owner, true);
      return;
    }
    const claiming = this.#claim(store, cliSessionId, owner);
    this.#claiming.add(claiming);
    try {
      await claiming;
    } catch {
      // The id or the owner could not be hashed: there is nothing to keep.
    } finally {
      this.#claiming.delete(claiming);
    }
  }

  async #claim(store: SessionStore, cliSessionId: string, owner: string): Promise<void> {
    const [key, hashed] = await Promise.all([conversationKey(cliSessionId), sha256(owner)]);
    // The same entry at every attempt: a store keeps an entry with a uuid once.
    const entry = {
      type: CONVERSATION_TYPE,
      uuid: crypto.randomUUID(),
      owner: hashed,
      at: new Date().toISOString(),
    };
    try {
      using limit = deadline(this.#timeoutMs);
      await abortable(store.append(key, [entry]), limit.signal);
    } catch {
      // Not taken (or not in time: it may still land, and a retry then adds nothing).
      this.#pending?.add(cliSessionId, hashed, { key, entry });
    }
  }

  /**
   * Stops retrying the claims the store has not taken: waits for the claims
   * under way, then makes one last attempt at each, all within the store
   * bound (`timeoutMs`). No timer outlives it; those still not taken are
   * lost to the other relays. Idempotent; never rejects.
   *
   * @returns Resolves once no retry is left.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Same as {@linkcode ConversationOwners.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    const pending = this.#pending;
    if (pending === undefined) return;
    using limit = deadline(this.#timeoutMs);
    await abortable(Promise.allSettled([...this.#claiming]), limit.signal).catch(() => {});
    await pending.close(limit.signal);
  }

  /**
   * Refuses a `spawn.resume` of a conversation `owner` does not own, exactly
   * as one of an id nobody owns (see {@linkcode ConversationOwners.owns}).
   *
   * @param cliSessionId The id a client asks to resume.
   * @param owner The asking credential's owner.
   * @throws {Refusal} `unknown_session`; `spawn_failed` when the store does not answer.
   */
  async assertOwned(cliSessionId: string, owner: string): Promise<void> {
    if (await this.owns(cliSessionId, owner)) return;
    throw new Refusal(
      "unknown_session",
      "Cannot spawn with resume: the relay knows no conversation of this credential's owner " +
        "with that session id; start a new session",
    );
  }

  /**
   * Whether `owner` owns the conversation (one lookup and one timing-safe
   * comparison whatever the id: another owner's and an unknown one look alike).
   * The store's owner entry decides; without one, a claim this relay keeps
   * for the store decides for its owner (so it resumes here while the store
   * is down or has not taken the claim yet).
   *
   * @param cliSessionId The id a client asks to resume.
   * @param owner The asking credential's owner.
   * @throws {Refusal} `spawn_failed` when the store does not answer within the bound
   * (and this relay keeps no claim of `owner`'s for the id).
   */
  async owns(cliSessionId: string, owner: string): Promise<boolean> {
    if (!isCliSessionId(cliSessionId)) return false; // a name: the relay names none
    const store = this.#store;
    if (store === undefined) return ownedBy(this.#local.get(cliSessionId)?.owner, owner);
    const [key, hashed] = await Promise.all([conversationKey(cliSessionId), sha256(owner)]);
    let entries;
    let failure: { error: unknown } | undefined;
    try {
      using limit = deadline(this.#timeoutMs);
      entries = await abortable(store.load(key), limit.signal);
    } catch (error) {
      failure = { error };
    }
    const first = (entries ?? []).find((entry) =>
      entry.type === CONVERSATION_TYPE && typeof entry.owner === "string"
    );
    const stored = first?.owner as string | undefined;
    // The store's owner counts; without it (not stored yet, or the store not answering), a
    // claim this relay keeps for the store decides, for its owner only.
    const pending = this.#pending?.owner(cliSessionId);
    if (stored !== undefined && pending !== undefined) this.#pending?.delete(cliSessionId);
    const owned = ownedBy(stored ?? pending, hashed);
    if (owned || failure === undefined) return owned;
    // Another owner's pending claim is answered as an unknown id is when the store is down.
    throw new Refusal(
      "spawn_failed",
      `Cannot resume the conversation: the session store did not answer within ` +
        `${this.#timeoutMs} ms (${messageOf(failure.error)}); ` +
        "try again later",
    );
  }
}
