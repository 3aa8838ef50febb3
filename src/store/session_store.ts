// This module is browser compatible.
/**
 * The `SessionStore` contract: where transcripts live beyond one host. It is
 * the official SDK's (`@anthropic-ai/claude-agent-sdk` 0.3.332, `sdk.d.ts`
 * `SessionStore`, `SessionKey`, `SessionStoreEntry`), so a store written for
 * the official SDK works here unchanged, and ours work there.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import type { SessionSummaryEntry } from "./session_summary.ts";

/**
 * Identifies a session transcript, or a subagent transcript of it, in a store.
 */
export interface SessionKey {
  /**
   * The caller's scope. By default the project folder name the CLI derives
   * from the working directory (`projectKeyOf(cwd)`); multi-tenant
   * deployments set a tenant id or project name.
   */
  readonly projectKey: string;
  /** The CLI's session id. */
  readonly sessionId: string;
  /**
   * Absent for the main transcript; for a subagent's, the path under the
   * session's folder, like `subagents/agent-<id>`. Never the empty string.
   * Opaque to a store: a storage key suffix.
   */
  readonly subpath?: string;
}

/**
 * One JSON line of a transcript, as a store sees it: a `type`, most often a
 * `uuid` (the idempotency key) and an ISO `timestamp`, and the rest opaque.
 * Stores pass entries through; a `JSON.stringify` / `JSON.parse` round trip
 * is the only invariant (key order may change).
 */
export interface SessionStoreEntry {
  /** The line's kind (`user`, `assistant`, `queue-operation`, `custom-title`, …). */
  readonly type: string;
  /** The idempotency key, when the line has one. */
  readonly uuid?: string;
  /** When the CLI wrote it (ISO 8601), when it says. */
  readonly timestamp?: string;
  /** The rest of the line, opaque to a store. */
  readonly [key: string]: unknown;
}

/**
 * Tells whether a value is a transcript entry: a JSON object with a string
 * `type` (what a store keeps, and what a transcript line must be).
 *
 * @param value A parsed line.
 * @returns True for an entry.
 */
export function isSessionStoreEntry(value: unknown): value is SessionStoreEntry {
  return isRecord(value) && typeof value.type === "string";
}

/** A session of a project, as `listSessions` returns it. */
export interface StoredSessionRef {
  /** The session id. */
  readonly sessionId: string;
  /** The last append, integer Unix epoch milliseconds (stamped by the store). */
  readonly mtime: number;
}

/**
 * Where transcripts are mirrored to, and resumed from. The CLI's local
 * transcript stays the source of truth: a store receives a copy after each
 * local write.
 *
 * The rules (the official SDK's):
 * - `append` keeps entries in call order within one process; across
 *   processes, in commit order. An entry with a `uuid` is stored once
 *   (retries and imports replay entries); one without is always appended.
 * - `load` returns every entry of a key, deep-equal to what was appended,
 *   or `null` for a key never written.
 * - `listSessions` (optional) lists a project's main transcripts with their
 *   modification times (any order: the SDK sorts them by `mtime`, newest
 *   first, with a stable sort, and `continue` takes the first). So that this
 *   order is the order of the appends, within one millisecond too, a store
 *   should either stamp each append past every earlier stamp of the project
 *   (the SDK's own `InMemorySessionStore`, ours and the directory store do)
 *   or list sessions that share an `mtime` in append order, newest first
 *   (the PostgreSQL store, whose appends take no lock shared by the
 *   project); the built-in stores list newest first.
 * - `delete` (optional) removes a key, and for a main transcript its
 *   subkeys; without it, deletion is a no-op (append-only stores).
 * - `listSubkeys` (optional) lists the subpaths under a session.
 * - `listSessionSummaries` (optional, the SDK's alpha) returns the summary
 *   of each session of a project, kept by `append` with
 *   `foldSessionSummary` over the entries it stored, the summary's `mtime`
 *   the one `listSessions` gives; a store serialises the fold of one
 *   session (the built-in stores do).
 */
export interface SessionStore {
  /**
   * Mirrors a batch of entries, after the CLI's local write succeeded.
   *
   * @param key The transcript.
   * @param entries The lines, in order.
   */
  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void>;
  /**
   * Loads a whole transcript, for a resume.
   *
   * @param key The transcript.
   * @returns Its entries, or `null` when it was never written.
   */
  load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
  /** Lists a project's sessions with their modification times. */
  listSessions?(projectKey: string): Promise<StoredSessionRef[]>;
  /** Deletes a transcript (a main one with its subkeys). */
  delete?(key: SessionKey): Promise<void>;
  /**
   * Lists the summaries of a project's sessions (those it kept since the
   * store maintains them; a reader loads the others), in any order.
   */
  listSessionSummaries?(projectKey: string): Promise<SessionSummaryEntry[]>;
  /** Lists the subpaths (subagent transcripts) under a session. */
  listSubkeys?(key: { readonly projectKey: string; readonly sessionId: string }): Promise<string[]>;
}
