/**
 * The library's own per-unit costs, for the capacity model: the CPU this
 * process spends per warm turn of a `DuplexSession` over the pool's stand-in
 * CLI (a separate process, whose CPU is not counted), and the heap a
 * `SessionPool` keeps per hibernated conversation (workload 8g's
 * measurement, {@linkcode poolMemory}; needs `--v8-flags=--expose-gc`).
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { poolMemory } from "./pool_memory.ts";
import { type Figure, figure, progress, selfCpuMs, standInCli } from "./_capacity_proc.ts";

/** Parameters of {@linkcode measureLibrary}. */
export interface LibraryParams {
  /** Rounds of turns (one figure sample each). */
  readonly rounds: number;
  /** Warm turns per round. */
  readonly turns: number;
  /** Hibernated conversations per pool-memory sample. */
  readonly conversations: number;
}

/**
 * Measures the library.
 *
 * @param params The sizes.
 * @returns The figures.
 */
export async function measureLibrary(params: LibraryParams): Promise<Figure[]> {
  const cpu: number[] = [];
  await using session = await DuplexSession.start({ transport: subprocess(standInCli()) });
  for (let i = 0; i < 20; i++) await session.send(`warm-up ${i}`);
  for (let round = 0; round < params.rounds; round++) {
    const began = selfCpuMs();
    for (let i = 0; i < params.turns; i++) {
      const turn = await session.send(`round ${round} turn ${i}`);
      if (turn.result.isError) throw new Error(`Cannot run the turn: ${turn.result.text}`);
    }
    cpu.push((selfCpuMs() - began) / params.turns);
  }
  progress(`library: ${cpu.map((ms) => ms.toFixed(3)).join(", ")} ms CPU per warm turn`);
  const record: number[] = [];
  for (let round = 0; round < params.rounds; round++) {
    const got = await poolMemory({
      conversations: params.conversations,
      warmup: Math.min(200, params.conversations),
      concurrency: 8,
    });
    record.push(got.bytesPerConversation as number);
  }
  progress(`pool: ${record.map(Math.round).join(", ")} B per hibernated conversation`);
  return [
    figure("libTurnCpuMs", "library: CPU per warm turn (stand-in CLI)", "ms", cpu),
    figure("poolRecordBytes", "pool: heap per hibernated conversation", "B", record),
  ];
}
