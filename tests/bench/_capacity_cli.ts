/**
 * The real CLI's per-unit costs, for the capacity model (offline, against
 * the e2e tests' fake Messages API, which runs in this process): `samples`
 * CLIs are started one after another and all kept live, so that a page two
 * of them share counts in neither's private memory (USS: what one more CLI
 * costs a host that already runs one). For each CLI: the CPU and wall time
 * of its cold start (spawn to the first result), its memory idle after one
 * turn and after `turns` turns, its CPU per warm turn (the turns after the
 * first), its CPU while idle, and the bytes and lines its transcript gains
 * per turn (what a store receives).
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { cliPath, sandboxEnv } from "../e2e/_harness.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { echoTurn, sleep } from "./_pool_bench.ts";
import { cpuMsOf, type Figure, figure, type Memory, memoryOf, progress } from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureRealCli}. */
export interface RealCliParams {
  /** CLIs measured (kept live together). */
  readonly samples: number;
  /** Turns per CLI in all (the first is the cold one). */
  readonly turns: number;
  /** How long a CLI idles before its memory is read, in ms. */
  readonly idleMs: number;
  /** How long the CLIs' CPU is read while they idle, in ms (the kernel counts 10 ms ticks). */
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
    idle1: [] as Memory[],
    idleN: [] as Memory[],
    warmCpu: [] as number[],
    idleCpu: [] as number[],
    bytes: [] as number[],
    lines: [] as number[],
  };
  try {
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
      progress(`real CLI ${i + 1}/${params.samples}: cold start ${s.coldCpu.at(-1)} ms CPU`);
    }
    await sleep(params.idleMs);
    const before = live.map((cli) => cpuMsOf(cli.pid));
    const idleFor = performance.now();
    await sleep(params.idleCpuMs);
    const idleSeconds = (performance.now() - idleFor) / 1000;
    for (const [i, cli] of live.entries()) {
      s.idleCpu.push((cpuMsOf(cli.pid) - before[i]!) / idleSeconds);
      s.idle1.push(memoryOf(cli.pid));
    }
    const firsts = await Promise.all(live.map((cli) => transcript(cli.home)));
    for (const [i, cli] of live.entries()) {
      const cpu = cpuMsOf(cli.pid);
      for (let n = 2; n <= params.turns; n++) await echoTurn(cli.session, `turn ${n} of CLI ${i}`);
      s.warmCpu.push((cpuMsOf(cli.pid) - cpu) / (params.turns - 1));
    }
    await sleep(params.idleMs * 2);
    for (const [i, cli] of live.entries()) {
      s.idleN.push(memoryOf(cli.pid));
      const last = await transcript(cli.home);
      s.bytes.push((last.bytes - firsts[i]!.bytes) / (params.turns - 1));
      s.lines.push((last.lines - firsts[i]!.lines) / (params.turns - 1));
    }
  } finally {
    for (const cli of live) await cli.session.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  const n = params.turns;
  return [
    figure(
      "cliColdCpuMs",
      "real CLI: CPU of a cold start (spawn to first result)",
      "ms",
      s.coldCpu,
    ),
    figure(
      "cliColdMs",
      "real CLI: wall time of a cold start (spawn to first result)",
      "ms",
      s.coldMs,
    ),
    figure("cliIdle1Rss", "real CLI: RSS, idle after 1 turn", "MiB", s.idle1.map((m) => m.rss)),
    figure("cliIdle1Uss", "real CLI: USS, idle after 1 turn", "MiB", s.idle1.map((m) => m.uss)),
    figure("cliIdleNRss", `real CLI: RSS, idle after ${n} turns`, "MiB", s.idleN.map((m) => m.rss)),
    figure("cliIdleNUss", `real CLI: USS, idle after ${n} turns`, "MiB", s.idleN.map((m) => m.uss)),
    figure("cliWarmCpuMs", "real CLI: CPU per warm turn (the CLI process)", "ms", s.warmCpu),
    figure("cliIdleCpu", "real CLI: CPU while idle", "ms/s", s.idleCpu),
    figure("cliTurnBytes", "real CLI: transcript bytes per echo turn", "B", s.bytes),
    figure(
      "cliTurnLines",
      "real CLI: transcript lines (entries) per echo turn",
      "entries",
      s.lines,
    ),
  ];
}
