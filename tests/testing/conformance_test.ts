/**
 * The transport conformance suite against the in-memory ScriptedCli (every
 * chunking, and string lines), and the suite's own failures against
 * transports broken on purpose.
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

function openScripted(options: ConformanceCliOptions): () => Promise<ConformancePeer> {
  return async () => ({
    transport: await conformanceCli(options).transport({ signal: new AbortController().signal }),
  });
}

const VARIANTS: [string, ConformanceCliOptions][] = [
  ['chunking "line"', {}],
  ["chunking { maxChunk: 7 }", { chunking: { maxChunk: 7 } }],
  ['chunking "bytes"', { chunking: "bytes" }],
  ["stringLines: true", { stringLines: true }],
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
  return {
    readable: parts.readable ?? inner.readable,
    ...(inner.stderr === undefined ? {} : { stderr: inner.stderr }),
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
function dropUnterminated(
  readable: ReadableStream<Uint8Array | string>,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return readable.pipeThrough(
    new TransformStream<Uint8Array | string, Uint8Array>({
      transform(chunk, controller) {
        held += typeof chunk === "string" ? `${chunk}\n` : decoder.decode(chunk, { stream: true });
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

Deno.test("the conformance suite fails string chunks that hold a newline", async () => {
  const t = await runBroken(
    (inner) => {
      const decoder = new TextDecoder();
      return wrap(inner, {
        readable: inner.readable.pipeThrough(
          new TransformStream<Uint8Array | string, string>({
            transform(chunk, controller) {
              controller.enqueue(typeof chunk === "string" ? chunk : decoder.decode(chunk));
            },
          }),
        ),
        closed: new Promise<TransportExit>(() => {}),
      });
    },
    ["round-trip", "end-input"],
  );
  assert.match(messageOf(t.failed.get("round-trip")), /one whole line without its newline/);
  assert.match(messageOf(t.failed.get("end-input")), /one whole line without its newline/);
});

Deno.test("runTransportConformance refuses an unknown contract in skip", async () => {
  await assert.rejects(
    runTransportConformance(recorder(), openScripted({}), { skip: ["round-trp"] }),
    (error: unknown) => error instanceof DuplexError && error.kind === "invalid_argument",
  );
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
      const halves = new TransformStream<Uint8Array | string, Uint8Array | string>({
        transform(chunk, controller) {
          if (typeof chunk === "string" || chunk.length < 2) return controller.enqueue(chunk);
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
