// This module is browser compatible.
/**
 * The conformance checks of what comes out of a transport while its peer
 * runs: lines round-trip in order, output cut anywhere reassembles, UTF-8
 * survives, chunks are bytes that never change, stderr lines arrive.
 * Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { abortable, deadline } from "../_deadline.ts";
import {
  describeError,
  expectFrames,
  expectNoDiagnostics,
  pause,
  settle,
  show,
  within,
} from "./_conformance_assert.ts";
import { callWrite, echoFrame, op, type PeerSession } from "./_conformance_harness.ts";

/** How many lines `ordering` writes without waiting. */
export const LOAD_LINES = 500;

const UTF8_TEXT = "héllo wörld · ñ ß ø — 日本語のテキスト 中文 한국어 · 👋🏽 👨‍👩‍👧‍👦 🎉 𝄞 ∑≠∞ · end";
/** A gap between the pieces of one line, so that they travel apart. */
const PIECE_GAP_MS = 30;

/** `round-trip`: three lines written come back as the same frames, in order. */
export async function checkRoundTrip(peer: PeerSession): Promise<void> {
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

/** `ordering`: many lines written without waiting come back in order. */
export async function checkOrdering(peer: PeerSession): Promise<void> {
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
        `${show(seqs)})`,
    );
  }
  expectFrames(output.frames, sent, "the echoed frames");
}

/** `partial-output`: a line emitted in pieces arrives as one frame. */
export async function checkPartialOutput(peer: PeerSession): Promise<void> {
  const output = peer.output();
  await peer.write(op("emit", { data: '{"a":' }));
  await pause(PIECE_GAP_MS);
  await peer.write(op("emit", { data: "1}\n" }));
  await output.waitFor(1, 'a frame from `{"a":` and `1}\\n` emitted in two pieces');
  expectFrames(output.frames, [{ a: 1 }], 'the frame emitted as `{"a":` + `1}\\n`');
  await peer.write(op("emit", { data: '{"b":[tr' }));
  await pause(PIECE_GAP_MS);
  await peer.write(op("emit", { data: 'ue,null],"c":"x' }));
  await peer.write(op("emit", { data: 'y"}\n{"d":2}' }));
  await pause(PIECE_GAP_MS);
  await peer.write(op("emit", { data: "\n" }));
  await output.waitFor(3, "the frames of a line emitted in three pieces and a line after it");
  expectFrames(
    output.frames,
    [{ a: 1 }, { b: [true, null], c: "xy" }, { d: 2 }],
    "the frames emitted in pieces",
  );
  expectNoDiagnostics(output.diagnostics, "the frames emitted in pieces");
}

/** `utf8`: multi-byte characters arrive intact, echoed and emitted. */
export async function checkUtf8(peer: PeerSession): Promise<void> {
  const echoed = echoFrame({ text: UTF8_TEXT, key: { "キー 🔑": "値 ✓" } });
  const emitted = { utf8: UTF8_TEXT.repeat(40), last: "末尾 🏁" };
  const output = peer.output();
  await peer.write(JSON.stringify(echoed));
  await peer.write(op("emit", { data: `${JSON.stringify(emitted)}\n` }));
  await output.waitFor(2, "an echoed and an emitted line of multi-byte text");
  expectFrames(output.frames, [echoed, emitted], "the multi-byte text");
  expectNoDiagnostics(output.diagnostics, "the multi-byte text");
}

/**
 * `byte-chunks`: every chunk of `readable` is a `Uint8Array` (the reader
 * checks each one, in every step), also for several lines in one write and a
 * line of 100 KiB; and no chunk changes after it was read.
 */
export async function checkByteChunks(peer: PeerSession): Promise<void> {
  const echoed = echoFrame({ chunks: "bytes" });
  const large = { large: "x".repeat(100 * 1024), end: "✓" };
  const output = peer.output();
  await peer.write(JSON.stringify(echoed));
  await peer.write(op("emit", { data: '{"one":1}\n{"two":2}\n{"three":3}\n' }));
  await peer.write(op("emit", { data: `${JSON.stringify(large)}\n` }));
  await output.waitFor(5, "an echo, three lines emitted at once and a line of 100 KiB");
  expectFrames(
    output.frames,
    [echoed, { one: 1 }, { two: 2 }, { three: 3 }, large],
    "the frames read as bytes",
  );
  // Give a transport that reuses its buffer the time to overwrite a chunk already handed out.
  await pause(PIECE_GAP_MS);
  output.expectChunksUnchanged();
}

/** `stderr`: a stderr line of the peer arrives on `transport.stderr` as one chunk. */
export async function checkStderr(peer: PeerSession): Promise<void> {
  const reader = peer.stderr();
  if (reader === undefined) return;
  const line = `conformance stderr ✓ ${crypto.randomUUID()}`;
  await peer.write(op("stderr", { line }));
  const seen: unknown[] = [];
  using limit = deadline(peer.bounds.timeoutMs);
  for (;;) {
    const next = await settle(abortable(reader.read(), limit.signal));
    if (next.status === "rejected") {
      if (limit.expired) {
        throw new Error(
          `Expected the stderr line ${JSON.stringify(line)} on transport.stderr within ` +
            `${peer.bounds.timeoutMs} ms; got ${show(seen)}`,
        );
      }
      throw new Error(
        `Expected transport.stderr not to error; it did: ${describeError(next.reason)}`,
        {
          cause: next.reason,
        },
      );
    }
    const { done, value } = next.value;
    if (done) {
      throw new Error(
        `Expected the stderr line ${JSON.stringify(line)} on transport.stderr; ` +
          `the stream ended after ${show(seen)}`,
      );
    }
    seen.push(value);
    if (value === line) return;
    if (typeof value === "string" && value.includes(line)) {
      throw new Error(
        `Expected each transport.stderr chunk to be one line without newline; got ${
          JSON.stringify(value)
        }`,
      );
    }
  }
}
