// This module is browser compatible.
/**
 * {@linkcode runTransportConformance}: the one conformance suite every
 * {@linkcode Transport} must pass (the in-memory scripted CLI, the subprocess
 * adapter, a WebSocket relay, a third-party adapter). It registers one
 * `t.step` per contract and drives a fresh peer for each.
 *
 * ## The conformance peer protocol
 *
 * The suite talks to the peer only through `transport.write(line)`, so any
 * program on the far side of a transport can take part. Every line the suite
 * writes is one JSON object of the form `{"type":"conformance","op":…}`. A
 * conformance peer reads its input (stdin) as newline-delimited JSON (lines
 * may arrive in chunks cut anywhere, even inside a UTF-8 character), handles
 * the lines one at a time, in order, and for each:
 *
 * | `op`       | other fields           | the peer                                                     |
 * | ---------- | ---------------------- | ------------------------------------------------------------ |
 * | `"echo"`   | any                    | writes the line back to stdout, then `"\n"` (one line)       |
 * | `"emit"`   | `data`: string         | writes `data` to stdout as UTF-8, as is: no newline added    |
 * | `"stderr"` | `line`: string         | writes `line` and `"\n"` to stderr                           |
 * | `"exit"`   | `code`: integer 0–255  | flushes stdout and stderr, then exits with `code`            |
 *
 * - An echo may re-serialise the line (the suite compares JSON values), but
 *   must keep every value, including non-ASCII text, exactly.
 * - Lines of another `type`, other ops, blank lines and lines that are not
 *   JSON are ignored.
 * - At the end of its input (stdin EOF) the peer exits with code 0, after
 *   handling the lines before it.
 * - Output is written in input order; nothing else is written to stdout.
 *   (Other stderr output is allowed.)
 * - If stdout fails (the reader went away), the peer ignores the failure and
 *   keeps reading its input.
 * - Command-line arguments it does not know are ignored (the subprocess
 *   adapter always adds the CLI's flags).
 *
 * `@duplex/claude/testing` has an in-memory peer (`conformanceCli()`); the
 * repository has a Deno program for real processes
 * (`tests/fixtures/conformance_peer.ts`).
 *
 * ## The contracts (one step each; skip by id)
 *
 * - `round-trip`: three lines written come back as the same frames, in order.
 * - `ordering`: 500 lines written without waiting come back in order.
 * - `partial-output`: a line emitted in pieces arrives as one frame.
 * - `utf8`: multi-byte characters (accents, CJK, emoji) arrive intact.
 * - `byte-chunks`: every chunk of `readable` is a `Uint8Array` (also for
 *   several lines in one write and a line of 100 KiB), and no chunk changes
 *   after it was read.
 * - `eof-without-newline`: a last line without `"\n"` is still delivered
 *   (once the decoder ends), and `closed` has code 0 and `requested: false`.
 * - `exit-mid-message`: when the peer exits with code 3 in the middle of a
 *   line, `closed` has code 3, the partial line is not a frame, nothing throws.
 * - `write-after-exit`: a write after the peer exited rejects with a
 *   `DuplexError` of kind `process_exited`.
 * - `end-input`: after `endInput()` (idempotent) the peer sees EOF, exits
 *   with code 0, `readable` ends and `closed` resolves.
 * - `close`: `close()` is idempotent and bounded, resolves with a value equal
 *   to `closed` (with `requested: true`), and `[Symbol.asyncDispose]()` works
 *   after it.
 * - `closed-once`: `closed` is one promise, pending while the peer runs,
 *   resolves once (also for a non-zero exit) and never rejects; `close()`
 *   after the exit resolves with the same value.
 * - `ended-after-exit`: once `closed` resolved after the peer exited by
 *   itself (nothing read before), `readable` and `stderr` hold all the peer
 *   wrote and have ended: every read returns at once (within a few
 *   macrotasks, without waiting on the peer), the last one done.
 * - `ended-after-close`: the same once `close()` resolved while the peer ran.
 * - `stderr`: a line the peer writes to stderr arrives on `transport.stderr`
 *   as one chunk without newline (passes when the transport has no `stderr`).
 * - `cancel-readable`: cancelling `readable` early ends a pending read; a
 *   later write settles and the transport still closes in bounded time.
 *
 * Every step also checks `readable`'s chunks: each is a `Uint8Array` and,
 * when the transport declares `info.freshChunks`, shares no buffer with an
 * earlier one.
 *
 * @module
 */

import { checkMs } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { Transport } from "../transport/transport.ts";
import { type Bounds, type Check, withPeer } from "./_conformance_harness.ts";
import {
  checkCancelReadable,
  checkClose,
  checkClosedOnce,
  checkEndedAfterClose,
  checkEndedAfterExit,
  checkEndInput,
  checkEofWithoutNewline,
  checkExitMidMessage,
  checkWriteAfterExit,
} from "./_conformance_lifecycle.ts";
import {
  checkByteChunks,
  checkOrdering,
  checkPartialOutput,
  checkRoundTrip,
  checkStderr,
  checkUtf8,
  LOAD_LINES,
} from "./_conformance_output.ts";

/**
 * What the suite needs from a test runner: a way to run a named step. Deno's
 * `TestContext` fits as is; for another runner, run `fn` and resolve with
 * whether it passed.
 */
export interface ConformanceContext {
  /**
   * Runs one contract check.
   *
   * @param name The step's name (starts with the contract id).
   * @param fn The check; it throws (rejects) when the contract is broken.
   * @returns Whether the step passed.
   */
  step(name: string, fn: () => Promise<void> | void): Promise<boolean>;
}

/** A freshly opened peer that speaks the conformance peer protocol. */
export interface ConformancePeer {
  /** The open transport to the peer. The suite reads, writes and closes it. */
  transport: Transport;
}

/** The ids of the contracts, in the order the suite checks them. */
export type ConformanceContract =
  | "round-trip"
  | "ordering"
  | "partial-output"
  | "utf8"
  | "byte-chunks"
  | "eof-without-newline"
  | "exit-mid-message"
  | "write-after-exit"
  | "end-input"
  | "close"
  | "closed-once"
  | "ended-after-exit"
  | "ended-after-close"
  | "stderr"
  | "cancel-readable";

/** Every contract id, in the order the suite checks them. */
export const CONFORMANCE_CONTRACTS: readonly ConformanceContract[] = [
  "round-trip",
  "ordering",
  "partial-output",
  "utf8",
  "byte-chunks",
  "eof-without-newline",
  "exit-mid-message",
  "write-after-exit",
  "end-input",
  "close",
  "closed-once",
  "ended-after-exit",
  "ended-after-close",
  "stderr",
  "cancel-readable",
];

/** Options of {@linkcode runTransportConformance}. */
export interface ConformanceOptions {
  /**
   * The most time `close()` may take (and `[Symbol.asyncDispose]()`), in
   * milliseconds: 1 to 2^31-1, or `Infinity`.
   *
   * @default {10000}
   */
  closeBoundMs?: number;
  /**
   * The most time any other wait may take (opening a peer, a write, the next
   * frames, the peer's exit), in milliseconds: 1 to 2^31-1, or `Infinity`.
   *
   * @default {10000}
   */
  timeoutMs?: number;
  /** Contract ids (see {@linkcode CONFORMANCE_CONTRACTS}) not to check: no step is registered. */
  skip?: readonly string[];
}

const DEFAULT_BOUND_MS = 10_000;
const CANNOT_RUN = "Cannot run the transport conformance suite";

/** What each contract checks (its step's title) and how. */
const CONTRACTS: Record<ConformanceContract, { title: string; check: Check }> = {
  "round-trip": {
    title: "three lines written come back as the same frames, in order",
    check: checkRoundTrip,
  },
  ordering: {
    title: `${LOAD_LINES} lines written without waiting come back in order`,
    check: checkOrdering,
  },
  "partial-output": {
    title: "a line emitted in pieces arrives as one frame",
    check: checkPartialOutput,
  },
  utf8: {
    title: "multi-byte characters (accents, CJK, emoji) arrive intact",
    check: checkUtf8,
  },
  "byte-chunks": {
    title: "every readable chunk is a Uint8Array, never changed after it was read",
    check: checkByteChunks,
  },
  "eof-without-newline": {
    title: "a last line without newline is delivered; closed has code 0",
    check: checkEofWithoutNewline,
  },
  "exit-mid-message": {
    title: "exit in the middle of a line: closed has the code, the partial is not a frame",
    check: checkExitMidMessage,
  },
  "write-after-exit": {
    title: "a write after the peer exited rejects with a process_exited DuplexError",
    check: checkWriteAfterExit,
  },
  "end-input": {
    title: "endInput() gives the peer EOF; it exits with code 0 and readable ends",
    check: checkEndInput,
  },
  close: {
    title: "close() is idempotent, bounded and equal to closed; asyncDispose works after it",
    check: checkClose,
  },
  "closed-once": {
    title: "closed is pending while the peer runs, resolves once and never rejects",
    check: checkClosedOnce,
  },
  "ended-after-exit": {
    title: "once closed resolved after the peer exited, readable and stderr have ended",
    check: checkEndedAfterExit,
  },
  "ended-after-close": {
    title: "once close() resolved, readable and stderr have ended",
    check: checkEndedAfterClose,
  },
  stderr: {
    title: "a stderr line of the peer arrives on transport.stderr",
    check: checkStderr,
  },
  "cancel-readable": {
    title: "readable can be cancelled early; the transport still closes",
    check: checkCancelReadable,
  },
};

/**
 * Checks that a transport keeps the {@linkcode Transport} contract, one
 * `t.step` per contract (see the module doc for the contracts and for the
 * peer protocol the far side must speak). Each step opens a fresh peer with
 * `open()` and always closes it; every wait is bounded and every timer
 * cleared, so the suite runs clean under Deno's sanitizers.
 *
 * A step fails (throws) with a message naming what was expected and what
 * happened; the context reports it. The returned promise resolves once every
 * step ran, whether or not they passed.
 *
 * @param t Where the steps are registered: Deno's `TestContext`, or any
 *   `{ step(name, fn) }`.
 * @param open Opens a fresh peer that speaks the conformance peer protocol.
 * @param options Time bounds, and contracts to skip.
 * @returns Resolves when every step has run.
 * @throws {DuplexError} Of kind `invalid_argument` for an unknown contract id in `skip`.
 * @throws {RangeError} For a bound that is not 1 to 2^31-1 milliseconds or `Infinity`.
 * @throws {TypeError} If `t` has no `step` method or `open` is not a function.
 *
 * @example Check the in-memory peer with a minimal test context
 * ```ts
 * import { conformanceCli, runTransportConformance } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const failed: string[] = [];
 * const t = {
 *   async step(name: string, fn: () => Promise<void> | void): Promise<boolean> {
 *     try {
 *       await fn();
 *       return true;
 *     } catch {
 *       failed.push(name);
 *       return false;
 *     }
 *   },
 * };
 * await runTransportConformance(t, async () => ({
 *   transport: await conformanceCli().transport({ signal: new AbortController().signal }),
 * }));
 * assert.deepEqual(failed, []);
 * ```
 */
export async function runTransportConformance(
  t: ConformanceContext,
  open: () => Promise<ConformancePeer>,
  options: ConformanceOptions = {},
): Promise<void> {
  if (typeof t?.step !== "function") {
    throw new TypeError(`${CANNOT_RUN}: t must have a step method`);
  }
  if (typeof open !== "function") {
    throw new TypeError(`${CANNOT_RUN}: open must be a function`);
  }
  const bounds: Bounds = {
    closeBoundMs: checkMs(options.closeBoundMs ?? DEFAULT_BOUND_MS, `${CANNOT_RUN}: closeBoundMs`),
    timeoutMs: checkMs(options.timeoutMs ?? DEFAULT_BOUND_MS, `${CANNOT_RUN}: timeoutMs`),
  };
  const skip = new Set(options.skip ?? []);
  for (const id of skip) {
    if (!(CONFORMANCE_CONTRACTS as readonly string[]).includes(id)) {
      throw new DuplexError(
        "invalid_argument",
        `${CANNOT_RUN}: unknown contract ${JSON.stringify(id)} in skip; use one of ${
          CONFORMANCE_CONTRACTS.join(", ")
        }`,
      );
    }
  }
  for (const id of CONFORMANCE_CONTRACTS) {
    if (skip.has(id)) continue;
    const { title, check } = CONTRACTS[id];
    await t.step(`${id}: ${title}`, () => withPeer(open, bounds, check));
  }
}
