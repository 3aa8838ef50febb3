// This module is browser compatible.
/**
 * {@linkcode foldSessionSummary} and {@linkcode SessionSummaryEntry}: the
 * summary a store keeps of each session as it appends, so that a session
 * list reads one small record per session instead of every transcript (the
 * official SDK's alpha `SessionStore.listSessionSummaries`, same fold, same
 * `data`, so a store written by one is read by the other).
 *
 * @example Fold two batches; the first prompt stays, the title follows the last
 * ```ts
 * import { foldSessionSummary } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const key = { projectKey: "-home-me-app", sessionId: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f" };
 * let summary = foldSessionSummary(undefined, key, [
 *   { type: "user", timestamp: "2026-01-01T10:00:00.000Z", cwd: "/home/me/app",
 *     message: { role: "user", content: "Fix the build" } },
 * ], { mtime: 1 });
 * summary = foldSessionSummary(summary, key, [
 *   { type: "custom-title", customTitle: "Build fix" },
 * ], { mtime: 2 });
 * assert.equal(summary.mtime, 2);
 * assert.equal(summary.data.firstPrompt, "Fix the build");
 * assert.equal(summary.data.customTitle, "Build fix");
 * ```
 *
 * @module
 */

import type { SessionKey, SessionStoreEntry } from "./session_store.ts";
import { typedPrompt } from "./_typed_prompt.ts";

/**
 * A session's incrementally kept summary (the official SDK's
 * `SessionSummaryEntry`): what `listSessionSummaries` returns, one per
 * session.
 */
export interface SessionSummaryEntry {
  /** The session id. */
  readonly sessionId: string;
  /**
   * The store's write time of the summary, on the clock of the `mtime` that
   * `listSessions` gives for the session (never an entry's timestamp): a
   * reader takes a summary older than the listed `mtime` as stale.
   */
  readonly mtime: number;
  /**
   * The folded state, owned by the fold: a store keeps it as it is (JSON)
   * and does not read it.
   */
  readonly data: Record<string, unknown>;
}

/* Last-wins fields of any entry, and the name the summary keeps them under. */
const LAST_WINS: readonly (readonly [string, string])[] = [
  ["customTitle", "customTitle"],
  ["aiTitle", "aiTitle"],
  ["lastPrompt", "lastPrompt"],
  ["summary", "summaryHint"],
  ["gitBranch", "gitBranch"],
];

function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * Folds a batch of appended entries into a session's running summary, the
 * official SDK's `foldSessionSummary` (same `data`, field for field). A
 * store calls it in `append()` of a main transcript, with the entries it
 * stored, one session at a time (the fold is pure; the store serialises the
 * read, fold and write of one session's summary).
 *
 * Set-once fields (`isSidechain`, `createdAt`, `cwd`, `firstPrompt`) keep
 * their first value; `customTitle`, `aiTitle`, `lastPrompt`, `summaryHint`,
 * `gitBranch` and `tag` take the last one (a `tag` entry with an empty tag
 * clears it; a `relocated` entry moves `cwd`).
 *
 * @param prev The session's summary so far, or `undefined` for its first batch.
 * @param key The session's key (its `sessionId` names a new summary).
 * @param entries The entries stored, in order.
 * @param options `mtime`: the store's write time of this append (else
 * `prev`'s is kept, else 0).
 * @returns A new summary (`prev` is not changed).
 */
export function foldSessionSummary(
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: readonly SessionStoreEntry[],
  options: { readonly mtime?: number } = {},
): SessionSummaryEntry {
  const mtime = options.mtime ?? prev?.mtime ?? 0;
  const data: Record<string, unknown> = prev ? { ...prev.data } : {};
  for (const entry of entries) {
    const time = timeOf(entry.timestamp);
    if (data.isSidechain === undefined) data.isSidechain = entry.isSidechain === true;
    if (data.createdAt === undefined && time !== undefined) data.createdAt = time;
    if (data.cwd === undefined && typeof entry.cwd === "string" && entry.cwd) data.cwd = entry.cwd;
    if (data.firstPromptLocked !== true) {
      const fallback = { command: (data.commandFallback as string | undefined) ?? "" };
      const prompt = typedPrompt(entry, fallback);
      if (fallback.command && !data.commandFallback) data.commandFallback = fallback.command;
      if (prompt !== undefined) {
        data.firstPrompt = prompt;
        data.firstPromptLocked = true;
      }
    }
    for (const [field, name] of LAST_WINS) {
      if (typeof entry[field] === "string") data[name] = entry[field];
    }
    if (entry.type === "tag") {
      if (typeof entry.tag === "string" && entry.tag) data.tag = entry.tag;
      else delete data.tag;
    }
    if (
      entry.type === "relocated" && typeof entry.relocatedCwd === "string" && entry.relocatedCwd
    ) {
      data.cwd = entry.relocatedCwd;
    }
  }
  return { sessionId: prev?.sessionId ?? key.sessionId, mtime, data };
}
