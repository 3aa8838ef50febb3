/**
 * {@linkcode listSessions}: the sessions of a project folder (or of all of
 * them), newest first, a page at a time.
 *
 * @module
 */

import { explainFsError, projectDirs, statTranscript, type TranscriptFile } from "./_paths.ts";
import { pageBound } from "./_checks.ts";
import { summarize } from "./_summary.ts";
import { withArchived } from "./_archive.ts";
import { readTranscript } from "./_transcript.ts";
import { projectKeyFor, storedInfo, storeOf, summaryInfo } from "./_store_history.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import type { SessionSummaryEntry } from "../../../src/store/session_summary.ts";
import type { HistoryOptions } from "./history_options.ts";
import { DuplexError } from "../../../src/errors.ts";
import type { StoredSessionInfo } from "./stored_session_info.ts";

/** Options of {@linkcode listSessions}. */
export interface ListSessionsOptions extends HistoryOptions {
  /**
   * The most sessions to return.
   *
   * @default {Infinity}
   */
  readonly limit?: number;
  /**
   * How many sessions of the sorted list to skip first (for paging).
   *
   * @default {0}
   */
  readonly offset?: number;
}

const TRANSCRIPT_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

async function transcriptsIn(dir: string, action: string): Promise<TranscriptFile[]> {
  const found: TranscriptFile[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      const id = TRANSCRIPT_NAME.exec(entry.name)?.[1];
      if (id === undefined || !entry.isFile) continue; // links and other files are not ours
      const file = await statTranscript(id.toLowerCase(), dir, action);
      if (file) found.push(file);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return found;
    }
    throw explainFsError(error, action, dir, "read");
  }
  return found;
}

/**
 * Lists the stored sessions of a project folder (`dir`), or of every
 * project folder, sorted by last modification, newest first; `offset` and
 * `limit` take a page of that list.
 *
 * As in the official SDK, sub-agent transcripts and files without any
 * prompt are left out, and `summary` is the title to show. Sessions run
 * through the SDK protocol (by `DuplexSession` or the official SDK) are
 * listed, as the SDK's default `includeProgrammatic: true` does; the CLI's
 * own `claude --resume` picker hides them and shows only sessions a person
 * started in its terminal interface. Files are sorted
 * by their time first and read only until the page is full, so a page of a
 * long history costs little. Lines that cannot be read are skipped (see
 * `onSkip` and `skippedLines`); a file that is not `<uuid>.jsonl`, a link,
 * or empty is not a session and is left out.
 *
 * With `sessionStore`, lists the store's sessions of the project key
 * (`projectKey`, else that of `dir` or of the current directory): the
 * store's `listSessions`, newest `mtime` first (sessions of one `mtime` in
 * the store's order, as the official SDK's stable sort keeps them). When
 * the store keeps summaries (`listSessionSummaries`), each session's entry
 * comes from its summary, one call for the whole list (without `fileSize`,
 * `costUsd` and `forkedFrom`, which a summary does not keep: read them with
 * `getSessionInfo`); a session without a summary, or whose summary is older
 * than its listed `mtime`, is loaded, as the official SDK does. Files mark
 * archived sessions (`archived`); a store does not hold the mark.
 *
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`), the page (`limit`, `offset`), `signal`, `onSkip`.
 * @returns The sessions, newest first.
 * @throws {DuplexError} `invalid_argument` for a negative or fractional
 * `limit` / `offset`, or a `sessionStore` without `listSessions`;
 * `not_permitted` when a folder may not be read (the message names the flag).
 * @throws {TypeError} When `dir`, `configDir`, `limit` or `offset` has the wrong type.
 *
 * @example A sidebar of the ten newest sessions of this folder
 * ```ts ignore
 * import { listSessions } from "@duplex/claude/history";
 *
 * for (const session of await listSessions({ dir: Deno.cwd(), limit: 10 })) {
 *   const when = new Date(session.lastModified).toLocaleString();
 *   console.log(`${session.summary} (${when})${session.tag ? ` #${session.tag}` : ""}`);
 * }
 * ```
 */
export async function listSessions(
  options: ListSessionsOptions = {},
): Promise<StoredSessionInfo[]> {
  const action = "list sessions";
  const limit = pageBound("limit", options.limit, Infinity, action);
  const offset = pageBound("offset", options.offset, 0, action);
  options.signal?.throwIfAborted();
  if (options.sessionStore !== undefined) return await listStored(options, limit, offset, action);
  const files: TranscriptFile[] = [];
  for (const dir of await projectDirs(options, action)) {
    options.signal?.throwIfAborted();
    files.push(...await transcriptsIn(dir, action));
  }
  files.sort((a, b) => b.mtime - a.mtime || a.sessionId.localeCompare(b.sessionId));
  const seen = new Set<string>();
  const page: StoredSessionInfo[] = [];
  let skip = offset;
  for (const file of files) {
    if (page.length >= limit) break;
    if (seen.has(file.sessionId)) continue;
    let transcript;
    try {
      transcript = await readTranscript(file.file, options, action);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue; // deleted while we listed
      throw error;
    }
    const info = await withArchived(summarize(file, transcript), file, transcript.entries);
    if (!info) continue;
    seen.add(file.sessionId);
    if (skip > 0) {
      skip--;
      continue;
    }
    page.push(info);
  }
  return page;
}

/** A session to list from a store: its time, and its entry when its summary gave one. */
interface Candidate {
  readonly sessionId: string;
  readonly mtime: number;
  readonly summary?: SessionSummaryEntry;
}

/*
 * The store's sessions, newest first (a stable sort, as the SDK's: sessions
 * of one mtime keep the store's order). With `listSessionSummaries`, as the
 * SDK reads them: a summary older than the session's listed mtime is stale
 * and the session is loaded, as is a listed session without a summary; a
 * summary of a session `listSessions` does not list is left out.
 */
async function candidates(store: SessionStore, projectKey: string): Promise<Candidate[]> {
  const refs = await store.listSessions!(projectKey);
  if (typeof store.listSessionSummaries !== "function") {
    return refs.slice().sort((a, b) => b.mtime - a.mtime);
  }
  const summaries = new Map<string, SessionSummaryEntry>();
  for (const summary of await store.listSessionSummaries(projectKey)) {
    summaries.set(summary.sessionId, summary);
  }
  const found = refs.map((ref): Candidate => {
    const summary = summaries.get(ref.sessionId);
    return summary && summary.mtime >= ref.mtime
      ? { sessionId: ref.sessionId, mtime: summary.mtime, summary }
      : ref;
  });
  return found.sort((a, b) => b.mtime - a.mtime);
}

/** The page of a store's sessions, newest first (the files' rules: unlisted ones do not count). */
async function listStored(
  options: ListSessionsOptions,
  limit: number,
  offset: number,
  action: string,
): Promise<StoredSessionInfo[]> {
  const store = storeOf(options, action);
  if (typeof store.listSessions !== "function") {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: the session store has no listSessions method`,
    );
  }
  const projectKey = await projectKeyFor(options, action);
  const page: StoredSessionInfo[] = [];
  let skip = offset;
  for (const candidate of await candidates(store, projectKey)) {
    if (page.length >= limit) break;
    options.signal?.throwIfAborted();
    let info: StoredSessionInfo | undefined;
    if (candidate.summary) info = summaryInfo(candidate.summary);
    else {
      const entries = await store.load({ projectKey, sessionId: candidate.sessionId });
      info = entries && entries.length > 0
        ? storedInfo(candidate.sessionId, entries, candidate.mtime)
        : undefined;
    }
    if (!info) continue;
    if (skip > 0) {
      skip--;
      continue;
    }
    page.push(info);
  }
  return page;
}
