/**
 * The real CLI's per-unit costs, for the capacity model (offline, against
 * the e2e tests' fake Messages API, which runs in this process): `samples`
 * CLIs are started one after another and all kept live, so that a page two
 * of them share counts in neither's private memory (USS: what one more CLI
 * costs a host that already runs one). For each CLI: the CPU and wall time
 * of its cold start (spawn to the first result), its memory idle after one
 * turn and after all its turns, its CPU per warm turn back to back and far
 * apart, its steady CPU while idle, and the bytes and lines its transcript
 * gains per turn (what a store receives).
 *
 * The CLI keeps working for seconds after a result (66 ms of CPU a second
 * in the first 5 s after a first turn, down to 2-8 ms/s after 20 s, in a
 * probe of one CLI): that tail is part of what a turn costs when turns are
 * far apart, as a conversation's are, so a far-apart turn is counted with
 * its tail (`quietMs`), less the steady idle rate measured at the end.
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { echoTurn, sleep } from "./_pool_bench.ts";
import { median } from "./_measure.ts";
import { cpuMsOf, type Figure, figure, type Memory, memoryOf, progress } from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureRealCli}. */
export interface RealCliParams {
  /** CLIs measured (kept live together). */
  readonly samples: number;
  /** Turns back to back per CLI (the first is the cold one). */
  readonly turns: number;
  /** Turns far apart, each followed by `quietMs` (the CLIs take them together). */
  readonly spaced: number;
  /** How long a CLI's background work after a result is waited for, in ms. */
  readonly quietMs: number;
  /** How long the CLIs' steady idle CPU is read, in ms (the kernel counts 10 ms ticks). */
  readonly idleCpuMs: number;
}

interface Live {
  readonly session: DuplexSession;
  readonly pid: number;
  readonly home: string;
}

/* The transcript a CLI wrote under its HOME: bytes and lines. */
async function transcript(home: string): Promise<{ bytes: number; lines: number }> {
  const projects = `${home}/.claude/projects`;
  let bytes = 0;
  let lines = 0;
  for await (const project of Deno.readDir(projects)) {
    for await (const file of Deno.readDir(`${projects}/${project.name}`)) {
      if (!file.isFile || !file.name.endsWith(".jsonl")) continue;
      const text = await Deno.readTextFile(`${projects}/${project.name}/${file.name}`);
      bytes += new TextEncoder().encode(text).length;
      lines += text.split("\n").filter((line) => line !== "").length;
    }
  }
  return { bytes, lines };
}

/**
 * Measures the real CLI.
 *
 * @param params The sizes.
 * @returns The figures, or why the CLI is unavailable.
 */
export async function measureRealCli(params: RealCliParams): Promise<Figure[] | string> {
  const cli = cliPath();
  if (!cli.available) return `the real claude CLI is unavailable (${cli.reason})`;
  const root = await Deno.makeTempDir({ prefix: "duplex-capacity-cli-" });
  await using api = await startFakeApi();
  const live: Live[] = [];
  const s = {
    coldCpu: [] as number[],
    coldMs: [] as number[],
    coldTail: [] as number[],
    idle1: [] as Memory[],
    idleN: [] as Memory[],
    burstCpu: [] as number[],
    turnCpu: [] as number[],
    idleCpu: [] as number[],
    bytes: [] as number[],
    lines: [] as number[],
  };
  const cpus = (): number[] => live.map((cli) => cpuMsOf(cli.pid));
  try {
    const atResult: { cpu: number; at: number }[] = [];
    for (let i = 0; i < params.samples; i++) {
      const home = `${root}/home-${i}`;
      const work = `${root}/work-${i}`;
      await Deno.mkdir(home);
      await Deno.mkdir(work);
      const began = performance.now();
      const session = await DuplexSession.start({
        transport: subprocess({
          binary: cli.path,
          cwd: work,
          env: sandboxEnv(api, home),
          clearEnv: true,
        }),
      });
      const pid = session.pid;
      if (pid === undefined) throw new Error("Cannot measure the CLI: its session has no pid");
      live.push({ session, pid, home });
      await echoTurn(session, `first turn of CLI ${i}`);
      s.coldMs.push(performance.now() - began);
      s.coldCpu.push(cpuMsOf(pid));
      atResult.push({ cpu: cpuMsOf(pid), at: performance.now() });
      progress(`real CLI ${i + 1}/${params.samples}: cold start ${s.coldCpu.at(-1)} ms CPU`);
    }
    await sleep(params.quietMs);
    const afterCold = cpus();
    const coldEnded = performance.now();
    for (const cli of live) s.idle1.push(memoryOf(cli.pid));
    const firsts = await Promise.all(live.map((cli) => transcript(cli.home)));
    for (const [i, cli] of live.entries()) {
      const cpu = cpuMsOf(cli.pid);
      for (let n = 2; n <= params.turns; n++) await echoTurn(cli.session, `turn ${n} of CLI ${i}`);
      s.burstCpu.push((cpuMsOf(cli.pid) - cpu) / (params.turns - 1));
    }
    // Turns as a conversation has them, far apart: each turn, then its tail of background work.
    const spaced: { cpu: number[]; ms: number }[] = [];
    for (let round = 0; round < params.spaced; round++) {
      const before = cpus();
      const began = performance.now();
      await Promise.all(
        live.map((cli, i) => echoTurn(cli.session, `spaced turn ${round} of CLI ${i}`)),
      );
      await sleep(params.quietMs);
      spaced.push({
        cpu: cpus().map((cpu, i) => cpu - before[i]!),
        ms: performance.now() - began,
      });
      progress(`real CLI: spaced turn ${round + 1}/${params.spaced}`);
    }
    await sleep(params.quietMs);
    const before = cpus();
    const idleFor = performance.now();
    await sleep(params.idleCpuMs);
    const idleSeconds = (performance.now() - idleFor) / 1000;
    s.idleCpu.push(...cpus().map((cpu, i) => (cpu - before[i]!) / idleSeconds));
    for (const [i, cli] of live.entries()) {
      const steady = s.idleCpu[i]!;
      const tailMs = coldEnded - atResult[i]!.at;
      s.coldTail.push(afterCold[i]! - atResult[i]!.cpu - (steady * tailMs) / 1000);
      s.turnCpu.push(median(spaced.map((round) => round.cpu[i]! - (steady * round.ms) / 1000)));
      s.idleN.push(memoryOf(cli.pid));
      const last = await transcript(cli.home);
      const turns = params.turns - 1 + params.spaced;
      s.bytes.push((last.bytes - firsts[i]!.bytes) / turns);
      s.lines.push((last.lines - firsts[i]!.lines) / turns);
    }
  } finally {
    for (const cli of live) await cli.session.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  const n = params.turns + params.spaced;
  const quiet = `${params.quietMs / 1000} s`;
  return [
    figure("cliColdCpuMs", "real CLI: CPU of a cold start, spawn to first result", "ms", s.coldCpu),
    figure(
      "cliColdTailCpuMs",
      `real CLI: CPU after a cold start's result (its ${quiet} tail, less steady idle)`,
      "ms",
      s.coldTail,
    ),
    figure(
      "cliColdMs",
      "real CLI: wall time of a cold start, spawn to first result",
      "ms",
      s.coldMs,
    ),
    figure("cliIdle1Rss", "real CLI: RSS, idle after 1 turn", "MiB", s.idle1.map((m) => m.rss)),
    figure("cliIdle1Uss", "real CLI: USS, idle after 1 turn", "MiB", s.idle1.map((m) => m.uss)),
    figure("cliIdleNRss", `real CLI: RSS, idle after ${n} turns`, "MiB", s.idleN.map((m) => m.rss)),
    figure("cliIdleNUss", `real CLI: USS, idle after ${n} turns`, "MiB", s.idleN.map((m) => m.uss)),
    figure(
      "cliBurstCpuMs",
      "real CLI: CPU per warm turn, turns back to back",
      "ms",
      s.burstCpu,
    ),
    figure(
      "cliTurnCpuMs",
      `real CLI: CPU per warm turn far apart (the turn and its ${quiet} tail, less steady idle)`,
      "ms",
      s.turnCpu,
    ),
    figure("cliIdleCpu", "real CLI: CPU while idle, steady", "ms/s", s.idleCpu),
    figure("cliTurnBytes", "real CLI: transcript bytes per echo turn", "B", s.bytes),
    figure(
      "cliTurnLines",
      "real CLI: transcript lines (entries) per echo turn",
      "entries",
      s.lines,
    ),
  ];
}
