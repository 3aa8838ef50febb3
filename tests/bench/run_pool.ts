/**
 * The rows of the pool's benchmarks (workload 8 of `run.ts`, issue 14):
 * first turns of new conversations (cold, a warm spare, a primed warm
 * spare, a parked spare claimed for a folder, `initialize` early or not) side by side with the
 * official SDK's cold `query()` and `prewarm()` + `claim()`; host memory per
 * hibernated conversation; resume vs cold start; and a load of many
 * conversations over a few live processes.
 *
 * `run.ts --only=8` runs only these; `--pool=first,memory,resume,load`
 * picks parts of them. The real CLI's parts need it installed (skipped
 * rows say why); the memory part runs in memory.
 *
 * @module
 */

import type { FakeApiRequest } from "../e2e/fake_api.ts";
import { median, quantile } from "./_measure.ts";
import type { Result, Row } from "./run.ts";
import type { CliTarget } from "./turns.ts";

/** What `run.ts` lends the pool's workloads. */
export interface PoolKit {
  readonly smoke: boolean;
  /** Overrides the rounds of the first-turn and memory parts (`--rounds`). */
  readonly rounds: number | undefined;
  /** The parts to run (`--pool=`); all when undefined. */
  readonly parts: ReadonlySet<string> | undefined;
  /** The runner's temp folder (removed after the run). */
  readonly temp: string;
  readonly sdkWhy: string;
  readonly cliWhy: string;
  /** The real CLI in its sandbox; starts the fake API on first use. */
  readonly real: (() => Promise<CliTarget>) | undefined;
  /** Every request the fake API received so far. */
  readonly requests: () => readonly FakeApiRequest[];
  /** Runs a workload of `deno_side.ts` in a child of its own. */
  readonly deno: (workload: string, params: unknown, timeoutMs?: number) => Promise<Result>;
  /** Runs a workload of `sdk_prewarm.mjs` on Node; undefined without the SDK. */
  readonly sdk:
    | ((workload: string, params: Record<string, unknown>) => Promise<Result>)
    | undefined;
  readonly interleave: <K extends string>(
    round: number,
    sides: Record<K, (() => Promise<Result>) | undefined>,
  ) => Promise<Partial<Record<K, Result>>>;
  readonly progress: (message: string) => void;
  readonly format: {
    readonly ms: (value: number) => string;
    readonly x: (value: number) => string;
    readonly yes: (ok: boolean) => string;
  };
  readonly raw: Record<string, unknown>;
  readonly rows: Row[];
}

interface PoolSizes {
  firstRounds: number;
  /** First turns per child. */
  firstSamples: number;
  /** Drop the first measurement of each child (and of the resume rounds) as a warm-up. */
  warmup: boolean;
  waitMs: number;
  memoryRounds: number;
  memoryConversations: number;
  resumeTranscripts: number[];
  resumeSamples: number;
  load: { conversations: number; turns: number; workers: number; maxLive: number };
}

const FULL: PoolSizes = {
  firstRounds: 3,
  firstSamples: 3,
  warmup: true,
  waitMs: 2000,
  memoryRounds: 5,
  memoryConversations: 1000,
  resumeTranscripts: [10, 200],
  resumeSamples: 6,
  load: { conversations: 200, turns: 300, workers: 8, maxLive: 8 },
};

const SMOKE: PoolSizes = {
  firstRounds: 1,
  firstSamples: 1,
  warmup: false,
  waitMs: 300,
  memoryRounds: 1,
  memoryConversations: 50,
  resumeTranscripts: [1, 2],
  resumeSamples: 1,
  load: { conversations: 4, turns: 6, workers: 2, maxLive: 2 },
};

/** The parts of workload 8, for `--pool=`. */
export const POOL_PARTS: readonly string[] = ["first", "memory", "resume", "load"];

/** A child's values, the first (a warm-up) dropped when `warmup`. */
function afterWarmup(sizes: PoolSizes, values: unknown): number[] {
  return ((values as number[] | undefined) ?? []).slice(sizes.warmup ? 1 : 0);
}

/** The measured values of each child. */
function measured(
  sizes: PoolSizes,
  results: readonly (Result | undefined)[],
  key = "times",
): number[] {
  return results.flatMap((r) => afterWarmup(sizes, r?.[key]));
}

/** A signed duration: `+12.3 ms`, `-45.6 ms`. */
function signed(kit: PoolKit, value: number): string {
  return `${value < 0 ? "-" : "+"}${kit.format.ms(Math.abs(value))}`;
}

function skip(kit: PoolKit, id: string, workload: string, why: string): void {
  kit.rows.push({ id, workload, ours: "skipped", peer: why, ratio: "", target: "", met: "n/a" });
}

/** The real CLI for a part; without it, a skipped row that says why and `undefined`. */
async function realCli(kit: PoolKit, id: string, workload: string): Promise<CliTarget | undefined> {
  if (!kit.real) {
    skip(kit, id, `${workload} (real CLI)`, kit.cliWhy);
    return undefined;
  }
  kit.progress(`workload 8: ${workload}`);
  return await kit.real();
}

/**
 * Runs the pool's workloads and adds their rows.
 *
 * @param kit What the runner lends.
 */
export async function workload8(kit: PoolKit): Promise<void> {
  const sizes = kit.smoke ? SMOKE : FULL;
  const parts = { first: firstTurns, memory, resume, load };
  for (const [part, run] of Object.entries(parts)) {
    if (!kit.parts || kit.parts.has(part)) await run(kit, sizes);
  }
}

type Side =
  | "cold"
  | "spare"
  | "spareHeld"
  | "primed"
  | "parked"
  | "initEarly"
  | "noInit"
  | "sdkCold"
  | "sdkClaim";

async function firstTurns(kit: PoolKit, sizes: PoolSizes): Promise<void> {
  const target = await realCli(kit, "8a", "first turn of a new conversation");
  if (!target) return;
  const claimCwd = `${kit.temp}/claimed`;
  const parkDir = `${kit.temp}/park`;
  const sdkPark = `${kit.temp}/sdk-park`;
  for (const dir of [claimCwd, parkDir, sdkPark]) await Deno.mkdir(dir, { recursive: true });
  const base = { target, samples: sizes.firstSamples, waitMs: sizes.waitMs, claimCwd, parkDir };
  const ours = (mode: string, extra = {}) => () =>
    kit.deno("pool-first-turn", { ...base, mode, ...extra }, 300_000);
  const sdk = kit.sdk;
  const runs: Partial<Record<Side, Result>>[] = [];
  for (let round = 0; round < (kit.rounds ?? sizes.firstRounds); round++) {
    runs.push(
      await kit.interleave<Side>(round, {
        cold: ours("cold"),
        spare: ours("spare"),
        spareHeld: ours("spare", { holdReplacement: true }),
        primed: ours("spare", { primeSpares: true }),
        parked: ours("parked"),
        initEarly: ours("init-early"),
        noInit: ours("no-init"),
        sdkCold: sdk && (() => sdk("cold-query", base)),
        sdkClaim: sdk && (() => sdk("prewarm-claim", { ...base, parkDir: sdkPark })),
      }),
    );
  }
  kit.raw["pool-first-turn"] = runs;
  const { ms, x, yes } = kit.format;
  const of = (side: Side): number[] => measured(sizes, runs.map((r) => r[side]));
  const med = (side: Side): number => median(of(side));
  const text = (side: Side): string =>
    `${ms(med(side))} (p90 ${ms(quantile(of(side), 0.9))}, n=${of(side).length})`;
  const wait = `ready ~${(sizes.waitMs / 1000).toFixed(1)} s`;
  const hasSdk = of("sdkClaim").length > 0;
  kit.rows.push({
    id: "8a",
    workload: "first turn, cold (spawn to result): DuplexSession.start + send vs SDK query()",
    ours: text("cold"),
    peer: hasSdk ? text("sdkCold") : `SDK: ${kit.sdkWhy}`,
    ratio: hasSdk ? x(med("cold") / med("sdkCold")) : "",
    target: "(info)",
    met: "info",
  });
  const speedup = med("cold") / med("spare");
  kit.rows.push({
    id: "8b",
    workload: `first turn from a warm spare (spares: 1, ${wait}), acquire to result, vs our cold`,
    ours: text("spare"),
    peer: text("cold"),
    ratio: `${speedup.toFixed(1)}x faster`,
    target: ">= 4x",
    met: yes(speedup >= 4),
  });
  const warm = median(measured(sizes, runs.map((r) => r.cold), "warm"));
  kit.rows.push({
    id: "8b'",
    workload: "warm turn (the turn after a cold first turn), for reference",
    ours: `${ms(warm)}`,
    peer: "",
    ratio: "",
    target: "(info)",
    met: "info",
  });
  const primedSpeedup = med("cold") / med("primed");
  kit.rows.push({
    id: "8k",
    workload:
      `first turn from a primed warm spare (primeSpares, ${wait}), acquire to result, vs our cold`,
    ours: text("primed"),
    peer: text("cold"),
    ratio: `${primedSpeedup.toFixed(1)}x faster`,
    target: ">= 4x",
    met: yes(primedSpeedup >= 4),
  });
  const primedWarm = med("primed") / warm;
  kit.rows.push({
    id: "8l",
    workload: "first turn from a primed warm spare vs a warm turn (8b')",
    ours: text("primed"),
    peer: ms(warm),
    ratio: x(primedWarm),
    target: "<= 2x (moonshot)",
    met: yes(primedWarm <= 2),
  });
  if (hasSdk) {
    const spareRatio = med("spare") / med("sdkClaim");
    kit.rows.push({
      id: "8c",
      workload: `first turn from a warm spare vs SDK prewarm() + claim() (${wait})`,
      ours: text("spare"),
      peer: text("sdkClaim"),
      ratio: x(spareRatio),
      target: "faster (< 1x)",
      met: yes(spareRatio < 1),
    });
    const parkedRatio = med("parked") / med("sdkClaim");
    kit.rows.push({
      id: "8d",
      workload: `first turn from a parked spare claimed for a folder vs SDK claim() (${wait})`,
      ours: text("parked"),
      peer: text("sdkClaim"),
      ratio: x(parkedRatio),
      target: "no slower (<= 1x)",
      met: yes(parkedRatio <= 1),
    });
  } else {
    skip(kit, "8c", "first turn from a spare vs SDK prewarm() + claim()", kit.sdkWhy);
  }
  kit.rows.push({
    id: "8e",
    workload: `first turn ${sizes.waitMs / 1000} s after spawn: initialize sent early vs not`,
    ours: text("initEarly"),
    peer: text("noInit"),
    ratio: `${x(med("initEarly") / med("noInit"))} (${
      signed(kit, med("initEarly") - med("noInit"))
    })`,
    target: "(info)",
    met: "info",
  });
  kit.rows.push({
    id: "8f",
    workload: "warm spare's first turn, its replacement's spawn held until the result, vs as is",
    ours: text("spareHeld"),
    peer: text("spare"),
    ratio: x(med("spareHeld") / med("spare")),
    target: "(diagnostic)",
    met: "info",
  });
}

async function memory(kit: PoolKit, sizes: PoolSizes): Promise<void> {
  kit.progress("workload 8: memory per hibernated conversation");
  const runs: Result[] = [];
  for (let round = 0; round < (kit.rounds ?? sizes.memoryRounds); round++) {
    runs.push(
      await kit.deno("pool-memory", {
        conversations: sizes.memoryConversations,
        warmup: sizes.memoryConversations,
        concurrency: 4,
      }),
    );
  }
  kit.raw["pool-memory"] = runs;
  const pick = (key: string): number => median(runs.map((r) => Number(r[key])));
  const bytes = pick("bytesPerConversation");
  kit.rows.push({
    id: "8g",
    workload: `heap per hibernated conversation, ${sizes.memoryConversations} conversations ` +
      "(in-memory CLI, GC forced)",
    ours: `${bytes.toFixed(0)} B (records alone ${pick("recordBytes").toFixed(0)} B)`,
    peer: `heap ${pick("heapBeforeMb").toFixed(2)} -> ${pick("heapWithRecordsMb").toFixed(2)} MB`,
    ratio: "",
    target: "< 2 KB",
    met: kit.format.yes(bytes < 2048),
  });
}

async function resume(kit: PoolKit, sizes: PoolSizes): Promise<void> {
  const target = await realCli(kit, "8h", "resume after hibernation vs cold start");
  if (!target) return;
  const result = await kit.deno("pool-resume", {
    target,
    transcripts: sizes.resumeTranscripts,
    samples: sizes.resumeSamples,
    idleMs: 300,
  }, 600_000);
  kit.raw["pool-resume"] = result;
  const { ms, yes } = kit.format;
  const cold = afterWarmup(sizes, result.cold);
  const cpu = result.cpuMs as Record<string, number[]>;
  // The CLI's CPU time for the start, the turn and the close: less swayed by the machine's load.
  const cpuText = (side: string): string =>
    `CLI CPU ${(median(afterWarmup(sizes, cpu[side])) / 1000).toFixed(2)} s`;
  const requests = kit.requests();
  for (const [i, turns] of sizes.resumeTranscripts.entries()) {
    const times = afterWarmup(sizes, (result.resumed as Record<string, unknown>)[turns]);
    const prompts = (result.prompts as Record<string, string[]>)[turns] ?? [];
    // The history the model saw: the messages of the API request of the last resumed turn.
    const last = requests.findLast((r) => r.prompt === prompts.at(-1));
    const messages = (last?.body as { messages?: unknown[] } | null)?.messages?.length ?? 0;
    const added = median(times) - median(cold);
    const bytes = (result.transcriptBytes as Record<string, number | undefined>)[turns];
    const size = bytes === undefined ? "" : `, ${Math.round(bytes / 1024)} KB`;
    kit.rows.push({
      id: `8${"hi"[i] ?? String(i)}`,
      workload: `first turn after resume (hibernated), ${turns}-turn transcript${size}, vs cold`,
      ours: `${ms(median(times))} (${cpuText(String(turns))}), history ${messages} messages`,
      peer: `cold ${ms(median(cold))} (${cpuText("cold")})`,
      ratio: signed(kit, added),
      target: "within 100 ms of cold",
      met: yes(added <= 100 && messages >= 2 * turns),
    });
  }
}

async function load(kit: PoolKit, sizes: PoolSizes): Promise<void> {
  const { conversations, turns, workers, maxLive } = sizes.load;
  const workload = `load: ${conversations} conversations, ${turns} turns at random, ` +
    `${workers} workers, maxLive ${maxLive}`;
  const target = await realCli(kit, "8j", workload);
  if (!target) return;
  const r = await kit.deno("pool-load", { target, ...sizes.load, seed: 14 }, 900_000);
  kit.raw["pool-load"] = r;
  const { ms, yes } = kit.format;
  const wait = r.acquireWait as { p50Ms: number; p99Ms: number };
  const procs = r.processes as { before: number; peak: number; after: number; left: string[] };
  const handouts = r.handouts as Record<string, number>;
  const failures = Number(r.failureCount);
  const ok = failures === 0 && Number(r.turns) === turns && procs.peak <= maxLive &&
    procs.after === procs.before && procs.left.length === 0;
  kit.rows.push({
    id: "8j",
    workload,
    ours: `${failures} wrong of ${r.turns}, ${(Number(r.wallMs) / 1000).toFixed(0)} s, ` +
      `acquire wait p50 ${ms(wait.p50Ms)} / p99 ${ms(wait.p99Ms)}`,
    peer: `CLIs: before ${procs.before}, peak ${procs.peak}, after close ${procs.after}`,
    ratio: "",
    target: "own results, <= maxLive, no leak",
    met: yes(ok),
  });
  kit.rows.push({
    id: "8j'",
    workload: "load: turn (acquire to result) p50 / p99; how processes were got",
    ours: `${ms(Number(r.turnP50Ms))} / ${ms(Number(r.turnP99Ms))}`,
    peer: `cold ${handouts.cold}, resumed ${handouts.resumed}, evictions ${r.evictions}, ` +
      `crashes ${r.crashes}`,
    ratio: "",
    target: "(info)",
    met: "info",
  });
}
