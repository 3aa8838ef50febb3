/**
 * Hibernated relay sessions: what a resume needs once a disconnected
 * session's process was closed at the end of its grace, kept in a bounded
 * map (oldest dropped first).
 *
 * @module
 */

import type { SpawnRequest } from "../../src/remote/wire.ts";
import { ownedBy } from "./_access.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { OutputEntry } from "./_output_buffer.ts";

/** The most unacknowledged output kept with a hibernated session. */
export const HIBERNATED_TAIL_BYTES = 64 * 1024;

/** What a hibernated session keeps. */
export interface Hibernated {
  /** The session token the client resumes with. */
  readonly id: string;
  /** The credential that created it: the only one that may resume it. */
  readonly owner: string;
  /** The CLI's session id (`--resume`). */
  readonly cliSessionId: string;
  /** The options its process ran with. */
  readonly options: SubprocessOptions;
  /** The spawn request it was started with (for its record in the store). */
  readonly spawn: SpawnRequest;
  /** Its record's epoch in the store (0 without one). */
  readonly epoch: number;
  /** The last output sequence number produced. */
  readonly outSeq: number;
  /** Output after this sequence number is kept (in `tail`); a resume from before it is a gap. */
  readonly keptAfter: number;
  /** The last input sequence number written to the CLI. */
  readonly applied: number;
  /** Output the client had not acknowledged (at most {@linkcode HIBERNATED_TAIL_BYTES}). */
  readonly tail: readonly OutputEntry[];
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
   * Keeps one, dropping the oldest beyond the bound.
   *
   * @returns The dropped ones' count.
   */
  add(entry: Hibernated): number {
    this.#entries.set(entry.id, entry);
    let dropped = 0;
    while (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next().value!;
      this.#entries.delete(oldest);
      dropped++;
    }
    return dropped;
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

  /** Puts back one whose resume failed before its process started. */
  restore(entry: Hibernated): void {
    this.add(entry);
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
