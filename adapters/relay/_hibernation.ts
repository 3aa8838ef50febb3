/**
 * Hibernated relay sessions: what a resume needs once a disconnected
 * session's process was closed at the end of its grace, kept in a bounded
 * map (oldest dropped first).
 *
 * @module
 */

import type { SubprocessOptions } from "../subprocess/mod.ts";
import { ownedBy } from "./_access.ts";
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

/** A session-id-keyed, bounded set of hibernated sessions. */
export class HibernatedSessions {
  readonly #limit: number;
  readonly #entries = new Map<string, Hibernated>();

  /** @param limit The most kept; 0 keeps none. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** True when sessions are hibernated at all. */
  get enabled(): boolean {
    return this.#limit > 0;
  }

  /** How many are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Keeps one (again, when its resume failed before its process started),
   * dropping the oldest beyond the bound.
   */
  add(entry: Hibernated): void {
    this.#entries.set(entry.restore.id, entry);
    while (this.#entries.size > this.#limit) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
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
    return entry;
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
