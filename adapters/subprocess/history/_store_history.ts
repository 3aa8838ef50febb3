/* The session history functions over a SessionStore (`sessionStore`): the
 * key of a session, its entries, its list entry. Results match those over
 * the CLI's files, except that `file` is empty (a store has no file),
 * `lastModified` is the store's mtime, and `fileSize` is the size of the
 * entries as JSONL. */

import { DuplexError } from "../../../src/errors.ts";
import { projectKeyOf } from "../../../src/store/project_key.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import type { SessionSummaryEntry } from "../../../src/store/session_summary.ts";
import { resolvedDir } from "./_paths.ts";
import { summarize } from "./_summary.ts";
import type { Entry } from "./_transcript.ts";
import type { HistoryOptions } from "./history_options.ts";
import type { StoredSessionInfo } from "./stored_session_info.ts";

/** The store of `options`, checked. */
export function storeOf(options: HistoryOptions, action: string): SessionStore {
  const store = options.sessionStore as SessionStore;
  if (typeof store?.append !== "function" || typeof store.load !== "function") {
    throw new TypeError(`Cannot ${action}: sessionStore must have append and load methods`);
  }
  return store;
}

/** The project key of `options`: `projectKey`, else that of `dir`, else of the current directory. */
export async function projectKeyFor(options: HistoryOptions, action: string): Promise<string> {
  if (options.projectKey !== undefined) {
    if (typeof options.projectKey !== "string" || options.projectKey === "") {
      throw new TypeError(`Cannot ${action}: projectKey must be a non-empty string`);
    }
    return options.projectKey;
  }
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) {
    throw new TypeError(`Cannot ${action}: dir must be a non-empty string`);
  }
  return projectKeyOf(await resolvedDir(options.dir ?? Deno.cwd()));
}

/* The key of a session in the store, and its main transcript (`undefined` when empty or none). */
async function loadKey(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): Promise<{ key: SessionKey; entries: Entry[] | undefined }> {
  const store = storeOf(options, action);
  const key = { projectKey: await projectKeyFor(options, action), sessionId };
  options.signal?.throwIfAborted();
  const entries = await store.load(key);
  options.signal?.throwIfAborted();
  return { key, entries: entries && entries.length > 0 ? entries : undefined };
}

/** A session's main transcript in the store, or `undefined` when it holds none. */
export async function loadStored(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): Promise<{ key: SessionKey; entries: Entry[] } | undefined> {
  const { key, entries } = await loadKey(sessionId, options, action);
  return entries ? { key, entries } : undefined;
}

/** Like {@linkcode loadStored}, but a missing session is an error. */
export async function requireStored(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): Promise<{ key: SessionKey; entries: Entry[] }> {
  const { key, entries } = await loadKey(sessionId, options, action);
  if (entries) return { key, entries };
  throw new DuplexError(
    "not_found",
    `Cannot ${action}: the session store holds no transcript of session ${sessionId} under ` +
      `project key ${JSON.stringify(key.projectKey.slice(0, 80))}`,
  );
}

/** Appends one entry to a stored session, which must exist. */
export async function appendStored(
  sessionId: string,
  entry: Omit<SessionStoreEntry, "uuid" | "timestamp">,
  options: HistoryOptions,
  action: string,
): Promise<void> {
  const { key } = await requireStored(sessionId, options, action);
  const stamped = { ...entry, uuid: crypto.randomUUID(), timestamp: new Date().toISOString() };
  await storeOf(options, action).append(key, [stamped as SessionStoreEntry]);
}

function jsonlBytes(entries: readonly Entry[]): number {
  const encoder = new TextEncoder();
  return entries.reduce((sum, entry) => sum + encoder.encode(JSON.stringify(entry)).length + 1, 0);
}

/** The time of the last entry that has one (the SDK's fallback without `listSessions`). */
function lastTimestamp(entries: readonly Entry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const time = Date.parse(String(entries[i]?.timestamp));
    if (!Number.isNaN(time)) return time;
  }
  return Date.now();
}

/** The list entry of a stored session; `mtime` from the store's `listSessions` when known. */
export function storedInfo(
  sessionId: string,
  entries: readonly Entry[],
  mtime: number | undefined,
): StoredSessionInfo | undefined {
  const file = {
    sessionId,
    file: "",
    projectDir: "",
    size: jsonlBytes(entries),
    mtime: mtime ?? lastTimestamp(entries),
  };
  return summarize(file, { entries, skipped: 0 });
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The list entry a store's summary gives (the SDK's reading of a
 * `foldSessionSummary` state): no `fileSize`, `costUsd` or `forkedFrom`,
 * which a summary does not keep; `undefined` for a subagent's transcript or
 * one with nothing to show as a title.
 */
export function summaryInfo(summary: SessionSummaryEntry): StoredSessionInfo | undefined {
  const data = summary.data;
  if (data.isSidechain === true) return undefined;
  const firstPrompt = text(
    data.firstPromptLocked === true ? data.firstPrompt : data.commandFallback,
  );
  const customTitle = text(data.customTitle);
  const aiTitle = text(data.aiTitle);
  const lastPrompt = text(data.lastPrompt);
  const title = customTitle ?? aiTitle ?? lastPrompt ?? text(data.summaryHint) ?? firstPrompt;
  if (title === undefined) return undefined;
  const optional = {
    customTitle,
    aiTitle,
    firstPrompt,
    lastPrompt,
    tag: text(data.tag),
    gitBranch: text(data.gitBranch),
    cwd: text(data.cwd),
    createdAt: typeof data.createdAt === "number" ? data.createdAt : undefined,
  };
  const info: Record<string, unknown> = {
    sessionId: summary.sessionId,
    summary: title,
    lastModified: summary.mtime,
    file: "",
    skippedLines: 0,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) info[key] = value;
  return info as unknown as StoredSessionInfo;
}

/** The store's mtime of a session, when it can list sessions. */
export async function storedMtime(
  key: SessionKey,
  options: HistoryOptions,
  action: string,
): Promise<number | undefined> {
  const store = storeOf(options, action);
  if (!store.listSessions) return undefined;
  const refs = await store.listSessions(key.projectKey);
  return refs.find((ref) => ref.sessionId === key.sessionId)?.mtime;
}
