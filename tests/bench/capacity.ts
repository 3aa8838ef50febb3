// deno-lint-ignore-file no-console
/**
 * The capacity bench (issue 26): measures each per-unit cost the capacity
 * model uses, on this machine, and prints them as a table (the median of
 * each figure's samples, its unit, the samples), then the model's answers
 * for a few host sizes and for 10,000 and 100,000 conversations
 * (`_capacity_model.ts`; docs/capacity.md explains it).
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc tests/bench/capacity.ts           # about 4 minutes
 * deno run -A --v8-flags=--expose-gc tests/bench/capacity.ts --smoke   # small sizes
 * deno run -A --v8-flags=--expose-gc tests/bench/capacity.ts --json=capacity.json
 * deno run -A --v8-flags=--expose-gc tests/bench/capacity.ts --only=relay,store
 * deno run -A tests/bench/capacity.ts --from=capacity.json --soak=stand-in:3:1000 --soak=real:3:24
 * ```
 *
 * `--stand-in=<script>` runs another stand-in CLI than the pool tests' in
 * the `library` and `relay` parts (a soak's own, to predict that soak).
 * `--relay-store` has the `relay` part's relay mirror to a store in memory.
 * `--from=<a.json>[,<b.json>]` reads the figures of earlier `--json` runs
 * instead of measuring (a later file's figure replaces an earlier one's);
 * each `--soak=<stand-in|real>:<relays>:<live conversations>` prints what the
 * model predicts for a soak of that shape on this machine
 * (`_capacity_soak.ts`), to set against the soak's own figures; each
 * `--check-soak=<file>[:<cpu seconds>]` reads a soak's report (the stdout of
 * `tests/soak/soak.ts --json`) and prints the model's error against it
 * (with two runs' CPU, the CPU of one more turn too).
 *
 * It needs `-A`: Deno lets a program read another process's memory
 * (`/proc/<pid>/smaps_rollup`) only with every permission, as `run.ts`'s
 * workload children have them.
 *
 * Parts (`--only`): `cli` (the real CLI against the fake Messages API),
 * `library` (the library's CPU per turn over the pool's stand-in CLI, the
 * pool's heap per hibernated conversation), `relay` (a relay process over
 * the stand-in), `store` (PostgreSQL and the directory store), `mirror`
 * (what a store receives per turn through a relay, real CLI). A part
 * whose component is missing is left out and says why; the model needs all.
 *
 * @module
 */

import { measureRealCli } from "./_capacity_cli.ts";
import { measureLibrary } from "./_capacity_library.ts";
import { measureMirror } from "./_capacity_mirror.ts";
import { measureRelay } from "./_capacity_relay.ts";
import { measureStores } from "./_capacity_store.ts";
import {
  bestIdle,
  type Costs,
  fleet,
  type Host,
  hostCapacity,
  type Load,
  perHost,
} from "./_capacity_model.ts";
import { FAKE_POOL_CLAUDE, type Figure, markdownTable, progress } from "./_capacity_proc.ts";
import { checkSoak, parseShape, predictSoak } from "./_capacity_soak.ts";
import { forceGc } from "./_measure.ts";

const smoke = Deno.args.includes("--smoke");
const jsonPath = Deno.args.find((arg) => arg.startsWith("--json="))?.slice("--json=".length);
const from = Deno.args.find((arg) => arg.startsWith("--from="))?.slice("--from=".length);
const soakRuns = Deno.args.filter((arg) => arg.startsWith("--check-soak=")).map((arg) => {
  const [file, cpu] = arg.slice("--check-soak=".length).split(":");
  return { file: file!, ...(cpu !== undefined && { cpuS: Number(cpu) }) };
});
const soaks = Deno.args.filter((arg) => arg.startsWith("--soak=")).map((arg) => arg.slice(7));
const standInArg = Deno.args.find((arg) => arg.startsWith("--stand-in="))?.slice(11);
const standIn = standInArg === undefined ? FAKE_POOL_CLAUDE : Deno.realPathSync(standInArg);
const relayStore = Deno.args.includes("--relay-store");
const only = Deno.args.find((arg) => arg.startsWith("--only="))?.slice("--only=".length)
  .split(",");
const SIZES = smoke
  ? {
    cli: { samples: 2, turns: 5, spaced: 1, quietMs: 3000, idleCpuMs: 3000 },
    library: { rounds: 2, turns: 50, conversations: 200, standIn },
    relay: { rounds: 1, connections: 4, turns: 40, standIn, store: relayStore },
    store: { rounds: 2, turns: 40, writers: 8, lengths: [10, 100] },
    mirror: { samples: 1, turns: 3 },
  }
  : {
    cli: { samples: 5, turns: 20, spaced: 3, quietMs: 20_000, idleCpuMs: 20_000 },
    library: { rounds: 5, turns: 300, conversations: 1000, standIn },
    relay: { rounds: 3, connections: 24, turns: 480, standIn, store: relayStore },
    store: { rounds: 5, turns: 200, writers: 16, lengths: [10, 100, 1000] },
    mirror: { samples: 3, turns: 10 },
  };

if (from === undefined && !forceGc()) {
  console.error("Cannot measure the pool's heap: run with --v8-flags=--expose-gc");
  Deno.exit(2);
}
const wanted = (part: string): boolean =>
  from === undefined && (only === undefined || only.includes(part));
// Later files' figures replace earlier ones' of the same key.
const figures: Figure[] = [];
for (const file of from?.split(",") ?? []) {
  for (const f of JSON.parse(await Deno.readTextFile(file)).figures as Figure[]) {
    const at = figures.findIndex((g) => g.key === f.key);
    if (at >= 0) figures[at] = f;
    else figures.push(f);
  }
}
const missing: string[] = [];
const started = performance.now();
const loadBefore = Deno.loadavg();
if (wanted("library")) figures.push(...await measureLibrary(SIZES.library));
if (wanted("relay")) figures.push(...await measureRelay(SIZES.relay));
if (wanted("store")) {
  const got = await measureStores(SIZES.store);
  figures.push(...got.figures);
  if (got.missing !== undefined) missing.push(got.missing);
}
if (wanted("mirror")) {
  const got = await measureMirror(SIZES.mirror);
  if (typeof got === "string") missing.push(got);
  else figures.push(...got);
}
if (wanted("cli")) {
  const got = await measureRealCli(SIZES.cli);
  if (typeof got === "string") missing.push(got);
  else figures.push(...got);
}
const load = { before: loadBefore, after: Deno.loadavg() };
progress(
  `measured in ${((performance.now() - started) / 1000).toFixed(0)} s, load ` +
    `${load.before.map((v) => v.toFixed(2)).join("/")} -> ${
      load.after.map((v) => v.toFixed(2)).join("/")
    }`,
);

function shown(value: number): string {
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 1) return value.toFixed(1);
  return value.toFixed(3);
}

function table(rows: string[][]): void {
  console.log(markdownTable(rows) + "\n");
}

table([
  ["key", "per-unit cost", "median", "unit", "samples"],
  ...figures.map((f) => [
    f.key,
    f.what,
    shown(f.value),
    f.unit,
    `${f.samples.length}: ${f.samples.map(shown).join(", ")}`,
  ]),
]);
for (const reason of missing) console.log(`Left out: ${reason}`);

const costs: Costs = Object.fromEntries(figures.map((f) => [f.key, f.value]));
const HOSTS: Host[] = [{ cores: 2, gib: 8 }, { cores: 8, gib: 32 }, { cores: 16, gib: 64 }, {
  cores: 64,
  gib: 256,
}];
const LOADS: Load[] = [10_000, 100_000].flatMap((conversations) =>
  [300, 60, 30, 0].map((idleS) => ({ conversations, thinkS: 60, idleS }))
);
const model: Record<string, unknown> = {};
try {
  const hosts = HOSTS.map((host) => ({ host, ...hostCapacity(costs, host) }));
  const fleetHost = { cores: 16, gib: 64 };
  const fleets = LOADS.map((load) => ({ load, ...fleet(costs, load, fleetHost) }));
  model.hosts = hosts.map((h) => ({
    ...h,
    perHost: LOADS.slice(0, 4).map((load) => ({ load, ...perHost(costs, load, h.host) })),
  }));
  model.fleets = fleets;
  const mixes = LOADS.slice(0, 4);
  table([
    [
      "host",
      "live (memory)",
      "live (idle CPU)",
      "warm turns/s",
      "resumes/s",
      "hibernated records",
      ...mixes.map((load) => `1 turn/${load.thinkS} s, idle ${load.idleS} s`),
    ],
    ...hosts.map((h) => [
      `${h.host.cores} cores / ${h.host.gib} GiB`,
      String(h.liveByMemory),
      String(h.liveByIdleCpu),
      shown(h.warmTurnsPerSec),
      shown(h.resumesPerSec),
      h.hibernatedInMemory.toExponential(1),
      ...mixes.map((load) => {
        const got = perHost(costs, load, h.host);
        return `${got.holds} (${got.bottleneck})`;
      }),
    ]),
  ]);
  table([
    [
      "conversations, gap, idle",
      "turns/s",
      "resumes",
      "live",
      "cores",
      "GiB",
      "hosts 16c/64G",
      "first limit",
      "PG conns",
      "PG appends/s",
      "PG cores",
      "PG rows/s",
      "PG GiB/day",
      "PG headroom",
    ],
    ...fleets.map((f) => [
      `${f.load.conversations}, ${f.load.thinkS} s, ${f.load.idleS} s`,
      shown(f.turnsPerSec),
      `${(f.resumeShare * 100).toFixed(1)} %`,
      String(f.live),
      shown(f.cores),
      shown(f.memoryGib),
      String(f.hosts),
      f.bottleneck,
      String(f.pgConnections),
      shown(f.pgAppendsPerSec),
      shown(f.pgCores),
      shown(f.pgRowsPerSec),
      shown(f.pgGibPerDay),
      `${shown(f.pgHeadroom)}x`,
    ]),
  ]);
  const best = [10, 60, 600].map((thinkS) => ({ thinkS, ...bestIdle(costs, thinkS, fleetHost) }));
  model.bestIdle = best;
  table([
    ["one turn every", "best idle before hibernating", "conversations per 16 cores / 64 GiB"],
    ...best.map((b) => [`${b.thinkS} s`, `${b.idleS} s`, `${b.holds} (${b.bottleneck})`]),
  ]);
  const cores = navigator.hardwareConcurrency;
  const predictions = soaks.map((text) => ({
    text,
    ...predictSoak(costs, parseShape(text, cores)),
  }));
  model.soak = predictions;
  if (predictions.length > 0) {
    table([
      ["soak <cli>:<relays>:<live>", "relay RSS each", "CLIs' memory", "turns/s at most"],
      ...predictions.map((p) => [
        `${p.text} (${cores} cores)`,
        `${shown(p.relayRssMib)} MiB`,
        `${shown(p.cliMib)} MiB`,
        shown(p.turnsPerSec),
      ]),
    ]);
  }
  if (soakRuns.length > 0) {
    const runs = [];
    for (const run of soakRuns) {
      const lines = (await Deno.readTextFile(run.file)).trim().split("\n");
      const report = JSON.parse(lines.findLast((line) => line.startsWith("{")) ?? "null");
      if (report === null) throw new Error(`Cannot read a soak report (--json) in ${run.file}`);
      runs.push({ report, ...(run.cpuS !== undefined && { cpuS: run.cpuS }) });
    }
    const checks = checkSoak(costs, runs, cores);
    model.soakCheck = checks;
    table([
      ["soak figure", "model", "soak", "error"],
      ...checks.map((c) => [
        c.what,
        shown(c.predicted),
        shown(c.measured),
        `${c.error >= 0 ? "+" : ""}${(c.error * 100).toFixed(0)} %`,
      ]),
    ]);
  }
} catch (error) {
  console.log(`No model: ${error instanceof Error ? error.message : error}`);
}
if (jsonPath) {
  await Deno.writeTextFile(
    jsonPath,
    JSON.stringify({ smoke, sizes: SIZES, load, figures, missing, model }, null, 2),
  );
}
