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
 * - `stderr`: a line the peer writes to stderr arrives on `transport.stderr`
 *   as one chunk without newline (passes when the transport has no `stderr`).
 * - `cancel-readable`: cancelling `readable` early ends a pending read; a
 *   later write settles and the transport still closes in bounded time.
 *
 * Every step also checks the shape of `readable`'s chunks: `Uint8Array`s, or
 * strings that each hold one line without its newline; and, when the
 * transport declares `info.freshChunks`, that no chunk shares its buffer with
 * an earlier one.
 *
 * @module
 */

import { type DecodeDiagnostic, FrameDecoder } from "../codec/frame_decoder.ts";
import { DuplexError, type TransportExit } from "../errors.ts";
import type { Transport } from "../transport/transport.ts";

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
  | "eof-without-newline"
  | "exit-mid-message"
  | "write-after-exit"
  | "end-input"
  | "close"
  | "closed-once"
  | "stderr"
  | "cancel-readable";

/** Every contract id, in the order the suite checks them. */
export const CONFORMANCE_CONTRACTS: readonly ConformanceContract[] = [
  "round-trip",
  "ordering",
  "partial-output",
  "utf8",
  "eof-without-newline",
  "exit-mid-message",
  "write-after-exit",
  "end-input",
  "close",
  "closed-once",
  "stderr",
  "cancel-readable",
];

/** Options of {@linkcode runTransportConformance}. */
export interface ConformanceOptions {
  /**
   * The most time `close()` may take (and `[Symbol.asyncDispose]()`), in
   * milliseconds.
   *
   * @default {10000}
   */
  closeBoundMs?: number;
  /**
   * The most time any other wait may take (opening a peer, a write, the next
   * frames, the peer's exit), in milliseconds.
   *
   * @default {10000}
   */
  timeoutMs?: number;
  /** Contract ids (see {@linkcode CONFORMANCE_CONTRACTS}) not to check: no step is registered. */
  skip?: readonly string[];
}

interface Bounds {
  readonly closeBoundMs: number;
  readonly timeoutMs: number;
}

type Open = () => Promise<ConformancePeer>;
type Check = (peer: PeerSession) => Promise<void>;

const DEFAULT_BOUND_MS = 10_000;
const LOAD_LINES = 500;
const UTF8_TEXT = "héllo wörld · ñ ß ø — 日本語のテキスト 中文 한국어 · 👋🏽 👨‍👩‍👧‍👦 🎉 𝄞 ∑≠∞ · end";

const CHECKS: Record<ConformanceContract, { title: string; check: Check }> = {
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
 * @throws {DuplexError} Of kind `invalid_argument` for an unknown contract id
 *   in `skip` or a bound that is not a positive number.
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
    throw new TypeError("Cannot run the transport conformance suite: t must have a step method");
  }
  if (typeof open !== "function") {
    throw new TypeError("Cannot run the transport conformance suite: open must be a function");
  }
  const bounds: Bounds = {
    closeBoundMs: bound("closeBoundMs", options.closeBoundMs),
    timeoutMs: bound("timeoutMs", options.timeoutMs),
  };
  const skip = new Set(options.skip ?? []);
  for (const id of skip) {
    if (!(CONFORMANCE_CONTRACTS as readonly string[]).includes(id)) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot run the transport conformance suite: unknown contract ${
          JSON.stringify(id)
        } in skip; use one of ${CONFORMANCE_CONTRACTS.join(", ")}`,
      );
    }
  }
  for (const id of CONFORMANCE_CONTRACTS) {
    if (skip.has(id)) continue;
    const { title, check } = CHECKS[id];
    await t.step(`${id}: ${title}`, () => withPeer(open, bounds, check));
  }
}

function bound(name: string, value: number | undefined): number {
  if (value === undefined) return DEFAULT_BOUND_MS;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot run the transport conformance suite: ${name} must be a positive number of milliseconds, got ${
        String(value)
      }`,
    );
  }
  return value;
}

// ---------------------------------------------------------------------------
// The checks

async function checkRoundTrip(peer: PeerSession): Promise<void> {
  const sent = [
    echoFrame({ seq: 1, text: "plain" }),
    echoFrame({
      seq: 2,
      nested: { list: [1, -2.5, 3e21, true, false, null], empty: {}, none: [] },
      escapes: 'quote " backslash \\ tab \t newline \n control \u0001 slash /',
    }),
    echoFrame({ seq: 3, text: "" }),
  ];
  const output = peer.output();
  for (const frame of sent) await peer.write(JSON.stringify(frame));
  await output.waitFor(sent.length, "the echo of 3 lines");
  expectFrames(output.frames, sent, "the echoed frames");
}

async function checkOrdering(peer: PeerSession): Promise<void> {
  const sent: Record<string, unknown>[] = [];
  for (let seq = 0; seq < LOAD_LINES; seq++) {
    sent.push(echoFrame({ seq, text: `line ${seq} of ${LOAD_LINES}`, pad: "x".repeat(seq % 50) }));
  }
  const output = peer.output();
  const writes = sent.map((frame) => callWrite(peer.transport, JSON.stringify(frame)));
  const [written, read] = await Promise.allSettled([
    within(peer.bounds.timeoutMs, `${LOAD_LINES} writes to resolve`, Promise.all(writes)),
    output.waitFor(sent.length, `the echo of ${LOAD_LINES} lines`),
  ]);
  if (written.status === "rejected") throw written.reason;
  if (read.status === "rejected") throw read.reason;
  const seqs = output.frames.map((frame) => frame.seq);
  const firstOff = seqs.findIndex((seq, i) => seq !== i);
  if (firstOff >= 0 || seqs.length !== LOAD_LINES) {
    throw new Error(
      `Expected the ${LOAD_LINES} echoed lines in the order written; ` +
        `at index ${firstOff} got seq ${String(seqs[firstOff])} (received ${seqs.length} lines: ` +
        `${excerpt(seqs)})`,
    );
  }
  expectFrames(output.frames, sent, "the echoed frames");
}

async function checkPartialOutput(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("emit", { data: '{"a":' }));
  await pause(30);
  await peer.write(op("emit", { data: "1}\n" }));
  await output.waitFor(1, 'a frame from `{"a":` and `1}\\n` emitted in two pieces');
  expectFrames(output.frames, [{ a: 1 }], 'the frame emitted as `{"a":` + `1}\\n`');
  await peer.write(op("emit", { data: '{"b":[tr' }));
  await pause(30);
  await peer.write(op("emit", { data: 'ue,null],"c":"x' }));
  await peer.write(op("emit", { data: 'y"}\n{"d":2}' }));
  await pause(30);
  await peer.write(op("emit", { data: "\n" }));
  await output.waitFor(3, "the frames of a line emitted in three pieces and a line after it");
  expectFrames(
    output.frames,
    [{ a: 1 }, { b: [true, null], c: "xy" }, { d: 2 }],
    "the frames emitted in pieces",
  );
  expectNoDiagnostics(output, "the frames emitted in pieces");
}

async function checkUtf8(peer: PeerSession): Promise<void> {
  const echoed = echoFrame({ text: UTF8_TEXT, key: { "キー 🔑": "値 ✓" } });
  const emitted = { utf8: UTF8_TEXT.repeat(40), last: "末尾 🏁" };
  const output = peer.output();
  await peer.write(JSON.stringify(echoed));
  await peer.write(op("emit", { data: `${JSON.stringify(emitted)}\n` }));
  await output.waitFor(2, "an echoed and an emitted line of multi-byte text");
  expectFrames(output.frames, [echoed, emitted], "the multi-byte text");
  expectNoDiagnostics(output, "the multi-byte text");
}

async function checkEofWithoutNewline(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("emit", { data: '{"x":1}' }));
  await peer.write(op("exit", { code: 0 }));
  await output.toEnd("readable to end after the peer exited");
  expectFrames(
    output.frames,
    [{ x: 1 }],
    'the last line `{"x":1}` written without newline before the exit (after FrameDecoder.end())',
  );
  const exit = await peer.closed("the peer's exit with code 0");
  expectExit(exit, { code: 0, signal: null, requested: false }, "closed after the peer exited 0");
}

async function checkExitMidMessage(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("emit", { data: '{"before":true}\n{"a":' }));
  await peer.write(op("exit", { code: 3 }));
  await output.toEnd("readable to end after the peer exited in the middle of a line");
  expectFrames(
    output.frames,
    [{ before: true }],
    'the output `{"before":true}\\n{"a":` cut by the exit (only the whole line is a frame)',
  );
  const exit = await peer.closed("the peer's exit with code 3");
  expectExit(exit, { code: 3, signal: null, requested: false }, "closed after the peer exited 3");
}

async function checkWriteAfterExit(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("exit", { code: 0 }));
  await output.toEnd("readable to end after the peer exited");
  await peer.closed("the peer's exit");
  for (const attempt of ["a write", "a second write"]) {
    let outcome: PromiseSettledResult<void>;
    try {
      outcome = await settle(
        within(
          peer.bounds.timeoutMs,
          `${attempt} after the exit to settle`,
          peer.transport.write(JSON.stringify(echoFrame({ late: true }))),
        ),
      );
    } catch (error) {
      throw new Error(
        `Expected ${attempt} after the peer exited to return a rejected promise; ` +
          `write() threw synchronously: ${describe(error)}`,
        { cause: error },
      );
    }
    if (outcome.status === "fulfilled") {
      throw new Error(
        `Expected ${attempt} after the peer exited to reject with a DuplexError of kind ` +
          `process_exited; it resolved`,
      );
    }
    const error = outcome.reason;
    if (!isKind(error, "process_exited")) {
      throw new Error(
        `Expected ${attempt} after the peer exited to reject with a DuplexError of kind ` +
          `process_exited; it rejected with ${describe(error)}`,
        { cause: error },
      );
    }
  }
}

async function checkEndInput(peer: PeerSession): Promise<void> {
  const output = peer.output();
  const sent = echoFrame({ before: "endInput" });
  await peer.write(JSON.stringify(sent));
  await output.waitFor(1, "the echo of a line written before endInput()");
  await within(peer.bounds.timeoutMs, "endInput() to resolve", callEndInput(peer.transport));
  await within(
    peer.bounds.timeoutMs,
    "a second endInput() to resolve (it is idempotent)",
    callEndInput(peer.transport),
  );
  await output.toEnd("readable to end after endInput() (the peer should see EOF and exit)");
  expectFrames(output.frames, [sent], "the output around endInput()");
  const exit = await peer.closed("the peer's exit after endInput()");
  expectExit(exit, { code: 0, signal: null }, "closed after endInput()");
}

async function checkClose(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(JSON.stringify(echoFrame({ before: "close" })));
  await output.waitFor(1, "the echo of a line written before close()");
  const { closeBoundMs } = peer.bounds;
  const started = Date.now();
  let first: Promise<TransportExit>;
  let second: Promise<TransportExit>;
  try {
    first = peer.transport.close();
    second = peer.transport.close();
  } catch (error) {
    throw new Error(`Expected close() to return a promise; it threw: ${describe(error)}`, {
      cause: error,
    });
  }
  const [a, b] = await Promise.allSettled([
    within(closeBoundMs, "close() to resolve (bounded by closeBoundMs)", first),
    within(closeBoundMs, "a second close() to resolve (bounded by closeBoundMs)", second),
  ]);
  if (a.status === "rejected") throw a.reason;
  if (b.status === "rejected") throw b.reason;
  const took = Date.now() - started;
  if (took > closeBoundMs) {
    throw new Error(`Expected close() to finish within ${closeBoundMs} ms; it took ${took} ms`);
  }
  expectSame(b.value, a.value, "the exit of a second close() (close() is idempotent)");
  const closed = await peer.closed("closed after close()");
  expectSame(closed, a.value, "closed (close() resolves with the same value as closed)");
  expectExit(a.value, { requested: true }, "the exit of close() while the peer ran");
  const third = await within(closeBoundMs, "close() after close() to resolve", callClose(peer));
  expectSame(third, a.value, "the exit of close() after the transport closed");
  await within(
    closeBoundMs,
    "[Symbol.asyncDispose]() after close() to resolve",
    callDispose(peer.transport),
  );
  await output.toEnd("readable to end after close()");
}

async function checkClosedOnce(peer: PeerSession): Promise<void> {
  const transport = peer.transport;
  const closed = transport.closed;
  if (typeof closed?.then !== "function") {
    throw new Error(`Expected transport.closed to be a promise; got ${describe(closed)}`);
  }
  let resolutions = 0;
  let rejection: { reason: unknown } | undefined;
  closed.then(
    () => resolutions++,
    (reason: unknown) => {
      rejection = { reason };
    },
  );
  if (transport.closed !== closed) {
    throw new Error("Expected transport.closed to be the same promise on every access");
  }
  const output = peer.output();
  await peer.write(JSON.stringify(echoFrame({ alive: true })));
  await output.waitFor(1, "the echo of a line");
  if (await settlesSoon(closed)) {
    throw new Error("Expected closed to stay pending while the peer runs; it already settled");
  }
  await peer.write(op("exit", { code: 7 }));
  await output.toEnd("readable to end after the peer exited 7");
  const exit = await peer.closed("the peer's exit with code 7 (closed must resolve, not reject)");
  expectExit(exit, { code: 7, signal: null, requested: false }, "closed after the peer exited 7");
  const again = await within(
    peer.bounds.closeBoundMs,
    "close() after the peer exited to resolve",
    callClose(peer),
  );
  expectSame(again, exit, "the exit of close() after the peer exited (same as closed)");
  await pause(0);
  if (rejection !== undefined) {
    throw new Error(
      `Expected closed never to reject; it rejected with ${describe(rejection.reason)}`,
    );
  }
  if (resolutions !== 1) {
    throw new Error(
      `Expected closed to resolve exactly once; its handlers ran ${resolutions} times`,
    );
  }
  if (transport.closed !== closed) {
    throw new Error("Expected transport.closed to stay the same promise after the exit");
  }
}

async function checkStderr(peer: PeerSession): Promise<void> {
  const stderr = peer.transport.stderr;
  if (stderr === undefined) return;
  if (typeof stderr?.getReader !== "function") {
    throw new Error(`Expected transport.stderr to be a ReadableStream; got ${describe(stderr)}`);
  }
  const line = `conformance stderr ✓ ${crypto.randomUUID()}`;
  const reader = peer.adopt(stderr.getReader());
  await peer.write(op("stderr", { line }));
  const seen: unknown[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), peer.bounds.timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === "timeout") {
        throw new Error(
          `Expected the stderr line ${JSON.stringify(line)} on transport.stderr within ` +
            `${peer.bounds.timeoutMs} ms; got ${excerpt(seen)}`,
        );
      }
      if (next.done) {
        throw new Error(
          `Expected the stderr line ${JSON.stringify(line)} on transport.stderr; ` +
            `the stream ended after ${excerpt(seen)}`,
        );
      }
      seen.push(next.value);
      if (next.value === line) return;
      if (typeof next.value === "string" && next.value.includes(line)) {
        throw new Error(
          `Expected each transport.stderr chunk to be one line without newline; got ${
            JSON.stringify(next.value)
          }`,
        );
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

async function checkCancelReadable(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(JSON.stringify(echoFrame({ before: "cancel" })));
  await output.waitFor(1, "the echo of a line written before cancelling readable");
  const pending = output.readPending();
  const cancelled = await settle(
    within(peer.bounds.timeoutMs, "readable's cancel() to resolve", output.cancel()),
  );
  if (cancelled.status === "rejected") throw cancelled.reason;
  const ended = await settle(
    within(peer.bounds.timeoutMs, "a read pending during cancel() to end", pending),
  );
  if (ended.status === "rejected") throw ended.reason;
  if (!ended.value) {
    throw new Error("Expected a read pending during cancel() to end (done); it got a chunk");
  }
  const late = await settle(
    within(
      peer.bounds.timeoutMs,
      "a write after readable was cancelled to settle",
      callWrite(peer.transport, JSON.stringify(echoFrame({ after: "cancel" }))),
    ),
  );
  if (late.status === "rejected" && !isKind(late.reason, "process_exited")) {
    throw new Error(
      "Expected a write after readable was cancelled to resolve, or reject with a " +
        `process_exited DuplexError; it rejected with ${describe(late.reason)}`,
      { cause: late.reason },
    );
  }
  const exit = await within(
    peer.bounds.closeBoundMs,
    "close() after readable was cancelled to resolve",
    callClose(peer),
  );
  expectSame(await peer.closed("closed after close()"), exit, "closed after close()");
}

// ---------------------------------------------------------------------------
// The harness

/** One open peer, for one step: its transport, readers to clean up, bounds. */
class PeerSession {
  readonly transport: Transport;
  readonly bounds: Bounds;
  #output: OutputReader | undefined;
  #readers: ReadableStreamDefaultReader<unknown>[] = [];

  constructor(transport: Transport, bounds: Bounds) {
    this.transport = transport;
    this.bounds = bounds;
  }

  /** The reader of `readable` (one per step). */
  output(): OutputReader {
    this.#output ??= new OutputReader(this.transport, this.bounds.timeoutMs);
    return this.#output;
  }

  /** Registers a reader to cancel when the step ends. */
  adopt<T>(reader: ReadableStreamDefaultReader<T>): ReadableStreamDefaultReader<T> {
    this.#readers.push(reader as ReadableStreamDefaultReader<unknown>);
    return reader;
  }

  /** Writes a line; it must resolve in time. */
  async write(line: string): Promise<void> {
    await within(
      this.bounds.timeoutMs,
      `write(${excerpt(line, 80)}) to resolve`,
      callWrite(
        this.transport,
        line,
      ),
    );
  }

  /** Awaits `closed`, bounded; a rejection is a contract failure. */
  async closed(what: string): Promise<TransportExit> {
    const outcome = await settle(within(this.bounds.timeoutMs, what, this.transport.closed));
    if (outcome.status === "fulfilled") return outcome.value;
    const reason = outcome.reason;
    if (reason instanceof TimeoutError) throw reason;
    throw new Error(`Expected closed never to reject; it rejected with ${describe(reason)}`, {
      cause: reason,
    });
  }

  /** Closes the transport and releases every reader, bounded; reports a failure to close. */
  async cleanUp(): Promise<void> {
    let failure: unknown = undefined;
    const closing = await settle(
      within(
        this.bounds.closeBoundMs,
        "close() at the end of the step to resolve",
        callClose(this),
      ),
    );
    if (closing.status === "rejected") failure = closing.reason;
    const readers = [...this.#readers];
    if (this.#output !== undefined) readers.push(this.#output.reader);
    for (const reader of readers) {
      await settle(
        within(this.bounds.timeoutMs, "a reader to cancel", reader.cancel().catch(() => {})),
      );
    }
    if (failure !== undefined) throw failure;
  }
}

/** Reads `readable` through a {@linkcode FrameDecoder}, checking the chunks. */
class OutputReader {
  readonly frames: Record<string, unknown>[] = [];
  readonly diagnostics: DecodeDiagnostic[] = [];
  readonly reader: ReadableStreamDefaultReader<Uint8Array | string>;
  readonly #decoder: FrameDecoder;
  readonly #timeoutMs: number;
  /** With `info.freshChunks`, the buffers seen so far (each chunk must bring its own). */
  readonly #buffers: WeakSet<ArrayBufferLike> | undefined;
  #inflight: Promise<boolean> | undefined;
  #done = false;
  #failure: Error | undefined;

  constructor(transport: Transport, timeoutMs: number) {
    const readable = transport.readable;
    if (typeof readable?.getReader !== "function") {
      throw new Error(
        `Expected transport.readable to be a ReadableStream; got ${describe(readable)}`,
      );
    }
    this.reader = readable.getReader();
    this.#timeoutMs = timeoutMs;
    this.#buffers = transport.info?.freshChunks === true ? new WeakSet() : undefined;
    this.#decoder = new FrameDecoder({
      onFrame: (frame) => this.frames.push(frame),
      onDiagnostic: (diagnostic) => this.diagnostics.push(diagnostic),
    });
  }

  /** Waits until `count` frames were decoded in all. */
  async waitFor(count: number, what: string): Promise<void> {
    await this.#until(() => this.frames.length >= count, what);
    if (this.frames.length < count) {
      throw new Error(
        `Expected ${what}: ${count} frame(s); readable ended after ${this.frames.length}: ` +
          `${excerpt(this.frames)}${this.#diagnosed()}`,
      );
    }
  }

  /** Reads until `readable` ends (then the decoder is ended too). */
  async toEnd(what: string): Promise<void> {
    await this.#until(() => false, what);
  }

  /** Starts a read (or joins the one in flight); resolves with true when it found the end. */
  readPending(): Promise<boolean> {
    this.#inflight ??= this.#readOnce().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** Cancels `readable` through the reader. */
  cancel(): Promise<void> {
    try {
      return this.reader.cancel();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #until(done: () => boolean, what: string): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.#timeoutMs);
    });
    try {
      while (!done() && !this.#done) {
        this.#throwIfBroken();
        const next = await Promise.race([this.readPending(), timeout]);
        if (next === "timeout") {
          throw new TimeoutError(
            `Expected ${what} within ${this.#timeoutMs} ms; got ${this.frames.length} frame(s): ` +
              `${excerpt(this.frames)}${this.#diagnosed()}`,
          );
        }
      }
      this.#throwIfBroken();
    } finally {
      clearTimeout(timer);
    }
  }

  async #readOnce(): Promise<boolean> {
    let result: ReadableStreamReadResult<Uint8Array | string>;
    try {
      result = await this.reader.read();
    } catch (error) {
      this.#done = true;
      this.#failure ??= new Error(
        `Expected readable to end when the peer's output ends; it errored: ${describe(error)}`,
        { cause: error },
      );
      return true;
    }
    if (result.done) {
      this.#done = true;
      this.#guard(() => this.#decoder.end());
      return true;
    }
    const chunk: unknown = result.value;
    if (typeof chunk === "string") {
      if (chunk.includes("\n")) {
        this.#failure ??= new Error(
          "Expected each string chunk of readable to be one whole line without its newline; " +
            `got ${excerpt(chunk)}`,
        );
      }
    } else if (!(chunk instanceof Uint8Array)) {
      this.#failure ??= new Error(
        `Expected readable to yield Uint8Array or string chunks; got ${describe(chunk)}`,
      );
      return false;
    } else if (this.#buffers !== undefined) {
      if (this.#buffers.has(chunk.buffer)) {
        this.#failure ??= new Error(
          "Expected each readable chunk to have a buffer of its own (info.freshChunks is true); " +
            "one shares its buffer with an earlier chunk",
        );
      }
      this.#buffers.add(chunk.buffer);
    }
    this.#guard(() => this.#decoder.push(chunk));
    return false;
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#failure ??= new Error(`The decoder failed: ${describe(error)}`, { cause: error });
    }
  }

  #throwIfBroken(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  #diagnosed(): string {
    if (this.diagnostics.length === 0) return "";
    const list = this.diagnostics.map((d) => `${d.kind} ${JSON.stringify(d.excerpt)}`);
    return `; skipped lines: ${excerpt(list.join(", "))}`;
  }
}

async function withPeer(open: Open, bounds: Bounds, check: Check): Promise<void> {
  const transport = await openPeer(open, bounds);
  const peer = new PeerSession(transport, bounds);
  let failed: { error: unknown } | undefined;
  try {
    await check(peer);
  } catch (error) {
    failed = { error };
  }
  try {
    await peer.cleanUp();
  } catch (error) {
    failed ??= { error };
  }
  if (failed !== undefined) throw failed.error;
}

async function openPeer(open: Open, bounds: Bounds): Promise<Transport> {
  let opening: Promise<ConformancePeer>;
  try {
    opening = Promise.resolve(open());
  } catch (error) {
    throw new Error(`Cannot open a conformance peer: open() threw: ${describe(error)}`, {
      cause: error,
    });
  }
  const outcome = await settle(within(bounds.timeoutMs, "open() to resolve", opening));
  if (outcome.status === "rejected") {
    // A peer that opens late is closed, so nothing outlives the step.
    opening.then((late) => late?.transport?.close?.()).catch(() => {});
    throw new Error(`Cannot open a conformance peer: ${describe(outcome.reason)}`, {
      cause: outcome.reason,
    });
  }
  const transport = outcome.value?.transport;
  const missing = ["write", "endInput", "close"].filter((name) =>
    typeof (transport as unknown as Record<string, unknown> | undefined)?.[name] !== "function"
  );
  if (transport === undefined || transport === null || missing.length > 0) {
    throw new Error(
      `Cannot use the opened peer: open() must resolve with { transport } where transport ` +
        `has write, endInput and close; missing ${missing.join(", ")}`,
    );
  }
  if (typeof transport.info?.kind !== "string" || transport.info.kind === "") {
    throw new Error(
      `Expected transport.info.kind to be a non-empty string; got ${describe(transport.info)}`,
    );
  }
  return transport;
}

// ---------------------------------------------------------------------------
// Helpers

class TimeoutError extends Error {
  override name = "TimeoutError";
}

function op(name: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ type: "conformance", op: name, ...fields });
}

function echoFrame(fields: Record<string, unknown>): Record<string, unknown> {
  return { type: "conformance", op: "echo", ...fields };
}

function callWrite(transport: Transport, line: string): Promise<void> {
  try {
    return Promise.resolve(transport.write(line));
  } catch (error) {
    return Promise.reject(
      new Error(`Expected write() to return a promise; it threw: ${describe(error)}`, {
        cause: error,
      }),
    );
  }
}

function callEndInput(transport: Transport): Promise<void> {
  try {
    return Promise.resolve(transport.endInput());
  } catch (error) {
    return Promise.reject(
      new Error(`Expected endInput() to return a promise; it threw: ${describe(error)}`, {
        cause: error,
      }),
    );
  }
}

function callClose(peer: PeerSession): Promise<TransportExit> {
  try {
    return Promise.resolve(peer.transport.close()).catch((error: unknown) => {
      throw new Error(`Expected close() to resolve; it rejected with ${describe(error)}`, {
        cause: error,
      });
    });
  } catch (error) {
    return Promise.reject(
      new Error(`Expected close() to return a promise; it threw: ${describe(error)}`, {
        cause: error,
      }),
    );
  }
}

function callDispose(transport: Transport): Promise<void> {
  try {
    const dispose = transport[Symbol.asyncDispose];
    if (typeof dispose !== "function") {
      return Promise.reject(new Error("Expected the transport to have [Symbol.asyncDispose]()"));
    }
    return Promise.resolve(dispose.call(transport));
  } catch (error) {
    return Promise.reject(
      new Error(
        `Expected [Symbol.asyncDispose]() to return a promise; it threw: ${describe(error)}`,
        {
          cause: error,
        },
      ),
    );
  }
}

/** Rejects with a {@linkcode TimeoutError} naming `what` when `promise` takes longer than `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`Expected ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return promise.then(
    (value) => ({ status: "fulfilled", value }),
    (reason: unknown) => ({ status: "rejected", reason }),
  );
}

async function pause(ms: number): Promise<void> {
  await new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** Tells whether a promise settles within a few macrotasks. */
async function settlesSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 3 && !settled; i++) await pause(0);
  return settled;
}

function isKind(error: unknown, kind: string): boolean {
  if (error instanceof DuplexError) return error.kind === kind;
  // A DuplexError from another copy of the package.
  return error instanceof Error && error.name === "DuplexError" &&
    (error as { kind?: unknown }).kind === kind;
}

function expectFrames(actual: unknown[], expected: unknown[], what: string): void {
  const length = Math.max(actual.length, expected.length);
  for (let i = 0; i < length; i++) {
    if (i >= actual.length || i >= expected.length || !sameJson(actual[i], expected[i])) {
      throw new Error(
        `Expected ${what} to be ${expected.length} frame(s) equal to those sent; ` +
          `frame ${i} differs: expected ${excerpt(expected[i])}, got ${excerpt(actual[i])} ` +
          `(got ${actual.length} frame(s) in all)`,
      );
    }
  }
}

function expectNoDiagnostics(output: OutputReader, what: string): void {
  if (output.diagnostics.length === 0) return;
  const first = output.diagnostics[0]!;
  throw new Error(
    `Expected ${what} to decode cleanly; the decoder reported ${output.diagnostics.length} ` +
      `skipped or repaired line(s), first: ${first.kind}: ${first.message} ` +
      `(${JSON.stringify(first.excerpt)})`,
  );
}

function expectExit(exit: unknown, expected: Partial<TransportExit>, what: string): void {
  if (typeof exit !== "object" || exit === null) {
    throw new Error(`Expected ${what} to be a TransportExit object; got ${describe(exit)}`);
  }
  const record = exit as Record<string, unknown>;
  for (const [key, value] of Object.entries(expected)) {
    if (record[key] !== value) {
      throw new Error(
        `Expected ${what} to have ${key} ${JSON.stringify(value)}; got ${
          JSON.stringify(record[key])
        } (exit: ${excerpt(exit)})`,
      );
    }
  }
  if (typeof record.stderrTail !== "string") {
    throw new Error(`Expected ${what} to have a string stderrTail; got ${excerpt(exit)}`);
  }
}

function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (!sameJson(actual, expected)) {
    throw new Error(`Expected ${what} to equal ${excerpt(expected)}; got ${excerpt(actual)}`);
  }
}

/** Deep equality of JSON-like values; object key order and `undefined` members do not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) {
    if (!sameJson(left[key], right[key])) return false;
  }
  return true;
}

function describe(value: unknown): string {
  if (value instanceof Error) {
    const kind = (value as { kind?: unknown }).kind;
    return `${value.name}${typeof kind === "string" ? ` (kind ${kind})` : ""}: ${value.message}`;
  }
  return excerpt(value);
}

function excerpt(value: unknown, max = 300): string {
  let text: string;
  try {
    text = typeof value === "string"
      ? JSON.stringify(value)
      : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more)`;
}
