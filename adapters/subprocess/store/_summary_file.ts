/* A DirectorySessionStore's session summaries: `<session>.summary.json`
 * beside the main transcript (`.summary.json` cannot end a key's name,
 * which holds no `.`), written under the transcript's lock by the append
 * that changed it, so one session's summaries are folded one at a time
 * across processes too. A summary that is missing (a transcript of an
 * earlier version), unreadable (a crash mid-write) or older than the file
 * it sums up (a crash between the two writes) is folded again from the
 * whole transcript. */

import { isRecord } from "../../../src/_values.ts";
import type { SessionKey } from "../../../src/store/session_store.ts";
import {
  foldSessionSummary,
  type SessionSummaryEntry,
} from "../../../src/store/session_summary.ts";
import { loadFile, type WrittenBatch } from "./_jsonl_file.ts";
import { readInside, writeInside } from "./_no_links.ts";

/** The summary file of a main transcript file. */
export function summaryPath(transcript: string): string {
  return transcript.replace(/\.jsonl$/, ".summary.json");
}

/** Reads a summary; `undefined` when missing or not a summary. */
export async function readSummary(
  root: string,
  transcript: string,
  action: string,
): Promise<SessionSummaryEntry | undefined> {
  let text: string;
  try {
    text = await readInside(root, summaryPath(transcript), action);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  try {
    const summary: unknown = JSON.parse(text);
    if (
      isRecord(summary) && typeof summary.sessionId === "string" &&
      typeof summary.mtime === "number" && isRecord(summary.data)
    ) {
      return summary as unknown as SessionSummaryEntry;
    }
  } catch {
    // torn by a crash: folded again below
  }
  return undefined;
}

/** Folds what an append wrote into the session's summary (under the transcript's lock). */
export async function foldSummary(
  root: string,
  key: SessionKey,
  transcript: string,
  written: WrittenBatch,
  options: { readonly action: string; readonly maxLineBytes: number },
): Promise<void> {
  const prev = written.previousSize > 0
    ? await readSummary(root, transcript, options.action)
    : undefined;
  let summary: SessionSummaryEntry;
  if (written.previousSize === 0 || prev?.mtime === written.previousMtime) {
    summary = foldSessionSummary(prev, key, written.entries, { mtime: written.mtime });
  } else {
    const all = await loadFile(transcript, { root, maxLineBytes: options.maxLineBytes }) ?? [];
    summary = foldSessionSummary(undefined, key, all, { mtime: written.mtime });
  }
  await writeInside(root, summaryPath(transcript), JSON.stringify(summary), options.action);
}
