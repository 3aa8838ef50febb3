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

const MAX_PROMPT = 200;
/* Text the CLI wrote, not a person: a leading tag, an interrupt marker. */
const MACHINE = /^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])/;
const COMMAND = /<command-name>(.*?)<\/command-name>/;
const BASH_INPUT = /<bash-input>([\s\S]*?)<\/bash-input>/;
const PASTED_OPEN = '<pasted_content id="';

function isPastedId(id: string): boolean {
  return /^[0-9a-f]{4}$/.test(id);
}

/**
 * A text with its pasted sections (`<pasted_content id="abcd">\n…\n</pasted_content id="abcd">`)
 * replaced by their bodies, as the CLI shows a prompt.
 */
function unpasted(text: string): string {
  const parts: string[] = [];
  let start = 0;
  let from = 0;
  let blocks = 0;
  for (;;) {
    const open = text.indexOf(PASTED_OPEN, from);
    if (open === -1) break;
    const idAt = open + PASTED_OPEN.length;
    const id = text.slice(idAt, idAt + 4);
    if (!isPastedId(id) || !text.startsWith('">\n', idAt + 4)) {
      from = idAt;
      continue;
    }
    const bodyAt = idAt + 7;
    const close = `</pasted_content id="${id}">`;
    const closeAt = text.indexOf(`\n${close}`, bodyAt - 1) + 1;
    if (closeAt === 0) break;
    let before = open;
    for (let i = 0; i < 2 && before > start && text[before - 1] === "\n"; i++) before--;
    if (before > start) parts.push(text.slice(start, before));
    start = closeAt + close.length;
    for (let i = 0; i < 2 && text[start] === "\n"; i++) start++;
    parts.push(text.slice(bodyAt, closeAt - 1));
    blocks++;
    from = start;
  }
  if (blocks === 0) return text;
  if (start < text.length) parts.push(text.slice(start));
  return parts.join("");
}

/* The first 200 UTF-16 units, not splitting a surrogate pair. */
function cut(text: string): string {
  const head = text.slice(0, MAX_PROMPT);
  const last = head.charCodeAt(MAX_PROMPT - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/**
 * The prompt a person typed in a user entry, as the SDK picks a session's
 * first prompt; a slash command's name goes to `fallback.command` instead.
 */
function typedPrompt(
  entry: SessionStoreEntry,
  fallback: { command: string },
): string | undefined {
  if (entry.type !== "user" || entry.isMeta === true || entry.isCompactSummary === true) return;
  const message = entry.message as { content?: unknown } | null | undefined;
  if (!message) return;
  const content = message.content;
  const texts: string[] = [];
  if (typeof content === "string") texts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "tool_result") return;
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    }
  }
  for (const text of texts) {
    let flat = unpasted(text).replaceAll("\n", " ").trim();
    if (!flat) continue;
    const command = COMMAND.exec(flat)?.[1];
    if (command !== undefined) {
      if (!fallback.command) fallback.command = command;
      continue;
    }
    const bash = BASH_INPUT.exec(flat)?.[1];
    if (bash !== undefined) return `! ${bash.trim()}`;
    if (MACHINE.test(flat)) continue;
    if (flat.length > MAX_PROMPT) flat = `${cut(flat).trim()}…`;
    return flat;
  }
  return undefined;
}

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
