/**
 * The transport conformance suite against the in-memory ScriptedCli (every
 * chunking), and the suite's own failures against transports broken on
 * purpose: each contract can fail.
 */

import assert from "node:assert/strict";
import { conformanceCli, type ConformanceCliOptions } from "../../src/testing/conformance_peer.ts";
import {
  CONFORMANCE_CONTRACTS,
  type ConformanceContext,
  type ConformancePeer,
  runTransportConformance,
} from "../../src/testing/transport_conformance.ts";
import type { Transport, TransportExit } from "../../src/transport/transport.ts";
import { DuplexError } from "../../src/errors.ts";
import { messageOf } from "../../src/_values.ts";

function openScripted(options: ConformanceCliOptions): () => Promise<ConformancePeer> {
  return async () => ({
    transport: await conformanceCli(options).transport({ signal: new AbortController().signal }),
  });
}

const VARIANTS: [string, ConformanceCliOptions][] = [
  ['chunking "line"', {}],
  ["chunking { maxChunk: 7 }", { chunking: { maxChunk: 7 } }],
  ['chunking "bytes"', { chunking: "bytes" }],
  ["byte by byte", { chunking: { maxChunk: 1 } }],
];

for (const [name, options] of VARIANTS) {
  Deno.test(`ScriptedCli passes the transport conformance suite (${name})`, async (t) => {
    await runTransportConformance(t, openScripted(options));
  });
}

/** A context that records which steps failed, and why, instead of failing the test. */
function recorder(): ConformanceContext & { passed: string[]; failed: Map<string, unknown> } {
  const passed: string[] = [];
  const failed = new Map<string, unknown>();
  return {
    passed,
    failed,
    async step(name: string, fn: () => Promise<void> | void): Promise<boolean> {
      const id = name.slice(0, name.indexOf(":"));
      try {
        await fn();
        passed.push(id);
        return true;
      } catch (error) {
        failed.set(id, error);
        return false;
      }
    },
  };
}

/** A transport that forwards to another, with parts replaced. */
function wrap(inner: Transport, parts: Partial<Transport>): Transport {
  const stderr = parts.stderr ?? inner.stderr;
  return {
    readable: parts.readable ?? inner.readable,
    ...(stderr === undefined ? {} : { stderr }),
    info: parts.info ?? inner.info,
    closed: parts.closed ?? inner.closed,
    write: parts.write ?? ((line) => inner.write(line)),
    endInput: parts.endInput ?? (() => inner.endInput()),
    close: parts.close ?? (() => inner.close()),
    [Symbol.asyncDispose]: async () => {
      await inner.close();
    },
  };
}

/** Drops output after the last newline seen (a transport that loses an unterminated last line). */
function dropUnterminated(readable: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return readable.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        held += decoder.decode(chunk, { stream: true });
        const cut = held.lastIndexOf("\n");
        if (cut >= 0) {
          controller.enqueue(encoder.encode(held.slice(0, cut + 1)));
          held = held.slice(cut + 1);
        }
      },
    }),
  );
}

async function runBroken(
  broken: (inner: Transport) => Transport,
  only: readonly string[],
): Promise<ReturnType<typeof recorder>> {
  const t = recorder();
  await runTransportConformance(
    t,
    async () => {
      const inner = await conformanceCli({ chunking: { maxChunk: 5 } }).transport({
        signal: new AbortController().signal,
      });
      return { transport: broken(inner) };
    },
    {
      timeoutMs: 500,
      closeBoundMs: 500,
      skip: CONFORMANCE_CONTRACTS.filter((id) => !only.includes(id)),
    },
  );
  return t;
}

Deno.test("the conformance suite fails a transport that loses an unterminated last line", async () => {
  const t = await runBroken(
    (inner) => wrap(inner, { readable: dropUnterminated(inner.readable) }),
    ["round-trip", "eof-without-newline", "exit-mid-message"],
  );
  assert.deepEqual(t.passed, ["round-trip", "exit-mid-message"]);
  assert.deepEqual([...t.failed.keys()], ["eof-without-newline"]);
  assert.match(messageOf(t.failed.get("eof-without-newline")), /without newline.*got undefined/);
});

Deno.test("the conformance suite fails a transport whose writes after the exit resolve", async () => {
  const t = await runBroken(
    (inner) => {
      let ended = false;
      inner.closed.then(() => (ended = true));
      return wrap(inner, { write: (line) => ended ? Promise.resolve() : inner.write(line) });
    },
    ["write-after-exit", "closed-once"],
  );
  assert.deepEqual(t.passed, ["closed-once"]);
  assert.match(
    messageOf(t.failed.get("write-after-exit")),
    /after the peer exited to reject with a DuplexError of kind process_exited; it resolved/,
  );
});

Deno.test("the conformance suite fails a transport whose write rejects with the wrong kind", async () => {
  const t = await runBroken(
    (inner) =>
      wrap(inner, {
        write: (line) =>
          inner.write(line).catch(() => {
            throw new DuplexError("closed", "Cannot write: closed");
          }),
      }),
    ["write-after-exit"],
  );
  assert.match(
    messageOf(t.failed.get("write-after-exit")),
    /rejected with DuplexError \(kind closed\)/,
  );
});

Deno.test("the conformance suite fails close() that is not idempotent, and a rejecting closed", async () => {
  const t = await runBroken(
    (inner) => {
      let calls = 0;
      const rejecting = inner.closed.then((): TransportExit => {
        throw new Error("boom");
      });
      rejecting.catch(() => {});
      return wrap(inner, {
        closed: rejecting,
        close: async () => ({ ...(await inner.close()), code: calls++ }),
      });
    },
    ["close", "closed-once", "end-input"],
  );
  assert.deepEqual(t.passed, []);
  assert.match(messageOf(t.failed.get("close")), /second close\(\).*to equal/);
  assert.match(messageOf(t.failed.get("closed-once")), /closed never to reject.*boom/);
  assert.match(messageOf(t.failed.get("end-input")), /closed never to reject/);
});

/**
 * Passes `stream`'s chunks on but never ends (as when a descendant of the
 * peer holds its pipe open): only cancelling it ends it.
 */
function neverEnds<T>(stream: ReadableStream<T>): ReadableStream<T> {
  const reader = stream.getReader();
  return new ReadableStream<T>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (!done) controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

Deno.test("the conformance suite fails a transport whose readable yields strings", async () => {
  const t = await runBroken(
    (inner) =>
      wrap(inner, {
        readable: inner.readable.pipeThrough(new TextDecoderStream()) as unknown as ReadableStream<
          Uint8Array
        >,
      }),
    ["byte-chunks", "round-trip"],
  );
  assert.deepEqual(t.passed, []);
  for (const id of ["byte-chunks", "round-trip"]) {
    assert.match(
      messageOf(t.failed.get(id)),
      /^Expected readable to yield Uint8Array chunks only; got a string "/,
    );
  }
});

Deno.test("the conformance suite fails a transport that reuses the buffer of a chunk it handed out", async () => {
  const t = await runBroken(
    (inner) => {
      const reader = inner.readable.getReader();
      let previous: Uint8Array | undefined;
      // The next read overwrites the last chunk, as a reader into one reused buffer would.
      const reusing = new ReadableStream<Uint8Array>({
        async pull(controller) {
          previous?.fill(0x20);
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          previous = value;
        },
        cancel: (reason) => reader.cancel(reason),
      }, { highWaterMark: 0 });
      return wrap(inner, { readable: reusing });
    },
    ["round-trip", "byte-chunks"],
  );
  assert.deepEqual(t.passed, ["round-trip"]);
  assert.match(
    messageOf(t.failed.get("byte-chunks")),
    /never to change once enqueued; chunk 0 of \d+ changed after it was read/,
  );
});

Deno.test("the conformance suite fails a transport whose readable has not ended when closed resolves", async () => {
  const t = await runBroken(
    (inner) => wrap(inner, { readable: neverEnds(inner.readable) }),
    ["round-trip", "ended-after-exit", "ended-after-close"],
  );
  assert.deepEqual(t.passed, ["round-trip"]);
  assert.match(
    messageOf(t.failed.get("ended-after-exit")),
    /^Expected readable, once closed resolved after the peer exited, to have ended \(reads return done at once\); a read is still waiting after 1 frame\(s\): \[\{"before":"exit"\}\]/,
  );
  assert.match(
    messageOf(t.failed.get("ended-after-close")),
    /^Expected readable, once close\(\) resolved, to have ended \(reads return done at once\); a read is still waiting after 1 frame/,
  );
});

Deno.test("the conformance suite fails a transport whose stderr has not ended when closed resolves", async () => {
  const t = await runBroken(
    (inner) => wrap(inner, { stderr: neverEnds(inner.stderr!) }),
    ["stderr", "ended-after-exit", "ended-after-close"],
  );
  assert.deepEqual(t.passed, ["stderr"]);
  assert.match(
    messageOf(t.failed.get("ended-after-exit")),
    /^Expected stderr, once closed resolved after the peer exited, to have ended \(reads return done at once\); a read is still waiting after 1 chunk\(s\): \["conformance stderr before the exit /,
  );
  assert.match(
    messageOf(t.failed.get("ended-after-close")),
    /^Expected stderr, once close\(\) resolved, to have ended \(reads return done at once\); a read is still waiting after 0 chunk/,
  );
});

Deno.test("runTransportConformance refuses an unknown contract in skip", async () => {
  await assert.rejects(
    runTransportConformance(recorder(), openScripted({}), { skip: ["round-trp"] }),
    (error: unknown) => error instanceof DuplexError && error.kind === "invalid_argument",
  );
});

Deno.test("runTransportConformance checks its bounds: 1 to 2^31-1 ms, or Infinity", async () => {
  for (const bad of [{ timeoutMs: 0 }, { closeBoundMs: 2 ** 31 }, { timeoutMs: Number.NaN }]) {
    await assert.rejects(
      runTransportConformance(recorder(), openScripted({}), bad),
      { name: "RangeError", message: /^Cannot run the transport conformance suite: \w+Ms must be/ },
    );
  }
  const t = recorder();
  await runTransportConformance(t, openScripted({}), {
    timeoutMs: Infinity,
    closeBoundMs: Infinity,
    skip: CONFORMANCE_CONTRACTS.filter((id) => id !== "close"),
  });
  assert.deepEqual(t.passed, ["close"]);
});

Deno.test("the conformance suite fails a closed that never settles, within its bound", async () => {
  const t = await runBroken(
    (inner) => wrap(inner, { closed: new Promise<TransportExit>(() => {}) }),
    ["eof-without-newline", "closed-once"],
  );
  assert.match(
    messageOf(t.failed.get("eof-without-newline")),
    /Expected the peer's exit with code 0 within 500 ms/,
  );
  assert.match(messageOf(t.failed.get("closed-once")), /within 500 ms/);
});

Deno.test("the conformance suite fails a transport that declares freshChunks but shares buffers", async () => {
  const t = await runBroken(
    (inner) => {
      // Cuts every chunk in two views of one buffer, yet claims each chunk is fresh.
      const halves = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (chunk.length < 2) return controller.enqueue(chunk);
          const half = chunk.length >> 1;
          controller.enqueue(chunk.subarray(0, half));
          controller.enqueue(chunk.subarray(half));
        },
      });
      return wrap(inner, {
        readable: inner.readable.pipeThrough(halves),
        info: { ...inner.info, freshChunks: true },
      });
    },
    ["round-trip"],
  );
  assert.match(messageOf(t.failed.get("round-trip")), /a buffer of its own \(info.freshChunks/);
});
