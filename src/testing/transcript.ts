// This module is browser compatible.
/**
 * Recorded CLI sessions: one JSON object per line,
 * `{"seq","t_ms","dir":"meta"|"stdin"|"stdout"|"stderr","msg"|"raw"}`.
 *
 * @module
 */

import { DuplexError, excerptOf } from "../errors.ts";
import { isRecord, messageOf } from "../_values.ts";

/** Which stream a transcript entry was recorded on, or `"meta"` for spawn, stdin end and exit. */
export type TranscriptDirection = "meta" | "stdin" | "stdout" | "stderr";

/** One recorded line. */
export interface TranscriptEntry {
  /** The position in the recording, from 0. */
  seq: number;
  /** Milliseconds since the process was spawned. */
  tMs: number;
  /** Where the line was seen. */
  dir: TranscriptDirection;
  /**
   * The parsed line (a frame), or for `meta` an event: `{event:"spawn",bin,args,cwd,env}`,
   * `{event:"stdin_end"}`, `{event:"exit",code,signal}`.
   */
  msg?: Record<string, unknown>;
  /** The text of a line that was not JSON (stdout noise, stderr lines). */
  raw?: string;
}

const DIRECTIONS: readonly string[] = ["meta", "stdin", "stdout", "stderr"];

/**
 * Parses a transcript. Blank lines are skipped; every other line must be an
 * entry.
 *
 * @param text The transcript text (NDJSON).
 * @returns The entries, in file order.
 * @throws {DuplexError} Of kind `protocol`, naming the 1-based line number, for a bad line.
 *
 * @example Parse two lines
 * ```ts
 * import { parseTranscript } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const entries = parseTranscript([
 *   '{"seq":0,"t_ms":0,"dir":"stdin","msg":{"type":"keep_alive"}}',
 *   '{"seq":1,"t_ms":2.5,"dir":"meta","msg":{"event":"exit","code":0,"signal":null}}',
 * ].join("\n"));
 * assert.equal(entries.length, 2);
 * assert.equal(entries[1]?.tMs, 2.5);
 * ```
 */
export function parseTranscript(text: string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    entries.push(parseEntry(line, i + 1));
  }
  return entries;
}

function parseEntry(line: string, lineNumber: number): TranscriptEntry {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw bad(lineNumber, "it is not JSON", line, cause);
  }
  if (!isRecord(value)) throw bad(lineNumber, "it is not a JSON object", line);
  const { seq, t_ms: tMs, dir, msg, raw } = value;
  if (typeof seq !== "number" || !Number.isFinite(seq)) {
    throw bad(lineNumber, '"seq" is not a number', line);
  }
  if (typeof tMs !== "number" || !Number.isFinite(tMs)) {
    throw bad(lineNumber, '"t_ms" is not a number', line);
  }
  if (typeof dir !== "string" || !DIRECTIONS.includes(dir)) {
    throw bad(lineNumber, '"dir" is not one of meta, stdin, stdout, stderr', line);
  }
  if (msg !== undefined && !isRecord(msg)) throw bad(lineNumber, '"msg" is not an object', line);
  if (raw !== undefined && typeof raw !== "string") {
    throw bad(lineNumber, '"raw" is not a string', line);
  }
  if (msg === undefined && raw === undefined) {
    throw bad(lineNumber, 'it has neither "msg" nor "raw"', line);
  }
  if (dir === "meta" && (msg === undefined || typeof msg.event !== "string")) {
    throw bad(lineNumber, 'a meta entry needs "msg.event"', line);
  }
  const entry: TranscriptEntry = { seq, tMs, dir: dir as TranscriptDirection };
  if (msg !== undefined) entry.msg = msg;
  if (raw !== undefined) entry.raw = raw;
  return entry;
}

function bad(lineNumber: number, why: string, line: string, cause?: unknown): DuplexError {
  return new DuplexError(
    "protocol",
    `Cannot parse transcript line ${lineNumber}: ${why}; fix or remove the line`,
    { excerpt: excerptOf(line), cause },
  );
}

/** Options of {@linkcode loadTranscript}. */
export interface LoadTranscriptOptions {
  /** Cancels the fetch. */
  signal?: AbortSignal;
}

/**
 * Fetches and parses a transcript. Uses `fetch`, so it takes `file:` URLs in
 * Deno (with read permission) and `http(s):` URLs anywhere.
 *
 * @param url Where the transcript is; resolve relative paths first, for example
 *   `new URL("./fixtures/01.ndjson", import.meta.url)`.
 * @param options A signal to cancel the fetch.
 * @returns The entries.
 * @throws {DuplexError} Of kind `invalid_argument` when the transcript cannot be fetched,
 *   `protocol` when a line is bad. Rejects with `signal.reason` when aborted.
 *
 * @example Load a recorded session
 * ```ts ignore
 * import { loadTranscript } from "@duplex/claude/testing";
 *
 * const entries = await loadTranscript(new URL("./01-duplex-two-turns.ndjson", import.meta.url));
 * ```
 */
export async function loadTranscript(
  url: URL | string,
  options: LoadTranscriptOptions = {},
): Promise<TranscriptEntry[]> {
  options.signal?.throwIfAborted();
  let text: string;
  try {
    const response = await fetch(url, options.signal ? { signal: options.signal } : {});
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`HTTP ${response.status} ${response.statusText}`.trimEnd());
    }
    text = await response.text();
  } catch (cause) {
    if (options.signal?.aborted) throw options.signal.reason;
    const why = messageOf(cause);
    throw new DuplexError(
      "invalid_argument",
      `Cannot load transcript from ${String(url)}: ${why}; check the URL and read permission`,
      { cause },
    );
  }
  return parseTranscript(text);
}
