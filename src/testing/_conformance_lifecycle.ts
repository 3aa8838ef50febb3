// This module is browser compatible.
/**
 * The conformance checks of how a transport ends: the peer exiting by itself
 * (after a last line without newline, in the middle of a line), writes after
 * that, `endInput()`, `close()`, the single settlement of `closed`, streams
 * that have ended by the time `closed` resolves, and cancelling `readable`.
 * Private to `@duplex/claude/testing`.
 *
 * @module
 */

import type { TransportExit } from "../errors.ts";
import {
  describeError,
  expectExit,
  expectFrames,
  expectSame,
  isKind,
  pause,
  settle,
  settlesSoon,
  within,
} from "./_conformance_assert.ts";
import {
  callClose,
  callDispose,
  callEndInput,
  callWrite,
  echoFrame,
  op,
  type PeerSession,
} from "./_conformance_harness.ts";
import { drainEnded } from "./_conformance_reader.ts";

/** `eof-without-newline`: a last line without newline is delivered; `closed` has code 0. */
export function checkEofWithoutNewline(peer: PeerSession): Promise<void> {
  return emitThenExit(
    peer,
    { data: '{"x":1}', code: 0, frames: [{ x: 1 }] },
    'the last line `{"x":1}` written without newline before the exit (after FrameDecoder.end())',
  );
}

/** `exit-mid-message`: `closed` has the exit code; the cut line is not a frame. */
export function checkExitMidMessage(peer: PeerSession): Promise<void> {
  return emitThenExit(
    peer,
    { data: '{"before":true}\n{"a":', code: 3, frames: [{ before: true }] },
    'the output `{"before":true}\\n{"a":` cut by the exit (only the whole line is a frame)',
  );
}

/* The peer writes `data` and exits with `code`: readable ends with `frames`, closed has the code. */
async function emitThenExit(
  peer: PeerSession,
  { data, code, frames }: { data: string; code: number; frames: unknown[] },
  what: string,
): Promise<void> {
  const output = peer.output();
  await peer.write(op("emit", { data }));
  await peer.write(op("exit", { code }));
  await output.toEnd(`readable to end after the peer exited with code ${code}`);
  expectFrames(output.frames, frames, what);
  const exit = await peer.closed(`the peer's exit with code ${code}`);
  const expected = { code, signal: null, requested: false };
  expectExit(exit, expected, `closed after the peer exited ${code}`);
}

/** `write-after-exit`: writes after the exit reject with a `process_exited` DuplexError. */
export async function checkWriteAfterExit(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("exit", { code: 0 }));
  await output.toEnd("readable to end after the peer exited");
  await peer.closed("the peer's exit");
  const expected = "to reject with a DuplexError of kind process_exited";
  for (const attempt of ["a write", "a second write"]) {
    let writing: Promise<void>;
    try {
      writing = peer.transport.write(JSON.stringify(echoFrame({ late: true })));
    } catch (error) {
      throw new Error(
        `Expected ${attempt} after the peer exited to return a rejected promise; ` +
          `write() threw synchronously: ${describeError(error)}`,
        { cause: error },
      );
    }
    const what = `${attempt} after the exit to settle`;
    const outcome = await settle(within(peer.bounds.timeoutMs, what, writing));
    if (outcome.status === "fulfilled") {
      throw new Error(`Expected ${attempt} after the peer exited ${expected}; it resolved`);
    }
    if (!isKind(outcome.reason, "process_exited")) {
      throw new Error(
        `Expected ${attempt} after the peer exited ${expected}; ` +
          `it rejected with ${describeError(outcome.reason)}`,
        { cause: outcome.reason },
      );
    }
  }
}

/** `end-input`: after `endInput()` (twice) the peer exits with code 0 and `readable` ends. */
export async function checkEndInput(peer: PeerSession): Promise<void> {
  const output = peer.output();
  const sent = echoFrame({ before: "endInput" });
  await peer.write(JSON.stringify(sent));
  await output.waitFor(1, "the echo of a line written before endInput()");
  const { timeoutMs } = peer.bounds;
  await within(timeoutMs, "endInput() to resolve", callEndInput(peer.transport));
  await within(
    timeoutMs,
    "a second endInput() to resolve (it is idempotent)",
    callEndInput(peer.transport),
  );
  await output.toEnd("readable to end after endInput() (the peer should see EOF and exit)");
  expectFrames(output.frames, [sent], "the output around endInput()");
  const exit = await peer.closed("the peer's exit after endInput()");
  expectExit(exit, { code: 0, signal: null }, "closed after endInput()");
}

/** `close`: idempotent, bounded, equal to `closed`; `[Symbol.asyncDispose]()` works after it. */
export async function checkClose(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(JSON.stringify(echoFrame({ before: "close" })));
  await output.waitFor(1, "the echo of a line written before close()");
  const { closeBoundMs } = peer.bounds;
  const started = Date.now();
  const [a, b] = await Promise.allSettled([
    within(closeBoundMs, "close() to resolve (bounded by closeBoundMs)", callClose(peer.transport)),
    within(
      closeBoundMs,
      "a second close() to resolve (bounded by closeBoundMs)",
      callClose(peer.transport),
    ),
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
  const third = await within(
    closeBoundMs,
    "close() after close() to resolve",
    callClose(peer.transport),
  );
  expectSame(third, a.value, "the exit of close() after the transport closed");
  await within(
    closeBoundMs,
    "[Symbol.asyncDispose]() after close() to resolve",
    callDispose(peer.transport),
  );
  await output.toEnd("readable to end after close()");
}

/** `closed-once`: one promise, pending while the peer runs, resolved once, never rejected. */
export async function checkClosedOnce(peer: PeerSession): Promise<void> {
  const transport = peer.transport;
  const closed = transport.closed;
  if (typeof closed?.then !== "function") {
    throw new Error(`Expected transport.closed to be a promise; got ${describeError(closed)}`);
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
    callClose(transport),
  );
  expectSame(again, exit, "the exit of close() after the peer exited (same as closed)");
  await pause(0);
  if (rejection !== undefined) {
    throw new Error(
      `Expected closed never to reject; it rejected with ${describeError(rejection.reason)}`,
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

/**
 * `ended-after-exit`: once `closed` resolved after the peer exited by itself
 * (nothing read until then), `readable` and `stderr` hold all the peer wrote
 * and have ended: every read returns at once, the last one done.
 */
export async function checkEndedAfterExit(peer: PeerSession): Promise<void> {
  const stderr = peer.stderr();
  const line = `conformance stderr before the exit ${crypto.randomUUID()}`;
  await peer.write(op("emit", { data: '{"before":"exit"}\n{"cut":' }));
  await peer.write(op("stderr", { line }));
  await peer.write(op("exit", { code: 0 }));
  await peer.closed("the peer's exit with code 0, with nothing read");
  const output = peer.output();
  await output.drainEnded("readable, once closed resolved after the peer exited,");
  expectFrames(output.frames, [{ before: "exit" }], "the output read after closed resolved");
  if (stderr === undefined) return;
  const lines = await drainEnded(stderr, "stderr, once closed resolved after the peer exited,");
  if (!lines.includes(line)) {
    throw new Error(
      `Expected stderr, read after closed resolved, to hold the line ${JSON.stringify(line)} ` +
        `the peer wrote before it exited; got ${describeError(lines)}`,
    );
  }
}

/**
 * `ended-after-close`: once `close()` resolved (so `closed` too) while the
 * peer ran, `readable` and `stderr` have ended: every read returns at once,
 * the last one done.
 */
export async function checkEndedAfterClose(peer: PeerSession): Promise<void> {
  const stderr = peer.stderr();
  const output = peer.output();
  const sent = echoFrame({ before: "close" });
  await peer.write(JSON.stringify(sent));
  await output.waitFor(1, "the echo of a line written before close()");
  await peer.write(op("emit", { data: '{"cut":' }));
  const exit: TransportExit = await within(
    peer.bounds.closeBoundMs,
    "close() to resolve",
    callClose(peer.transport),
  );
  expectExit(exit, { requested: true }, "the exit of close() while the peer ran");
  await output.drainEnded("readable, once close() resolved,");
  expectFrames(output.frames, [sent], "the output read around close()");
  if (stderr !== undefined) await drainEnded(stderr, "stderr, once close() resolved,");
}

/** `cancel-readable`: cancelling `readable` ends a pending read; the transport still closes. */
export async function checkCancelReadable(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(JSON.stringify(echoFrame({ before: "cancel" })));
  await output.waitFor(1, "the echo of a line written before cancelling readable");
  const { timeoutMs, closeBoundMs } = peer.bounds;
  const pending = output.readPending();
  const cancelled = await settle(
    within(timeoutMs, "readable's cancel() to resolve", output.cancel()),
  );
  if (cancelled.status === "rejected") throw cancelled.reason;
  const ended = await settle(within(timeoutMs, "a read pending during cancel() to end", pending));
  if (ended.status === "rejected") throw ended.reason;
  if (!ended.value) {
    throw new Error("Expected a read pending during cancel() to end (done); it got a chunk");
  }
  const late = await settle(
    within(
      timeoutMs,
      "a write after readable was cancelled to settle",
      callWrite(peer.transport, JSON.stringify(echoFrame({ after: "cancel" }))),
    ),
  );
  if (late.status === "rejected" && !isKind(late.reason, "process_exited")) {
    throw new Error(
      "Expected a write after readable was cancelled to resolve, or reject with a " +
        `process_exited DuplexError; it rejected with ${describeError(late.reason)}`,
      { cause: late.reason },
    );
  }
  const exit = await within(
    closeBoundMs,
    "close() after readable was cancelled to resolve",
    callClose(peer.transport),
  );
  expectSame(await peer.closed("closed after close()"), exit, "closed after close()");
}
