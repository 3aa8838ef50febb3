/* What a session list shows of one transcript: its title (a custom title, an
 * AI title, the last prompt, a summary or the first prompt, in that order, as
 * the official SDK picks it), when it started and changed, its tag, git
 * branch, working directory and recorded cost. */

import { isChainEntry } from "./_chain.ts";
import type { TranscriptFile } from "./_paths.ts";
import type { Entry, Transcript } from "./_transcript.ts";
import type { StoredSessionInfo } from "./stored_session_info.ts";

const MAX_PROMPT = 200;

/** The value of `field` in the last entry of `type` (any entry when `type` is undefined). */
export function lastString(
  entries: readonly Entry[],
  type: string | undefined,
  field: string,
): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as Entry;
    if (type !== undefined && entry.type !== type) continue;
    const value = entry[field];
    if (typeof value === "string") return value;
  }
  return undefined;
}

function texts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  if (content.some((block) => block?.type === "tool_result")) return [];
  return content.flatMap((block) =>
    block?.type === "text" && typeof block.text === "string" ? [block.text] : []
  );
}

/** Text the CLI adds around commands and reminders, not typed by a person. */
const MACHINE_TEXT =
  /^(<local-command-|<system-reminder>|<command-(message|args)>|\[Request interrupted)/;
const COMMAND = /<command-name>\s*\/?([^<]*?)\s*<\/command-name>/;

function shorten(text: string): string {
  const flat = text.replaceAll("\n", " ").trim();
  return flat.length > MAX_PROMPT ? `${flat.slice(0, MAX_PROMPT).trim()}…` : flat;
}

/**
 * The first prompt a person typed: the first user message that is not a tool
 * result, not meta, not a compaction summary; a slash command counts as
 * `/name` when nothing else was typed.
 */
export function firstPrompt(entries: readonly Entry[]): string | undefined {
  let command: string | undefined;
  for (const entry of entries) {
    if (entry.type !== "user" || entry.isMeta === true || entry.isCompactSummary === true) continue;
    if (entry.isSidechain === true) continue;
    const message = entry.message as { content?: unknown } | undefined;
    for (const text of texts(message?.content)) {
      const flat = shorten(text);
      if (!flat) continue;
      const name = COMMAND.exec(flat)?.[1];
      if (name !== undefined) {
        command ??= `/${name}`;
        continue;
      }
      if (MACHINE_TEXT.test(flat)) continue;
      return flat;
    }
  }
  return command;
}

function lastNumber(entries: readonly Entry[], type: string, field: string): number | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as Entry;
    const value = entry[field];
    if (entry.type === type && typeof value === "number" && Number.isFinite(value)) return value;
  }
  return undefined;
}

function createdAt(entries: readonly Entry[]): number | undefined {
  for (const entry of entries) {
    if (typeof entry.timestamp !== "string") continue;
    const time = Date.parse(entry.timestamp);
    if (!Number.isNaN(time)) return time;
  }
  return undefined;
}

function forkedFrom(entries: readonly Entry[]): string | undefined {
  for (const entry of entries) {
    if (!isChainEntry(entry)) continue;
    const from = entry.forkedFrom as { sessionId?: unknown } | undefined;
    return typeof from?.sessionId === "string" ? from.sessionId : undefined;
  }
  return undefined;
}

/**
 * The list entry of one transcript.
 *
 * @returns The info, or `undefined` for a sub-agent's transcript (its first
 * message is a sidechain) or one with nothing to show as a title.
 */
export function summarize(
  file: TranscriptFile,
  transcript: Transcript,
): StoredSessionInfo | undefined {
  const { entries } = transcript;
  const first = entries.find(isChainEntry);
  if (first?.isSidechain === true) return undefined;
  const customTitle = lastString(entries, "custom-title", "customTitle") || undefined;
  const aiTitle = lastString(entries, "ai-title", "aiTitle") || undefined;
  const lastPrompt = lastString(entries, "last-prompt", "lastPrompt") || undefined;
  const prompt = firstPrompt(entries);
  const summary = customTitle ?? aiTitle ?? lastPrompt ??
    (lastString(entries, "summary", "summary") || undefined) ?? prompt;
  if (summary === undefined) return undefined;
  const optional = {
    customTitle,
    aiTitle,
    firstPrompt: prompt,
    lastPrompt,
    tag: lastString(entries, "tag", "tag") || undefined,
    gitBranch: lastString(entries, undefined, "gitBranch"),
    cwd: lastString(entries, "relocated", "relocatedCwd") ??
      entries.find((entry) => typeof entry.cwd === "string")?.cwd as string | undefined,
    createdAt: createdAt(entries),
    costUsd: lastNumber(entries, "cost-state", "totalCostUSD"),
    forkedFrom: forkedFrom(entries),
  };
  const info: Record<string, unknown> = {
    sessionId: file.sessionId,
    summary,
    lastModified: file.mtime,
    fileSize: file.size,
    file: file.file,
    skippedLines: transcript.skipped,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) info[key] = value;
  return info as unknown as StoredSessionInfo;
}
