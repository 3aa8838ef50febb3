/**
 * Runs one workload of the Deno side in this process and prints its result
 * on one `BENCH_RESULT {…}` line (with the process's peak RSS). The runner
 * starts one such process per measurement:
 * `deno run -A --v8-flags=--expose-gc tests/bench/deno_side.ts <workload> '<json params>'`.
 *
 * @module
 */

import { report } from "./_measure.ts";
import type { TelemetryTurnsParams } from "./telemetry_turns.ts";
import { fanOut, type FanOutParams } from "./fan_out.ts";
import { longSession, type LongSessionParams } from "./memory.ts";
import { oversized, type OversizedParams } from "./oversized.ts";
import { type FirstTurnParams, poolFirstTurn } from "./pool_first_turn.ts";
import { isolationTurns, type IsolationTurnsParams } from "./isolation_bench.ts";
import { poolMemory, type PoolMemoryParams } from "./pool_memory.ts";
import { poolResume, type PoolResumeParams } from "./pool_resume.ts";
import { poolLoad, type PoolLoadParams } from "./pool_load.ts";
import {
  throughputBare,
  throughputLimit,
  throughputOurs,
  type ThroughputParams,
} from "./throughput.ts";
import {
  instantTurns,
  type InstantTurnsParams,
  type OursOnlyParams,
  oursOnlyTurns,
  realTurns,
  type RealTurnsParams,
  turnLatency,
  type TurnLatencyParams,
} from "./turns.ts";

// deno-lint-ignore no-explicit-any
type Params = any;

const WORKLOADS: Record<string, (params: Params) => Promise<Record<string, unknown>>> = {
  "real-turns": (p: RealTurnsParams) => realTurns(p),
  "real-turns-ours": (p: OursOnlyParams) => oursOnlyTurns(p),
  "instant-turns": (p: InstantTurnsParams) => instantTurns(p),
  // Loaded only for its own workload: the OpenTelemetry SDK would add to every other one's RSS.
  "telemetry-turns": async (p: TelemetryTurnsParams) =>
    (await import("./telemetry_turns.ts")).telemetryTurns(p),
  "throughput": (p: ThroughputParams) => throughputOurs(p),
  "throughput-bare": (p: ThroughputParams) => throughputBare(p),
  "throughput-limit": (p: { frames: number; repeat: number }) =>
    Promise.resolve(throughputLimit(p)),
  "fan-out": (p: FanOutParams) => fanOut(p),
  "long-session": (p: LongSessionParams) => longSession(p),
  "oversized": (p: OversizedParams) => oversized(p),
  "turn-latency": (p: TurnLatencyParams) => turnLatency(p),
  "pool-first-turn": (p: FirstTurnParams) => poolFirstTurn(p),
  "pool-memory": (p: PoolMemoryParams) => poolMemory(p),
  "pool-resume": (p: PoolResumeParams) => poolResume(p),
  "pool-load": (p: PoolLoadParams) => poolLoad(p),
  "isolation-turns": (p: IsolationTurnsParams) => isolationTurns(p),
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
