// deno-lint-ignore-file no-console
/**
 * The official TypeScript SDK's side of the benchmarks, run on Node:
 * `node --expose-gc tests/bench/sdk_side.mjs <workload> '<json params>'`.
 * Prints one `BENCH_RESULT {…}` line with the result and the process's peak
 * RSS, like `deno_side.ts`.
 *
 * Every workload drives `query()` with streaming input (an async generator
 * that yields the next user message once the previous result arrived), so
 * the SDK keeps one CLI process for all turns, as a `DuplexSession` does.
 *
 * Workloads:
 * - `throughput`: a warm-up turn, then a turn whose answer is N
 *   `stream_event` frames (`includePartialMessages: true`); frames/s from
 *   the first `stream_event` to the `result`. With `warmStream`, the same
 *   stream runs once unmeasured first. With `slow`, the consumer yields one
 *   macrotask (`setImmediate`) per message.
 * - `instant-turns`: ms per turn against the instant fake CLI, in blocks.
 * - `real-turns`: the real CLI against the fake Messages API: the cold first
 *   turn (query start to result) and warm turns (write to result).
 *
 * @module
 */

import process from "node:process";
import { pathToFileURL } from "node:url";

const RESULT_PREFIX = "BENCH_RESULT ";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)];
}

function forceGc() {
  if (typeof globalThis.gc === "function") {
    globalThis.gc();
    globalThis.gc();
  }
}

function macrotask() {
  return new Promise((resolve) => setImmediate(resolve));
}

function userMessage(text) {
  return {
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id: "",
  };
}

/**
 * Drives one query through a list of prompts, one turn at a time.
 *
 * @param query The SDK's `query` function.
 * @param options The query options.
 * @param texts The prompts, in order.
 * @param onMessage Called with (message, turnIndex) for every message.
 * @returns Per-turn times, write (yield) to result, in ms.
 */
async function runTurns(query, options, texts, onMessage) {
  const times = [];
  let turnStart = 0;
  let current = -1;
  let resultSeen;
  const prompt = (async function* () {
    for (let i = 0; i < texts.length; i++) {
      const seen = new Promise((resolve) => (resultSeen = resolve));
      current = i;
      turnStart = performance.now();
      yield userMessage(texts[i]);
      await seen;
    }
  })();
  const started = performance.now();
  let coldMs;
  const q = query({ prompt, options });
  try {
    for await (const message of q) {
      if (onMessage) await onMessage(message, current);
      if (message.type === "result") {
        const now = performance.now();
        if (current === 0) coldMs = now - started;
        times.push(now - turnStart);
        if (message.is_error) throw new Error(`Cannot run the turn: ${message.result}`);
        const done = current === texts.length - 1;
        resultSeen();
        if (done) break;
      }
    }
  } finally {
    q.close?.();
  }
  return { times, coldMs };
}

async function throughput(query, params) {
  const { fake, frames, slow, warmStream } = params;
  const texts = warmStream
    ? ["warm up", `[[stream:${frames}]]`, `[[stream:${frames}]]`]
    : ["warm up", `[[stream:${frames}]]`];
  const measured = texts.length - 1;
  let first = 0;
  let last = 0;
  let delivered = 0;
  await runTurns(
    query,
    {
      pathToClaudeCodeExecutable: fake.binary,
      env: { ...process.env, ...fake.env },
      includePartialMessages: true,
    },
    texts,
    async (message, turn) => {
      if (turn !== measured) return;
      if (message.type === "stream_event") {
        if (delivered === 0) {
          first = performance.now();
        }
        delivered++;
      } else if (message.type === "result") {
        last = performance.now();
      }
      if (slow) await macrotask();
    },
  );
  const seconds = (last - first) / 1000;
  return { frames, delivered, seconds, framesPerSecond: frames / seconds };
}

async function instantTurns(query, params) {
  const { fake, warmup, blocks, blockTurns } = params;
  const total = warmup + blocks * blockTurns;
  const texts = Array.from({ length: total }, () => "hi");
  const { times } = await runTurns(query, {
    pathToClaudeCodeExecutable: fake.binary,
    env: { ...process.env, ...fake.env },
  }, texts);
  const perBlock = [];
  for (let b = 0; b < blocks; b++) {
    const slice = times.slice(warmup + b * blockTurns, warmup + (b + 1) * blockTurns);
    perBlock.push(slice.reduce((sum, t) => sum + t, 0) / slice.length);
  }
  return { sdk: perBlock, median: median(perBlock) };
}

async function realTurns(query, params) {
  const { target, turns } = params;
  const texts = ["cold turn", ...Array.from({ length: turns }, (_, i) => `warm turn ${i}`)];
  const { times, coldMs } = await runTurns(query, {
    pathToClaudeCodeExecutable: target.binary,
    env: target.env,
    cwd: target.cwd,
  }, texts);
  return { cold: coldMs, warm: times.slice(1) };
}

const WORKLOADS = {
  "throughput": throughput,
  "instant-turns": instantTurns,
  "real-turns": realTurns,
};

const [name = "", json = "{}"] = process.argv.slice(2);
const workload = WORKLOADS[name];
if (!workload) {
  throw new Error(
    `Cannot run workload ${JSON.stringify(name)}: expected one of ${
      Object.keys(WORKLOADS).join(", ")
    }`,
  );
}
const params = JSON.parse(json);
const importStart = performance.now();
const { query } = await import(pathToFileURL(params.sdkPath).href);
const importMs = performance.now() - importStart;
forceGc();
const result = await workload(query, params);
console.log(
  RESULT_PREFIX +
    JSON.stringify({ ...result, importMs, peakRssMb: process.resourceUsage().maxRSS / 1024 }),
);
