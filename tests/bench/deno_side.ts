/**
 * Runs one workload of the Deno side in this process and prints its result
 * on one `BENCH_RESULT {…}` line (with the process's peak RSS). The runner
 * starts one such process per measurement:
 * `deno run -A --v8-flags=--expose-gc tests/bench/deno_side.ts <workload> '<json params>'`.
 *
 * @module
 */

import { report } from "./_measure.ts";

// deno-lint-ignore no-explicit-any
type Params = any;

/*
 * Each workload's module is loaded only for that workload: a child loads what
 * a consumer of its workload would (the throughput and memory rows measure
 * the process's RSS, which every module loaded adds to).
 */
const WORKLOADS: Record<string, (params: Params) => Promise<Record<string, unknown>>> = {
  "real-turns": async (p) => (await import("./turns.ts")).realTurns(p),
  "real-turns-ours": async (p) => (await import("./turns.ts")).oursOnlyTurns(p),
  "instant-turns": async (p) => (await import("./turns.ts")).instantTurns(p),
  "telemetry-turns": async (p) => (await import("./telemetry_turns.ts")).telemetryTurns(p),
  "throughput": async (p) => (await import("./throughput.ts")).throughputOurs(p),
  "throughput-bare": async (p) => (await import("./throughput.ts")).throughputBare(p),
  "throughput-limit": async (p) => (await import("./throughput.ts")).throughputLimit(p),
  "fan-out": async (p) => (await import("./fan_out.ts")).fanOut(p),
  "long-session": async (p) => (await import("./memory.ts")).longSession(p),
  "oversized": async (p) => (await import("./oversized.ts")).oversized(p),
  "turn-latency": async (p) => (await import("./turns.ts")).turnLatency(p),
  "pool-first-turn": async (p) => (await import("./pool_first_turn.ts")).poolFirstTurn(p),
  "pool-memory": async (p) => (await import("./pool_memory.ts")).poolMemory(p),
  "pool-resume": async (p) => (await import("./pool_resume.ts")).poolResume(p),
  "pool-load": async (p) => (await import("./pool_load.ts")).poolLoad(p),
  "isolation-turns": async (p) => (await import("./isolation_bench.ts")).isolationTurns(p),
};

if (import.meta.main) {
  const [name = "", json = "{}"] = Deno.args;
  const workload = WORKLOADS[name];
  if (!workload) {
    throw new Error(
      `Cannot run workload ${JSON.stringify(name)}: expected one of ${
        Object.keys(WORKLOADS).join(", ")
      }`,
    );
  }
  report(await workload(JSON.parse(json)));
}
