/**
 * The sessions the CLI has stored: list them, read their conversations
 * and their subagents', rename, tag, archive, fork and delete them, in the CLI's own files
 * (`<configDir>/projects/<folder>/<sessionId>.jsonl`) or in a
 * `SessionStore` (`sessionStore`); a store kept in a folder
 * ({@linkcode DirectorySessionStore}); and moving a session between the two
 * ({@linkcode importSessionToStore}, {@linkcode materializeSession}).
 *
 * The functions read and write what the CLI reads and writes, as the
 * official SDK does: metadata is appended (never an edit of what is there),
 * bad lines are skipped and reported (`onSkip`), never fatal.
 *
 * Its parts (in `adapters/subprocess/history/`, the store in
 * `adapters/subprocess/store/`):
 *
 * | File | What it owns |
 * | --- | --- |
 * | `history_options.ts` | `HistoryOptions` (where to look, `sessionStore`, `signal`, `onSkip`) and `SkippedLine` |
 * | `list_sessions.ts` | `listSessions`: a project's sessions (or all), newest first, a page at a time |
 * | `stored_session_info.ts` | `getSessionInfo` and `StoredSessionInfo`, what a list shows of one session |
 * | `session_messages.ts` | `getSessionMessages`: the conversation as `user` / `assistant` / `system` messages |
 * | `session_metadata.ts` | `renameSession`, `tagSession`: title and tag lines appended |
 * | `fork_session.ts` | `forkSession`: a new session holding the conversation up to a message |
 * | `delete_session.ts` | `deleteSession` |
 * | `subagents.ts` | `listSubagents`, `getSubagentMessages`: the subagents a session ran (Task) and their conversations |
 * | `archive_session.ts` | `archiveSession`, `unarchiveSession`: the SDK's archive mark beside the transcript |
 * | `_archive.ts` | the mark file (`<sessionId>/archived.json`), reading it, and the prompt that lifts it |
 * | `_paths.ts` | the configuration folder, a directory's project folder, a session's transcript; their errors |
 * | `_transcript.ts` | reading a transcript (bad lines skipped), appending a line, writing a whole file |
 * | `_chain.ts` | the conversation a transcript holds: the path from the root to the newest leaf |
 * | `_summary.ts` | a session's title, times, tag, branch and cost, as the SDK picks them |
 * | `_store_history.ts` | the same functions over a `SessionStore` |
 * | `_checks.ts` | page bounds, titles and tags |
 * | `store/directory_session_store.ts` | `DirectorySessionStore`: a `SessionStore` in a folder, one JSONL file per key |
 * | `store/import_session.ts` | `importSessionToStore`: a session of the CLI's files copied into a store |
 * | `store/materialize_session.ts` | `materializeSession`: a stored session written as the CLI's files, to resume |
 *
 * Permissions: `--allow-read` (and `--allow-write` to change anything) for
 * the CLI's configuration folder, `--allow-env` for `HOME` /
 * `CLAUDE_CONFIG_DIR`; nothing over a `sessionStore` with `projectKey`.
 *
 * @example A stored session: listed, renamed, read back
 * ```ts
 * import { InMemorySessionStore } from "@duplex/claude";
 * import { getSessionMessages, listSessions, renameSession } from "@duplex/claude/history";
 * import assert from "node:assert/strict";
 *
 * // A transcript as the CLI mirrors it into a store (written by hand here).
 * const store = new InMemorySessionStore();
 * const where = { sessionStore: store, projectKey: "-home-me-app" };
 * const sessionId = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * await store.append({ projectKey: where.projectKey, sessionId }, [
 *   {
 *     type: "user", uuid: "0b5f0c1e-0000-4000-8000-000000000001", parentUuid: null, sessionId,
 *     timestamp: "2026-01-01T10:00:00.000Z", message: { role: "user", content: "Say hi." },
 *   },
 *   {
 *     type: "assistant", uuid: "0b5f0c1e-0000-4000-8000-000000000002",
 *     parentUuid: "0b5f0c1e-0000-4000-8000-000000000001", sessionId,
 *     timestamp: "2026-01-01T10:00:01.000Z",
 *     message: { role: "assistant", content: [{ type: "text", text: "Hi!" }] },
 *   },
 * ]);
 *
 * await renameSession(sessionId, "Greeting", where);
 * const [info] = await listSessions(where);
 * assert.equal(info?.summary, "Greeting");
 * const messages = await getSessionMessages(sessionId, where);
 * assert.deepEqual(messages.map((message) => message.type), ["user", "assistant"]);
 * ```
 *
 * @module
 */

export { listSessions, type ListSessionsOptions } from "./list_sessions.ts";
export { getSessionInfo, type StoredSessionInfo } from "./stored_session_info.ts";
export {
  getSessionMessages,
  type GetSessionMessagesOptions,
  type SessionAssistantMessage,
  type SessionMessage,
  type SessionMessageBase,
  type SessionSystemMessage,
  type SessionUserMessage,
} from "./session_messages.ts";
export { renameSession, tagSession } from "./session_metadata.ts";
export { deleteSession } from "./delete_session.ts";
export { archiveSession, unarchiveSession } from "./archive_session.ts";
export {
  getSubagentMessages,
  type GetSubagentMessagesOptions,
  listSubagents,
  type ListSubagentsOptions,
} from "./subagents.ts";
export { forkSession, type ForkSessionOptions, type ForkSessionResult } from "./fork_session.ts";
export type { HistoryOptions, SkippedLine } from "./history_options.ts";
export {
  foldSessionSummary,
  type SessionSummaryEntry,
} from "../../../src/store/session_summary.ts";
export {
  DirectorySessionStore,
  type DirectorySessionStoreOptions,
  type DirectoryStoreSkip,
} from "../store/directory_session_store.ts";
export {
  type ImportSessionOptions,
  type ImportSessionResult,
  importSessionToStore,
} from "../store/import_session.ts";
export {
  type MaterializedSession,
  materializeSession,
  type MaterializeSessionOptions,
} from "../store/materialize_session.ts";
