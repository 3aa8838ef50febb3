/**
 * Who owns each CLI conversation the relay started, so that `spawn.resume`
 * opens only the asking owner's own: without it, `claude --resume <id>`
 * would read any transcript the host or the shared store holds, and the id
 * is in every frame the conversation's client receives.
 *
 * - With a session store, the owner is kept there, so that every relay
 *   sharing it knows: key {@linkcode RELAY_SESSIONS_PROJECT_KEY} and as
 *   session id the base64url SHA-256 of `conversation:<CLI session id>`;
 *   entries `{ type: "duplex-relay-conversation", uuid, owner, at }`, the
 *   owner hashed as in the session records; the first one counts.
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
import { Refusal } from "./_policy.ts";
import { isCliSessionId, sha256 } from "./_relay_record.ts";
import { RELAY_SESSIONS_PROJECT_KEY } from "./relay_options.ts";

/** The `type` of a conversation's owner entry. */
export const CONVERSATION_TYPE = "duplex-relay-conversation";

/** Without a store: the most conversations whose owners the relay remembers. */
export const REMEMBERED = 10_000;

/**
 * The store key of a conversation's owner.
 *
 * @param cliSessionId The CLI's session id.
 */
export async function conversationKey(cliSessionId: string): Promise<SessionKey> {
  return {
    projectKey: RELAY_SESSIONS_PROJECT_KEY,
    sessionId: await sha256(`conversation:${cliSessionId}`),
  };
}

/** Where the owners are kept. */
export interface OwnersSettings {
  /** The shared store, if any (then the owners are kept there only). */
  readonly store: SessionStore | undefined;
  /** The bound of each load and append. */
  readonly timeoutMs: number;
  /** Without a store: how many one owner's remembered conversations may be. */
  readonly perOwner: number;
}

/** The owners of the conversations the relay started. */
export class ConversationOwners {
  readonly #store: SessionStore | undefined;
  readonly #timeoutMs: number;
  readonly #local: OwnerLru<true>;

  /** @param settings The store, its bound, and the memory's share per owner. */
  constructor(settings: OwnersSettings) {
    this.#store = settings.store;
    this.#timeoutMs = settings.timeoutMs;
    this.#local = new OwnerLru(REMEMBERED, settings.perOwner, "oldest");
  }

  /**
   * Records the owner of a conversation the relay just named. Resolves when
   * it is kept, or after the bound (a failing store: that conversation cannot
   * be resumed by its id later). Never rejects.
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
    try {
      const [key, hashed] = await Promise.all([conversationKey(cliSessionId), sha256(owner)]);
      const entry = {
        type: CONVERSATION_TYPE,
        uuid: crypto.randomUUID(),
        owner: hashed,
        at: new Date().toISOString(),
      };
      using limit = deadline(this.#timeoutMs);
      await abortable(store.append(key, [entry]), limit.signal);
    } catch {
      // Not kept: only its owner loses (the conversation cannot be resumed by its id).
    }
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
   *
   * @param cliSessionId The id a client asks to resume.
   * @param owner The asking credential's owner.
   * @throws {Refusal} `spawn_failed` when the store does not answer within the bound.
   */
  async owns(cliSessionId: string, owner: string): Promise<boolean> {
    if (!isCliSessionId(cliSessionId)) return false; // a name: the relay names none
    const store = this.#store;
    if (store === undefined) return ownedBy(this.#local.get(cliSessionId)?.owner, owner);
    const [key, hashed] = await Promise.all([conversationKey(cliSessionId), sha256(owner)]);
    let entries;
    try {
      using limit = deadline(this.#timeoutMs);
      entries = await abortable(store.load(key), limit.signal);
    } catch (error) {
      throw new Refusal(
        "spawn_failed",
        `Cannot resume the conversation: the session store did not answer within ` +
          `${this.#timeoutMs} ms (${messageOf(error)}); ` +
          "try again later",
      );
    }
    const first = (entries ?? []).find((entry) =>
      entry.type === CONVERSATION_TYPE && typeof entry.owner === "string"
    );
    return ownedBy(first?.owner as string | undefined, hashed);
  }
}
