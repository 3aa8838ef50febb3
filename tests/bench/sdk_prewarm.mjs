// deno-lint-ignore-file no-console
/**
 * The official TypeScript SDK's side of the pool's first-turn benchmark
 * (workload 8), run on Node:
 * `node --expose-gc tests/bench/sdk_prewarm.mjs <workload> '<json params>'`.
 * Prints one `BENCH_RESULT {…}` line, like `sdk_side.mjs`.
 *
 * Workloads, each repeated `samples` times in this process (the runner drops
 * the first as warm-up), on the real CLI against the fake Messages API:
 * - `cold-query`: `query()` with a string prompt, from the call to the first
 *   `result` message (spawn, start-up, initialize, the turn).
 * - `prewarm-claim`: `prewarm()` (not counted), then `waitMs` with the spare
 *   ready, then `spare.claim()` for `claimCwd` to the first `result`.
 *
 * @module
 */

import process from "node:process";
import { pathToFileURL } from "node:url";

const RESULT_PREFIX = "BENCH_RESULT ";
const TURN_LIMIT_MS = 60_000;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reads a query to its first `result`, bounded; returns it. */
async function firstResult(q, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Cannot finish ${what} within ${TURN_LIMIT_MS} ms`)),
      TURN_LIMIT_MS,
    );
  });
  const read = (async () => {
    for await (const message of q) {
      if (message.type === "result") return message;
    }
    throw new Error(`Cannot finish ${what}: the query ended without a result`);
  })();
  try {
    const result = await Promise.race([read, limit]);
    if (result.is_error) throw new Error(`Cannot finish ${what}: ${result.result}`);
    return result;
  } finally {
    clearTimeout(timer);
  }
}

function hostOptions(target) {
  return { pathToClaudeCodeExecutable: target.binary, env: target.env };
}

async function coldQuery(sdk, params) {
  const { target, samples } = params;
  const times = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const q = sdk.query({
      prompt: `sdk cold ${i}`,
      options: { ...hostOptions(target), cwd: target.cwd },
    });
    try {
      await firstResult(q, "the SDK's cold query");
      times.push(performance.now() - started);
    } finally {
      q.close?.();
    }
    await sleep(200); // let the process go before the next start
  }
  return { times };
}

async function prewarmClaim(sdk, params) {
  const { target, samples, waitMs, claimCwd, parkDir } = params;
  const times = [];
  const prewarmMs = [];
  const parkedMs = [];
  for (let i = 0; i < samples; i++) {
    const began = performance.now();
    const spare = await sdk.prewarm({ options: { ...hostOptions(target), cwd: parkDir } });
    prewarmMs.push(performance.now() - began);
    await sleep(waitMs);
    const started = performance.now();
    const q = spare.claim({ prompt: `sdk claim ${i}`, options: { cwd: claimCwd } });
    try {
      const [, claimed] = await Promise.all([
        firstResult(q, "the SDK's claimed first turn"),
        spare.claimed,
      ]);
      times.push(performance.now() - started);
      if (typeof claimed.parkedMs === "number") parkedMs.push(claimed.parkedMs);
    } finally {
      q.close?.();
      spare.close();
    }
    await sleep(200);
  }
  return { times, prewarmMs, parkedMs };
}

const [name = "", json = "{}"] = process.argv.slice(2);
const run = { "cold-query": coldQuery, "prewarm-claim": prewarmClaim }[name];
if (run === undefined) {
  throw new Error(`Cannot run workload "${name}": expected cold-query or prewarm-claim`);
}
const params = JSON.parse(json);
const result = await run(await import(pathToFileURL(params.sdkPath).href), params);
const peakRssMb = process.resourceUsage().maxRSS / 1024;
console.log(`${RESULT_PREFIX}${JSON.stringify({ ...result, peakRssMb })}`);
