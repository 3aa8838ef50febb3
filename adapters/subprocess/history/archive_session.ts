/**
 * {@linkcode archiveSession} and {@linkcode unarchiveSession}: hide a
 * session from a sidebar's default view and bring it back, where the
 * official SDK keeps the mark (a file beside the transcript).
 *
 * @module
 */

import { DuplexError } from "../../../src/errors.ts";
import { writeMark } from "./_archive.ts";
import {
  checkSessionId,
  noTranscript,
  projectDirs,
  statTranscript,
  type TranscriptFile,
} from "./_paths.ts";
import type { HistoryOptions } from "./history_options.ts";

/* Every transcript of the session in the folders `options` names (a copy per project folder). */
async function everyTranscript(
  id: string,
  options: HistoryOptions,
  action: string,
): Promise<TranscriptFile[]> {
  const found: TranscriptFile[] = [];
  for (const dir of await projectDirs(options, action)) {
    options.signal?.throwIfAborted();
    const file = await statTranscript(id, dir, action);
    if (file) found.push(file);
  }
  if (found.length > 0) return found;
  throw noTranscript(id, options, action);
}

async function setArchived(
  sessionId: string,
  archived: boolean,
  options: HistoryOptions,
): Promise<void> {
  const action = archived ? "archive the session" : "unarchive the session";
  const id = checkSessionId(sessionId, action);
  if (options.sessionStore !== undefined) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: a session store holds transcript entries, and the archive mark is ` +
        "not one (the CLI would read it back as a transcript line, a resume would write it " +
        "as a transcript file); archive the CLI's files (configDir, dir)",
    );
  }
  options.signal?.throwIfAborted();
  for (const transcript of await everyTranscript(id, options, action)) {
    await writeMark(transcript, archived, action);
  }
}

/**
 * Archives a session, as the official SDK does: the transcript stays, and
 * {@linkcode listSessions} / {@linkcode getSessionInfo} still give it, with
 * `archived: true`. A prompt sent in the session later unarchives it. The
 * transcript is not changed and a process running the session is not
 * stopped: the mark is the file `<projectDir>/<sessionId>/archived.json`
 * (`{"archived":true,"at":"<time>","by":"sdk"}`, mode 0600), written in
 * every project folder that holds the session.
 *
 * Like the SDK, it refuses a `sessionStore`: a store holds transcript
 * entries, and the mark is not one (an entry would reach the CLI as a
 * transcript line on resume, a subkey would be written out as a subagent
 * transcript).
 *
 * @param sessionId The session id (a UUID).
 * @param options Where to look (`dir`, `configDir`), `signal`.
 * @returns Nothing, once marked.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or a
 * `sessionStore` is given; `not_found` when no transcript has the session;
 * `not_permitted` when the folder may not be written.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example Archive, then list with the archived ones apart
 * ```ts ignore
 * import { archiveSession, listSessions } from "@duplex/claude/history";
 *
 * await archiveSession("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", { dir: Deno.cwd() });
 * const sessions = await listSessions({ dir: Deno.cwd() });
 * const shown = sessions.filter((session) => session.archived !== true);
 * ```
 */
export async function archiveSession(
  sessionId: string,
  options: HistoryOptions = {},
): Promise<void> {
  await setArchived(sessionId, true, options);
}

/**
 * Unarchives a session: {@linkcode listSessions} then gives it with
 * `archived: false` (the mark file says so, as the official SDK writes it).
 *
 * @param sessionId The session id (a UUID).
 * @param options Where to look (`dir`, `configDir`), `signal`.
 * @returns Nothing, once marked.
 * @throws {DuplexError} As {@linkcode archiveSession}.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example Bring a session back
 * ```ts ignore
 * import { unarchiveSession } from "@duplex/claude/history";
 *
 * await unarchiveSession("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", { dir: Deno.cwd() });
 * ```
 */
export async function unarchiveSession(
  sessionId: string,
  options: HistoryOptions = {},
): Promise<void> {
  await setArchived(sessionId, false, options);
}
