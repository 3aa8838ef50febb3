/**
 * Hibernated relay sessions: what a resume needs once a disconnected
 * session's process was closed at the end of its grace, kept in a bounded
 * map, bounded per owner too: an owner at its bound, or with the map full,
 * loses its own oldest; an owner that holds none when the map is full gets
 * none kept (no other owner's is dropped for it).
 *
 * @module
 */

import type { SubprocessOptions } from "../subprocess/mod.ts";
import { ownedBy } from "./_access.ts";
import { OwnerLru } from "./_owner_lru.ts";
import type { Wake } from "./_relay_session_types.ts";

/** The most unacknowledged output kept with a hibernated session. */
export const HIBERNATED_TAIL_BYTES = 64 * 1024;

/**
 * What a hibernated session keeps: what its resume starts from (the options
 * it ran with, `resume` set; at most {@linkcode HIBERNATED_TAIL_BYTES} of
 * output), who may resume it, and when its old process has gone.
 */
export interface Hibernated extends Wake {
  /** The credential that created it: the only one that may resume it. */
  readonly owner: string;
  /** Resolves when the old process has gone (a resume waits for it). */
  readonly gone: Promise<void>;
}

/** A session-token-keyed set of hibernated sessions, bounded in all and per owner. */
export class HibernatedSessions {
  readonly #enabled: boolean;
  readonly #entries: OwnerLru<Hibernated>;

  /**
   * @param limit The most kept; 0 keeps none.
   * @param perOwner The most kept of one owner.
   */
  constructor(limit: number, perOwner: number) {
    this.#enabled = limit > 0;
    this.#entries = new OwnerLru(limit, perOwner, "refuse");
  }

  /** True when sessions are hibernated at all. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** How many are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Keeps one (again, when its resume failed before its process started):
   * the owner's own oldest goes when it holds its bound, or when all are
   * held; an owner holding none when all are held gets none kept.
   *
   * @param entry The hibernated session.
   * @returns False when it was not kept.
   */
  add(entry: Hibernated): boolean {
    return this.#entries.add(entry.restore.id, entry.owner, entry);
  }

  /**
   * Takes the hibernated session with this token if `owner` owns it (one
   * comparison either way, so another owner's and an unknown one look alike).
   *
   * @param token The session token.
   * @param owner The asking credential's owner.
   */
  take(token: string, owner: string): Hibernated | undefined {
    const entry = this.#entries.get(token);
    if (!ownedBy(entry?.owner, owner)) return undefined;
    this.#entries.delete(token);
    return entry?.value;
  }

  /** Drops them all. */
  clear(): void {
    this.#entries.clear();
  }
}

/**
 * Whether a session with these options can be resumed in a new process
 * later (by this relay, or by another one sharing the store).
 *
 * @param options The options its CLI starts with.
 */
export function hibernatable(options: SubprocessOptions): boolean {
  return options.persistSession !== false && options.noSessionPersistence !== true &&
    options.continue !== true && options.forkSession !== true && options.sessionId === undefined;
}

/**
 * The options of `claude --resume` for a conversation that ran with these
 * options: the same, resumed by the CLI's session id instead of named with it.
 *
 * @param options The options it ran with (or the spawn request's, checked again).
 * @param cliSessionId The CLI's session id.
 */
export function resumeOptions(options: SubprocessOptions, cliSessionId: string): SubprocessOptions {
  const { sessionId: _named, ...rest } = options;
  return { ...rest, resume: cliSessionId };
}
