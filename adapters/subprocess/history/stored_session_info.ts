/**
 * {@linkcode getSessionInfo} and {@linkcode StoredSessionInfo}: what a
 * session list shows of one stored session.
 *
 * @module
 */

import { checkSessionId, findTranscript } from "./_paths.ts";
import { loadStored, storedInfo, storedMtime } from "./_store_history.ts";
import { summarize } from "./_summary.ts";
import { withArchived } from "./_archive.ts";
import { readTranscript } from "./_transcript.ts";
import type { HistoryOptions } from "./history_options.ts";

/**
 * One session as its transcript records it: the official SDK's
 * `SDKSessionInfo` (same field names), plus `aiTitle`, `lastPrompt`,
 * `costUsd`, `forkedFrom`, `file` and `skippedLines`.
 *
 * Named `StoredSessionInfo` because `SessionInfo` of `@duplex/claude` is the
 * live session's `initialize` reply.
 */
export interface StoredSessionInfo {
  /** The session id (a UUID): `subprocess({ resume: sessionId })` continues it. */
  readonly sessionId: string;
  /**
   * The title to show: `customTitle`, else `aiTitle`, else `lastPrompt`, else
   * the CLI's summary, else `firstPrompt`.
   */
  readonly summary: string;
  /**
   * When the transcript last changed, in milliseconds since the epoch: the
   * file's time, or over a `sessionStore` the store's `mtime` (without its
   * `listSessions`, the last entry's timestamp, as the official SDK does).
   */
  readonly lastModified: number;
  /**
   * The transcript's size in bytes (over a `sessionStore`: of its entries as
   * JSONL); absent when `listSessions` read the session from the store's
   * summaries (`listSessionSummaries`), which do not keep it, as in the SDK.
   */
  readonly fileSize?: number;
  /** The title set by {@linkcode renameSession}, the CLI's `--name` or `/rename` (the last one). */
  readonly customTitle?: string;
  /** A title the CLI generated, if it made one. */
  readonly aiTitle?: string;
  /** The first prompt a person typed (at most 200 characters, newlines as spaces). */
  readonly firstPrompt?: string;
  /** The last prompt, as the CLI records it (at most 200 characters). */
  readonly lastPrompt?: string;
  /** The tag set by {@linkcode tagSession}; absent when none or cleared. */
  readonly tag?: string;
  /** The git branch last recorded (the CLI writes `HEAD` outside a repository). */
  readonly gitBranch?: string;
  /** The working directory the session ran in. */
  readonly cwd?: string;
  /** When the session started (its first entry's time), in milliseconds since the epoch. */
  readonly createdAt?: number;
  /**
   * The session's total cost in USD as the CLI last recorded it (its
   * `cost-state` entry, written when a process of the session ends; it
   * counts every process that ran the session, resumes included). Absent,
   * like `forkedFrom`, when listed from a store's summaries.
   */
  readonly costUsd?: number;
  /** The session this one was forked from ({@linkcode forkSession}). */
  readonly forkedFrom?: string;
  /**
   * Whether the session is archived ({@linkcode archiveSession}): `false`
   * once unarchived, or once a prompt was sent in it after it was archived;
   * absent when it never was, and over a `sessionStore` (as in the SDK).
   */
  readonly archived?: boolean;
  /** The transcript's path; the empty string over a `sessionStore` (it has no file). */
  readonly file: string;
  /** How many lines of the transcript could not be read (see `onSkip`). */
  readonly skippedLines: number;
}

/**
 * Reads what a session list shows of one session. Reads the whole
 * transcript (the official SDK reads its first and last 64 KiB, which can
 * miss a title set long ago).
 *
 * As in the official SDK, an unknown session or one with nothing to show
 * (a sub-agent's transcript, a file without any prompt) gives `undefined`.
 * Unlike it, an id that is not a UUID throws, because it is a mistake of the
 * caller, not a missing session.
 *
 * @param sessionId The session id (a UUID).
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`), `signal`, `onSkip`.
 * @returns The session's info, or `undefined` when no transcript has it.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID;
 * `not_permitted` when a file may not be read (the message names the flag).
 * @throws {TypeError} When the id, `dir` or `configDir` is not a string.
 *
 * @example Find a session's title
 * ```ts ignore
 * import { getSessionInfo } from "@duplex/claude/history";
 *
 * const info = await getSessionInfo("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", { dir: Deno.cwd() });
 * console.log(info?.summary ?? "no such session");
 * ```
 */
export async function getSessionInfo(
  sessionId: string,
  options: HistoryOptions = {},
): Promise<StoredSessionInfo | undefined> {
  const action = "read the session's info";
  const id = checkSessionId(sessionId, action);
  options.signal?.throwIfAborted();
  if (options.sessionStore !== undefined) {
    const stored = await loadStored(id, options, action);
    if (!stored) return undefined;
    return storedInfo(id, stored.entries, await storedMtime(stored.key, options, action));
  }
  const file = await findTranscript(id, options, action);
  if (!file) return undefined;
  const transcript = await readTranscript(file.file, options, action);
  return await withArchived(summarize(file, transcript), file, transcript.entries);
}
