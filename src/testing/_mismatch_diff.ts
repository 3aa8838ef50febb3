// This module is browser compatible.
/**
 * The readable diff of a replay's first mismatch: where in the transcript,
 * which of the session's writes, the first differing JSON path, and a line
 * diff of the two frames pretty-printed. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import { excerptOf } from "../errors.ts";
import { redactJson } from "./redaction.ts";

/** What the replay knows about its first mismatch. */
export interface Mismatch {
  /** The one-line message (also in `mismatches`). */
  readonly why: string;
  /** The transcript line of the recorded entry (1-based), when known. */
  readonly line: number | undefined;
  /** The entry's `seq`. */
  readonly seq: number;
  /** Its position among the transcript's entries (1-based). */
  readonly entry: number;
  /** What was recorded there: a frame, or the end of input. */
  readonly expected: Record<string, unknown> | "end of input";
  /** The session's write it was compared with (1-based), if it wrote one. */
  readonly write: number | undefined;
  /** What the session wrote: a frame, a line that is not JSON, or nothing. */
  readonly actual: Record<string, unknown> | string | undefined;
  /** The first differing JSON path, when the frames were compared field by field. */
  readonly path: string | undefined;
  /** The ids learned so far (recorded → written), shown as recorded in the diff. */
  readonly ids: ReadonlyMap<string, string>;
}

const CONTEXT_LINES = 2;
const MAX_DIFF_LINES = 60;
const MAX_LINE_CHARS = 160;
const MAX_LCS_LINES = 600;

/**
 * Formats a mismatch for a person.
 *
 * @param m The mismatch.
 * @returns Several lines of text.
 */
export function formatMismatch(m: Mismatch): string {
  const at = m.line === undefined ? `transcript entry ${m.entry}` : `transcript line ${m.line}`;
  const out = [
    `Replay mismatch: ${m.why}`,
    `  recorded: ${at} (seq ${m.seq})`,
    `  written:  ${m.write === undefined ? "nothing" : `the session's write #${m.write}`}`,
  ];
  if (m.path !== undefined) out.push(`  first difference at ${m.path}`);
  if (typeof m.expected === "string" || !isRecord(m.actual)) {
    out.push(`  expected: ${show(m.expected)}`, `  got:      ${show(m.actual)}`);
    return out.join("\n");
  }
  // Written ids shown as the recorded ones they stand for, so they do not show as differences.
  const reverse = new Map([...m.ids].map(([recorded, written]) => [written, recorded]));
  const actual = align(redactJson(m.actual, (text) => reverse.get(text) ?? text), m.expected);
  out.push("", "  --- recorded (expected)", "  +++ written (got)");
  out.push(...lineDiff(pretty(m.expected), pretty(actual)).map((line) => `  ${line}`));
  return out.join("\n");
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return value;
  return excerptOf(JSON.stringify(value), 400);
}

function pretty(value: unknown): string[] {
  return JSON.stringify(value, null, 2).split("\n").map((line) => excerptOf(line, MAX_LINE_CHARS));
}

/* The actual value with its keys in the recorded order (extra keys last). */
function align(actual: unknown, expected: unknown): unknown {
  if (Array.isArray(actual)) {
    return actual.map((item, i) => align(item, Array.isArray(expected) ? expected[i] : undefined));
  }
  if (!isRecord(actual)) return actual;
  const order = isRecord(expected) ? Object.keys(expected).filter((k) => k in actual) : [];
  const keys = [...order, ...Object.keys(actual).filter((k) => !order.includes(k))];
  return Object.fromEntries(
    keys.map((k) => [k, align(actual[k], isRecord(expected) ? expected[k] : undefined)]),
  );
}

type Op = { kind: " " | "-" | "+"; text: string; a: number; b: number };

/* A unified-style diff of two line lists: hunks of changed lines with
   context, `@@ frame line A (recorded), B (written) @@` headers, bounded length. */
function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  const ops = diffOps(a, b);
  const changed = ops.map((op, i) => (op.kind === " " ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return ["  (the pretty-printed frames are equal)"];
  const keep = new Set<number>();
  for (const i of changed) {
    for (let j = i - CONTEXT_LINES; j <= i + CONTEXT_LINES; j++) {
      if (j >= 0 && j < ops.length) keep.add(j);
    }
  }
  const out: string[] = [];
  let last = -2;
  for (let i = 0; i < ops.length; i++) {
    if (!keep.has(i)) continue;
    const op = ops[i]!;
    if (i !== last + 1) out.push(`@@ frame line ${op.a + 1} (recorded), ${op.b + 1} (written) @@`);
    out.push(`${op.kind} ${op.text}`);
    last = i;
  }
  if (out.length <= MAX_DIFF_LINES) return out;
  return [...out.slice(0, MAX_DIFF_LINES), `… (${out.length - MAX_DIFF_LINES} more diff lines)`];
}

function diffOps(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: " ", text: a[i]!, a: i, b: i });
  ops.push(...middle(a.slice(start, endA), b.slice(start, endB), start, start));
  for (let i = endA; i < a.length; i++) {
    ops.push({ kind: " ", text: a[i]!, a: i, b: i - endA + endB });
  }
  return ops;
}

/* The changed middle: a longest-common-subsequence diff, or all removed then added when big. */
function middle(a: readonly string[], b: readonly string[], offA: number, offB: number): Op[] {
  const ops: Op[] = [];
  if (a.length > MAX_LCS_LINES || b.length > MAX_LCS_LINES) {
    a.forEach((text, i) => ops.push({ kind: "-", text, a: offA + i, b: offB }));
    b.forEach((text, j) => ops.push({ kind: "+", text, a: offA + a.length, b: offB + j }));
    return ops;
  }
  const width = b.length + 1;
  const lcs = new Uint16Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j]
        ? lcs[(i + 1) * width + j + 1]! + 1
        : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: " ", text: a[i]!, a: offA + i++, b: offB + j++ });
    } else if (i < a.length && (j === b.length || removeFirst(lcs, width, i, j))) {
      ops.push({ kind: "-", text: a[i]!, a: offA + i++, b: offB + j });
    } else {
      ops.push({ kind: "+", text: b[j]!, a: offA + i, b: offB + j++ });
    }
  }
  return ops;
}

function removeFirst(lcs: Uint16Array, width: number, i: number, j: number): boolean {
  return lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!;
}
