// This module is browser compatible.
/**
 * The transport conformance suite's assertions and bounded waits: each
 * failure is an `Error` whose message says what was expected and what
 * happened. Equality is the library's `jsonEqual`, excerpts its `excerptOf`,
 * timers its deadline helper. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { abortable, deadline, sleep } from "../_deadline.ts";
import type { DecodeDiagnostic } from "../codec/frame_decoder.ts";
import { DuplexError, excerptOf, type TransportExit } from "../errors.ts";
import { jsonEqual } from "../_values.ts";

/** A wait of the suite ran out of time (as opposed to a contract broken outright). */
export class ContractTimeout extends Error {
  override name = "TimeoutError";
}

/** How many macrotasks a read may take and still count as "at once" (not waiting on the peer). */
const PROMPT_TURNS = 5;

/**
 * Settles like `promise`, or rejects with a {@linkcode ContractTimeout} naming
 * `what` when it takes longer than `ms`.
 */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  using limit = deadline(ms, {
    reason: () => new ContractTimeout(`Expected ${what} within ${ms} ms`),
  });
  return await abortable(promise, limit.signal);
}

/** The outcome of `promise`, which never rejects. */
export function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return promise.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );
}

/** Waits `ms` milliseconds. */
export function pause(ms: number): Promise<void> {
  return sleep(ms);
}

/** Tells whether a promise settles within a few macrotasks, that is, without waiting on a peer. */
export async function settlesSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < PROMPT_TURNS && !settled; i++) await sleep(0);
  return settled;
}

/** Whether `error` is a `DuplexError` of `kind`, also from another copy of the package. */
export function isKind(error: unknown, kind: string): boolean {
  if (error instanceof DuplexError) return error.kind === kind;
  return error instanceof Error && error.name === "DuplexError" &&
    (error as { kind?: unknown }).kind === kind;
}

/** Throws unless `actual` holds the frames `expected`, in order (compared as JSON values). */
export function expectFrames(actual: unknown[], expected: unknown[], what: string): void {
  const length = Math.max(actual.length, expected.length);
  for (let i = 0; i < length; i++) {
    if (i >= actual.length || i >= expected.length || !sameJson(actual[i], expected[i])) {
      throw new Error(
        `Expected ${what} to be ${expected.length} frame(s) equal to those sent; ` +
          `frame ${i} differs: expected ${show(expected[i])}, got ${show(actual[i])} ` +
          `(got ${actual.length} frame(s) in all)`,
      );
    }
  }
}

/** Throws if the decoder skipped or repaired any line. */
export function expectNoDiagnostics(diagnostics: readonly DecodeDiagnostic[], what: string): void {
  const first = diagnostics[0];
  if (first === undefined) return;
  throw new Error(
    `Expected ${what} to decode cleanly; the decoder reported ${diagnostics.length} ` +
      `skipped or repaired line(s), first: ${first.kind}: ${first.message} ` +
      `(${JSON.stringify(first.excerpt)})`,
  );
}

/** Throws unless `exit` is a `TransportExit` with the `expected` fields and a string `stderrTail`. */
export function expectExit(exit: unknown, expected: Partial<TransportExit>, what: string): void {
  if (typeof exit !== "object" || exit === null) {
    throw new Error(`Expected ${what} to be a TransportExit object; got ${describeError(exit)}`);
  }
  const record = exit as Record<string, unknown>;
  for (const [key, value] of Object.entries(expected)) {
    if (record[key] !== value) {
      throw new Error(
        `Expected ${what} to have ${key} ${JSON.stringify(value)}; got ${
          JSON.stringify(record[key])
        } (exit: ${show(exit)})`,
      );
    }
  }
  if (typeof record.stderrTail !== "string") {
    throw new Error(`Expected ${what} to have a string stderrTail; got ${show(exit)}`);
  }
}

/** Throws unless `actual` and `expected` are equal as JSON values. */
export function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (!sameJson(actual, expected)) {
    throw new Error(`Expected ${what} to equal ${show(expected)}; got ${show(actual)}`);
  }
}

/** An error as its name, kind and message; any other value as its JSON excerpt ({@linkcode show}). */
export function describeError(value: unknown): string {
  if (value instanceof Error) {
    const kind = (value as { kind?: unknown }).kind;
    return `${value.name}${typeof kind === "string" ? ` (kind ${kind})` : ""}: ${value.message}`;
  }
  return show(value);
}

/** A value as JSON text (strings quoted), cut to `max` characters. */
export function show(value: unknown, max = 300): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return excerptOf(text, max);
}

/* Equal as JSON values: key order and `undefined` members do not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  return jsonEqual(asJson(a), asJson(b));
}

function asJson(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? value : JSON.parse(text);
  } catch {
    return value;
  }
}
