/**
 * The library's own per-unit costs, for the capacity model: the CPU this
 * process spends per warm turn of a `DuplexSession` over the pool's stand-in
 * CLI (a separate process, whose CPU is counted apart: with its memory and
 * the CPU of its start, it is what the soak's stand-in runs cost), and the heap a
 * `SessionPool` keeps per hibernated conversation (workload 8g's
 * measurement, {@linkcode poolMemory}; needs `--v8-flags=--expose-gc`).
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { poolMemory } from "./pool_memory.ts";
import {
  cpuMsOf,
  type Figure,
  figure,
  type Memory,
  memoryOf,
  progress,
  selfCpuMs,
  standInCli,
} from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureLibrary}. */
export interface LibraryParams {
  /** Rounds of turns (one figure sample each). */
  readonly rounds: number;
  /** Warm turns per round. */
  readonly turns: number;
  /** Hibernated conversations per pool-memory sample. */
  readonly conversations: number;
  /** The stand-in CLI's path. */
  readonly standIn: string;
}

/**
 * Measures the library.
 *
 * @param params The sizes.
 * @returns The figures.
 */
export async function measureLibrary(params: LibraryParams): Promise<Figure[]> {
  const cpu: number[] = [];
  const standIn = { cold: [] as number[], turn: [] as number[], memory: [] as Memory[] };
  const sessions: DuplexSession[] = [];
  const configDir = await Deno.makeTempDir({ prefix: "duplex-capacity-stand-in-" });
  try {
    // One stand-in per round, all kept live (their shared pages in none's USS).
    for (let round = 0; round < params.rounds; round++) {
      const session = await DuplexSession.start({
        transport: subprocess(standInCli(params.standIn, configDir)),
      });
      sessions.push(session);
      const pid = session.pid;
      if (pid === undefined) throw new Error("Cannot measure the stand-in: its session has no pid");
      await session.send("first turn");
      standIn.cold.push(cpuMsOf(pid));
      for (let i = 0; i < 20; i++) await session.send(`warm-up ${i}`);
      const began = selfCpuMs();
      const theirs = cpuMsOf(pid);
      for (let i = 0; i < params.turns; i++) {
        const turn = await session.send(`round ${round} turn ${i}`);
        if (turn.result.isError) throw new Error(`Cannot run the turn: ${turn.result.text}`);
      }
      cpu.push((selfCpuMs() - began) / params.turns);
      standIn.turn.push((cpuMsOf(pid) - theirs) / params.turns);
    }
    for (const session of sessions) standIn.memory.push(memoryOf(session.pid!));
  } finally {
    for (const session of sessions) await session.close();
    await Deno.remove(configDir, { recursive: true }).catch(() => {});
  }
  progress(`library: ${cpu.map((ms) => ms.toFixed(3)).join(", ")} ms CPU per warm turn`);
  const record: number[] = [];
  // One more round, dropped: the first pool's heap still grows with code being compiled.
  for (let round = 0; round <= params.rounds; round++) {
    const got = await poolMemory({
      conversations: params.conversations,
      warmup: Math.min(200, params.conversations),
      concurrency: 8,
    });
    if (round > 0) record.push(got.bytesPerConversation as number);
  }
  progress(`pool: ${record.map(Math.round).join(", ")} B per hibernated conversation`);
  return [
    figure("libTurnCpuMs", "library: CPU per warm turn (stand-in CLI)", "ms", cpu),
    figure(
      "standInColdCpuMs",
      "stand-in CLI: CPU of a start (spawn to first result)",
      "ms",
      standIn.cold,
    ),
    figure("standInTurnCpuMs", "stand-in CLI: CPU per warm turn", "ms", standIn.turn),
    figure("standInRss", "stand-in CLI: RSS, live", "MiB", standIn.memory.map((m) => m.rss)),
    figure("standInUss", "stand-in CLI: USS, live", "MiB", standIn.memory.map((m) => m.uss)),
    figure("poolRecordBytes", "pool: heap per hibernated conversation", "B", record),
  ];
}
