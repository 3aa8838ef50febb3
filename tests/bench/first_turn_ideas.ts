// deno-lint-ignore-file no-console
/**
 * What makes a new conversation's first turn fast (issue 26): each idea for
 * doing the CLI's first-line work ahead of time, against a plain spare, a
 * cold start and a warm turn, on the real CLI offline against the fake
 * Messages API (in this process). A diagnostic for row 8b, and its figures.
 *
 * Every sample is a process of its own, with its own debug log
 * (`--debug-file`). Modes:
 *
 * - `cold`: `DuplexSession.start` then `send`, spawn to result.
 * - `spare`: a process `initialize`d and idle `waitMs`, first `send` to
 *   result (the pool's warm spare without the pool).
 * - `primed`: as `spare`, primed first (`_primer.ts`: an empty user line
 *   with `shouldQuery: false`, its answer hidden from the session).
 * - `cost`: as `spare`, after a `/cost` line (a local command: no API
 *   request, but the conversation sees it: its caveat and output are in
 *   the next request).
 * - `clear`: as `spare`, after a `shouldQuery: false` text line and
 *   `/clear` (a fresh session id, but the next request carries the
 *   `/clear` command's caveat).
 * - `primed-context`: as `primed`, then `get_context_usage` (a control
 *   request: nothing in the conversation, but the CLI builds its system
 *   prompt and tool schemas for it, and asks the API's `count_tokens` about
 *   28 times: an API call, so measured, not kept).
 * - `pool-spare` / `pool-primed`: `SessionPool({ spares: 1 })` without and
 *   with `primeSpares`, `acquire` to result once the spare has been ready
 *   `waitMs` (row 8b's measure).
 * - `cold-nolog`, `pool-spare-nolog`, `pool-primed-nolog`: the same without
 *   a debug log (which costs the CLI most while it starts: the ratios of
 *   row 8b as `run_pool.ts` measures them; no phases).
 * - `warm` (reported, not a mode): the second turn of each `spare` sample.
 *
 * The modes run interleaved (each round rotates their order, so the
 * machine's load hits every mode alike), `rounds` rounds a run, `runs`
 * runs. Each run prints the medians, the ratios of rows 8b (cold / spare)
 * and 8b' (spare / warm) for each way, and the phases of each mode's first
 * turn from the debug log: user line to `[engine] turn N start`, to the
 * `[API REQUEST]`, the API's first byte, send to result.
 *
 * ```sh
 * deno run -P=bench tests/bench/first_turn_ideas.ts [--runs=5] [--rounds=5] [--wait=2000] [--modes=a,b]
 * ```
 *
 * @module
 */

import { DuplexSession, type TransportFactory } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { type PoolEvent, SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import { primer } from "../../adapters/subprocess/pool/_primer.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { median } from "./_measure.ts";
import { echoTurn, sleep, TURN_LIMIT_MS, until } from "./_pool_bench.ts";

/** The modes, in their order of the first round. */
const MODES = [
  "cold",
  "spare",
  "primed",
  "cost",
  "clear",
  "pool-spare",
  "pool-primed",
  "primed-context",
  "cold-nolog",
  "pool-spare-nolog",
  "pool-primed-nolog",
] as const;
type Mode = typeof MODES[number];
/** A mode without its `-nolog` suffix. */
type Way = Exclude<Mode, `${string}-nolog`>;

/** One turn's phases from the CLI's debug log, in ms. */
interface Phases {
  toEngine: number;
  toRequest: number;
  firstByte: number;
  total: number;
}

interface Sample {
  first: Phases;
  warm: number;
}

/**
 * Reads a turn's phases from the debug log: the first engine turn after `sentAt`.
 *
 * @param log The debug log.
 * @param sentAt When the user line was sent (epoch ms).
 * @param total Send (or acquire) to result, measured here.
 * @returns The phases; `NaN` for a phase not found.
 */
export function phasesOf(log: string, sentAt: number, total: number): Phases {
  const lines = log.split("\n");
  const time = (line: string | undefined): number => Date.parse(line?.slice(0, 24) ?? "");
  const after = (pattern: RegExp, from: number): string | undefined =>
    lines.find((l) => pattern.test(l) && time(l) >= from);
  const engine = time(after(/\[engine\] turn \d+ start/, sentAt));
  const byte = after(/first byte after/, engine);
  return {
    toEngine: engine - sentAt,
    toRequest: time(after(/\[API REQUEST\]/, engine)) - engine,
    firstByte: Number(byte?.match(/first byte after (\d+)ms/)?.[1]),
    total,
  };
}

interface Bench {
  readonly cli: string;
  readonly env: Record<string, string>;
  readonly work: string;
  readonly temp: string;
  readonly waitMs: number;
  next: number;
}

function processOf(bench: Bench, log: string | undefined): SubprocessOptions {
  return {
    pathToClaudeCodeExecutable: bench.cli,
    env: bench.env,
    clearEnv: true,
    cwd: bench.work,
    ...(log !== undefined && { debugFile: log }),
  };
}

/* The phases of a turn from a debug log, or only its total without one. */
async function phasesFrom(log: string | undefined, sentAt: number, total: number): Promise<Phases> {
  if (log === undefined) return { toEngine: NaN, toRequest: NaN, firstByte: NaN, total };
  return phasesOf(await Deno.readTextFile(log), sentAt, total);
}

/* A turn sent at a known time (for the debug log), timed. */
async function timedTurn(
  session: DuplexSession,
  text: string,
  from = performance.now(),
): Promise<{ sentAt: number; ms: number }> {
  const sentAt = Date.now() - (performance.now() - from);
  await echoTurn(session, text);
  return { sentAt, ms: performance.now() - from };
}

/* Runs a line the conversation would see (an idea that is measured, not kept). */
async function warmUpLine(session: DuplexSession, mode: Way): Promise<void> {
  if (mode === "cost") await session.send("/cost", { timeoutMs: TURN_LIMIT_MS });
  if (mode === "primed-context") {
    await session.request("get_context_usage", {}, { timeoutMs: TURN_LIMIT_MS });
  }
  if (mode === "clear") {
    await session.send("warm-up", { shouldQuery: false, timeoutMs: TURN_LIMIT_MS });
    await session.send("/clear", { timeoutMs: TURN_LIMIT_MS });
  }
}

async function sample(bench: Bench, given: Mode): Promise<Sample> {
  const mode = given.replace(/-nolog$/, "") as Way;
  const log = given.endsWith("-nolog") ? undefined : `${bench.temp}/debug-${bench.next}.log`;
  bench.next++;
  if (mode === "pool-spare" || mode === "pool-primed") return await pooled(bench, mode, log);
  const open = subprocess(processOf(bench, log));
  let session: DuplexSession | undefined;
  let first: { sentAt: number; ms: number };
  try {
    if (mode === "cold") {
      const from = performance.now();
      session = await DuplexSession.start({ transport: open });
      first = await timedTurn(session, `cold ${bench.next}`, from);
    } else {
      const primed = mode === "primed" || mode === "primed-context" ? primer(open) : undefined;
      session = await DuplexSession.start({
        initialize: true,
        transport: primed?.factory ?? open,
      });
      await session.initialized;
      if (primed) await primed.prime(AbortSignal.timeout(TURN_LIMIT_MS));
      await warmUpLine(session, mode);
      await sleep(bench.waitMs);
      first = await timedTurn(session, `${mode} ${bench.next}`);
    }
    const second = await timedTurn(session, `warm ${bench.next}`);
    await session.close();
    return { first: await phasesFrom(log, first.sentAt, first.ms), warm: second.ms };
  } finally {
    await session?.close();
  }
}

async function pooled(bench: Bench, mode: Way, log: string | undefined): Promise<Sample> {
  let ready = false;
  let logs = 0;
  const pool = new SessionPool({
    process: processOf(bench, log),
    spares: 1,
    primeSpares: mode === "pool-primed",
    // Each process its own debug log: the first is the spare measured.
    launch: (options: SubprocessOptions): TransportFactory =>
      subprocess(
        log === undefined ? options : { ...options, debugFile: logs++ ? `${log}.${logs}` : log },
      ),
    onEvent: (event: PoolEvent) => {
      if (event.type === "spare_ready") ready = true;
    },
  });
  try {
    await until("the spare ready", () => ready, 60_000);
    await sleep(bench.waitMs);
    const from = performance.now();
    const session = await pool.acquire("a");
    const first = await timedTurn(session, `${mode} ${bench.next}`, from);
    const second = await timedTurn(session, `warm ${bench.next}`);
    pool.release("a");
    await pool.forget("a");
    return { first: await phasesFrom(log, first.sentAt, first.ms), warm: second.ms };
  } finally {
    await pool.close();
  }
}

/* The 1-, 5- and 15-minute load averages (by `cat`: the bench set has no sys permission). */
function loadAverage(): string[] {
  const out = new Deno.Command("cat", { args: ["/proc/loadavg"] }).outputSync();
  return new TextDecoder().decode(out.stdout).split(" ").slice(0, 3);
}

function flag(name: string, fallback: string): string {
  const given = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return given === undefined ? fallback : given.slice(name.length + 3);
}

function fmt(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : "-";
}

function report(run: number, samples: Map<Mode, Sample[]>, load: string[]): void {
  const med = (mode: Mode, key: keyof Phases): number =>
    median((samples.get(mode) ?? []).map((s) => s.first[key]).filter(Number.isFinite));
  const warm = median((samples.get("spare") ?? []).map((s) => s.warm));
  const cold = med("cold", "total");
  const bare = med("cold-nolog", "total");
  console.log(`\nrun ${run} (load average ${load.join(" / ")} at its start)`);
  console.log(
    "| mode | n | first turn | cold / it | it / warm | line to engine | engine to request | first byte |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  const against = (mode: Mode): number => mode.endsWith("-nolog") ? bare : cold;
  for (const [mode, list] of samples) {
    const total = med(mode, "total");
    console.log(
      `| ${mode} | ${list.length} | ${fmt(total)} ms | ${(against(mode) / total).toFixed(2)}x | ${
        (total / warm).toFixed(2)
      }x | ${fmt(med(mode, "toEngine"))} ms | ${fmt(med(mode, "toRequest"))} ms | ${
        fmt(med(mode, "firstByte"))
      } ms |`,
    );
  }
  console.log(
    `| warm (spare's 2nd turn) | ${samples.get("spare")?.length ?? 0} | ${fmt(warm)} ms |`,
  );
}

if (import.meta.main) {
  const runs = Number(flag("runs", "5"));
  const rounds = Number(flag("rounds", "5"));
  const waitMs = Number(flag("wait", "2000"));
  const modes = flag("modes", MODES.join(",")).split(",") as Mode[];
  const cli = cliPath();
  if (!cli.available) throw new Error(`Cannot run: ${cli.reason}`);
  const temp = await Deno.makeTempDir({ prefix: "duplex-ideas-" });
  await using api = await startFakeApi();
  try {
    for (const dir of ["home", "work"]) await Deno.mkdir(`${temp}/${dir}`);
    const bench: Bench = {
      cli: cli.path,
      env: sandboxEnv(api, `${temp}/home`),
      work: `${temp}/work`,
      temp,
      waitMs,
      next: 0,
    };
    await sample(bench, "cold"); // the binary into the page cache, the fake API's code warm
    const all: Record<string, Record<string, number[]>> = {};
    for (let run = 1; run <= runs; run++) {
      const load = loadAverage();
      const samples = new Map<Mode, Sample[]>(modes.map((m) => [m, []]));
      for (let round = 0; round < rounds; round++) {
        const order = modes.map((_, i) => modes[(i + round + run) % modes.length] as Mode);
        for (const mode of order) samples.get(mode)!.push(await sample(bench, mode));
      }
      report(run, samples, load);
      for (const [mode, list] of samples) {
        (all[mode] ??= {})[`run ${run}`] = list.map((s) => Math.round(s.first.total));
      }
      all.warm = { ...all.warm, [`run ${run}`]: samples.get("spare")?.map((s) => s.warm) ?? [] };
    }
    console.log(`\nraw (first turns, ms): ${JSON.stringify(all)}`);
  } finally {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
  }
}
