/**
 * {@linkcode renameSession} and {@linkcode tagSession}: a session's title and
 * tag, kept as the CLI and the official SDK keep them, as metadata lines
 * appended to the transcript (never an edit of what is there).
 *
 * @module
 */

import { cleanText } from "./_checks.ts";
import { checkSessionId, requireTranscript } from "./_paths.ts";
import { appendStored } from "./_store_history.ts";
import { appendEntry } from "./_transcript.ts";
import type { HistoryOptions } from "./history_options.ts";

/* Appends a metadata line to a session: to the store's transcript, or the CLI's file. */
async function appendMetadata(
  id: string,
  entry: { readonly type: string; readonly sessionId: string; readonly [field: string]: unknown },
  options: HistoryOptions,
  action: string,
): Promise<void> {
  options.signal?.throwIfAborted();
  if (options.sessionStore !== undefined) return await appendStored(id, entry, options, action);
  const file = await requireTranscript(id, options, action);
  options.signal?.throwIfAborted();
  await appendEntry(file.file, entry, action);
}

/**
 * Renames a session: appends `{"type":"custom-title","customTitle":…}` to its
 * transcript, the entry the CLI itself writes for `--name` and `/rename`.
 * The last such entry is the title: `listSessions` shows it, the CLI's own
 * `claude --resume` picker shows it, and `claude --resume "<title>"` (or
 * `subprocess({ resume: title })`) finds the session by it. A CLI that runs
 * the session at that moment adopts it too, the next time it rewrites its
 * metadata.
 *
 * The title is trimmed, and control or invisible characters in it become
 * spaces (the official SDK only trims).
 *
 * @param sessionId The session id (a UUID).
 * @param title The new title.
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`: the entry is appended to the store, with a fresh `uuid` and
 * a `timestamp`, as the official SDK does) and `signal`.
 * @returns Nothing, once the line is written.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or the
 * title is empty; `not_found` when no transcript has it; `not_permitted` when the
 * transcript may not be written (the message names the flag).
 * @throws {TypeError} When the id or the title is not a string.
 *
 * @example Name a session for the sidebar
 * ```ts ignore
 * import { renameSession } from "@duplex/claude/history";
 *
 * await renameSession("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", "Fix the login bug", {
 *   dir: Deno.cwd(),
 * });
 * ```
 */
export async function renameSession(
  sessionId: string,
  title: string,
  options: HistoryOptions = {},
): Promise<void> {
  const action = "rename the session";
  const id = checkSessionId(sessionId, action);
  const customTitle = cleanText(title, "title", action);
  await appendMetadata(id, { type: "custom-title", customTitle, sessionId: id }, options, action);
}

/**
 * Tags a session, or clears its tag with `null`: appends
 * `{"type":"tag","tag":…}` (an empty tag clears), as the official SDK does.
 * The CLI reads the last tag entry: its `claude --resume` picker shows it as
 * `#tag`, and a CLI that resumes the session keeps it.
 *
 * The tag is trimmed, and control or invisible characters in it become
 * spaces.
 *
 * @param sessionId The session id (a UUID).
 * @param tag The tag, or `null` to clear it.
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`: the entry is appended to the store, with a fresh `uuid` and
 * a `timestamp`, as the official SDK does) and `signal`.
 * @returns Nothing, once the line is written.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or the
 * tag is empty; `not_found` when no transcript has it; `not_permitted` when the
 * transcript may not be written (the message names the flag).
 * @throws {TypeError} When the id is not a string, or the tag neither a string nor `null`.
 *
 * @example Tag, then untag
 * ```ts ignore
 * import { tagSession } from "@duplex/claude/history";
 *
 * const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * await tagSession(id, "needs-review", { dir: Deno.cwd() });
 * await tagSession(id, null, { dir: Deno.cwd() });
 * ```
 */
export async function tagSession(
  sessionId: string,
  tag: string | null,
  options: HistoryOptions = {},
): Promise<void> {
  const action = tag === null ? "clear the session's tag" : "tag the session";
  const id = checkSessionId(sessionId, action);
  const text = tag === null ? "" : cleanText(tag, "tag", action);
  await appendMetadata(id, { type: "tag", tag: text, sessionId: id }, options, action);
}
