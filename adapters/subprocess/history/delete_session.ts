/**
 * {@linkcode deleteSession}: removes a stored session.
 *
 * @module
 */

import { checkSessionId, explainFsError, requireTranscript } from "./_paths.ts";
import { requireStored, storeOf } from "./_store_history.ts";
import type { HistoryOptions } from "./history_options.ts";

/**
 * Deletes a session, as the official SDK does: its transcript
 * `<sessionId>.jsonl` and the folder `<sessionId>/` beside it (sub-agent
 * transcripts, the CLI's title file, large tool outputs). It does not stop a
 * process that runs the session: close that first, or the CLI writes a new
 * transcript with its next line.
 *
 * @param sessionId The session id (a UUID).
 * With `sessionStore`, the store's `delete` removes the session and its
 * subkeys; a store without `delete` is append-only and nothing happens
 * (the official SDK's rule); an unknown session throws as it does over files.
 *
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`) and `signal`.
 * @returns Nothing, once both are gone.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID;
 * `not_found` when no transcript has it (a second delete of the same session
 * throws so);
 * `not_permitted` when the files may not be removed (the message names the
 * flag). When the folder cannot be removed, the transcript is already gone.
 * @throws {TypeError} When the id is not a string.
 *
 * @example Delete a session
 * ```ts ignore
 * import { deleteSession } from "@duplex/claude/history";
 *
 * await deleteSession("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", { dir: Deno.cwd() });
 * ```
 */
export async function deleteSession(
  sessionId: string,
  options: HistoryOptions = {},
): Promise<void> {
  const action = "delete the session";
  const id = checkSessionId(sessionId, action);
  options.signal?.throwIfAborted();
  if (options.sessionStore !== undefined) {
    const store = storeOf(options, action);
    if (!store.delete) return; // an append-only store: deleting is a no-op (the contract)
    const { key } = await requireStored(id, options, action);
    return await store.delete(key);
  }
  const file = await requireTranscript(id, options, action);
  options.signal?.throwIfAborted();
  try {
    await Deno.remove(file.file);
  } catch (error) {
    throw explainFsError(error, action, file.file, "write");
  }
  const folder = `${file.projectDir}/${id}`;
  try {
    const info = await Deno.lstat(folder);
    await Deno.remove(folder, { recursive: info.isDirectory });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw explainFsError(error, action, folder, "write");
  }
}
