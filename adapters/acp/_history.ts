/**
 * A session's history as the `session/update`s a `session/load` replays
 * (from the CLI's transcript files, or a `SessionStore`), and the sessions a
 * `session/list` shows.
 *
 * @module
 */

import type { SessionUpdate } from "./_acp.ts";
import type { SessionStore } from "../../mod.ts";
import { getSessionMessages, listSessions } from "../subprocess/history/mod.ts";
import { UpdateMapper } from "./_updates.ts";

/**
 * The updates that replay a session's history.
 *
 * @param session Its id and folder.
 * @param store The store to read, instead of the CLI's files.
 * @returns The updates, oldest first.
 */
export async function loadHistory(
  session: { readonly id: string; readonly cwd: string },
  store: SessionStore | undefined,
): Promise<SessionUpdate[]> {
  const messages = await getSessionMessages(session.id, {
    dir: session.cwd,
    ...(store ? { sessionStore: store } : {}),
  });
  const mapper = new UpdateMapper({ cwd: session.cwd });
  return messages.flatMap((message) => mapper.history(message));
}

/**
 * The sessions of a folder (every folder when `cwd` is absent), newest first.
 *
 * @param cwd The folder.
 * @param store The store to list, instead of the CLI's files.
 * @returns ACP session infos.
 */
export async function storedSessions(
  cwd: string | undefined,
  store: SessionStore | undefined,
): Promise<{ sessionId: string; cwd: string; title: string; updatedAt: string }[]> {
  const sessions = await listSessions({
    ...(cwd === undefined ? {} : { dir: cwd }),
    ...(store ? { sessionStore: store } : {}),
  });
  return sessions.flatMap((session) => {
    const folder = session.cwd ?? cwd;
    if (folder === undefined) return [];
    return [{
      sessionId: session.sessionId,
      cwd: folder,
      title: session.summary.replace(/\s+/g, " ").trim().slice(0, 256),
      updatedAt: new Date(session.lastModified).toISOString(),
    }];
  });
}
