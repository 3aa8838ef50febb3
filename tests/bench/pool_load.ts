/**
 * Load (Deno side), workload 8j: many conversations taking turns at random
 * over a few live processes, on the real CLI against the fake Messages API.
 * `workers` loops each take the next conversation of a shuffled list (every
 * conversation once, then random ones; never one another worker holds),
 * acquire it, run one turn whose result must echo that conversation's own
 * prompt, and release it. The pool (`maxLive`, no spares) hibernates and
 * resumes as needed. The CLI processes below this one are counted before,
 * during (sampled every 100 ms) and after `close()`.
 *
 * @module
 */

import { SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import { quantile } from "./_measure.ts";
import { descendants, loadAverage, processOf, TURN_LIMIT_MS } from "./_pool_bench.ts";
import type { CliTarget } from "./turns.ts";

/** Parameters of {@linkcode poolLoad}. */
export interface PoolLoadParams {
  readonly target: CliTarget;
  readonly conversations: number;
  /** Turns in all (at least `conversations`). */
  readonly turns: number;
  readonly workers: number;
  readonly maxLive: number;
  /** Seeds the shuffle. */
  readonly seed: number;
}

/** A small seeded generator (mulberry32), so that runs draw the same turns. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every conversation once, then random ones up to `turns`, shuffled. */
function schedule(params: PoolLoadParams): number[] {
  const draw = random(params.seed);
  const order = Array.from(
    { length: params.turns },
    (_, i) => i < params.conversations ? i : Math.floor(draw() * params.conversations),
  );
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(draw() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/** The CLI processes below this one (a process's command name is its first 15 bytes). */
function cliCount(binary: string): number {
  const name = (binary.split("/").at(-1) ?? "claude").slice(0, 15);
  return descendants().filter((p) => p.name === name).length;
}

/**
 * Runs the load and reports it.
 *
 * @param params The CLI and the sizes.
 * @returns Wall time, per-turn times, acquire waits, hand-outs and process counts.
 */
export async function poolLoad(params: PoolLoadParams): Promise<Record<string, unknown>> {
  const load = loadAverage();
  const before = cliCount(params.target.binary);
  const pool = new SessionPool({
    process: processOf(params.target),
    maxLive: params.maxLive,
    idleMs: Infinity,
    acquireTimeoutMs: TURN_LIMIT_MS * 2,
  });
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, cliCount(params.target.binary));
  }, 100);
  const order = schedule(params);
  const held = new Set<number>();
  const times: number[] = [];
  const failures: string[] = [];
  const counts = new Map<number, number>();
  const worker = async () => {
    while (order.length > 0) {
      // The next conversation that no other worker holds (a conversation's turns are sequential).
      const at = order.findIndex((c) => !held.has(c));
      if (at < 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const [conversation] = order.splice(at, 1) as [number];
      held.add(conversation);
      const key = `conversation-${conversation}`;
      const n = (counts.get(conversation) ?? 0) + 1;
      counts.set(conversation, n);
      const text = `turn ${n} of ${key}`;
      const began = performance.now();
      try {
        const turn = await pool.withSession(
          key,
          (session) => session.send(text, { timeoutMs: TURN_LIMIT_MS }),
        );
        if (turn.result.isError || turn.result.text !== `Echo: ${text}`) {
          failures.push(`${text}: got "${turn.result.text}"`);
        }
      } catch (error) {
        failures.push(`${text}: ${error instanceof Error ? error.message : error}`);
      } finally {
        held.delete(conversation);
      }
      times.push(performance.now() - began);
    }
  };
  const started = performance.now();
  let health;
  try {
    await Promise.all(Array.from({ length: params.workers }, worker));
    health = pool.health;
  } finally {
    clearInterval(sampler);
    await pool.close();
  }
  const wallMs = performance.now() - started;
  const after = cliCount(params.target.binary);
  const left = descendants().map((p) => `${p.pid} ${p.name}`);
  return {
    loadAverage: load,
    turns: times.length,
    failures: failures.slice(0, 5),
    failureCount: failures.length,
    wallMs,
    turnP50Ms: quantile(times, 0.5),
    turnP99Ms: quantile(times, 0.99),
    acquireWait: health.acquireWait,
    handouts: health.handouts,
    hibernations: health.hibernations,
    evictions: health.evictions,
    crashes: health.crashes,
    poolFailures: health.failures,
    processes: { before, peak, after, left },
  };
}
