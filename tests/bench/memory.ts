/**
 * Long-session memory workload (Deno side), workload 5: many turns on one
 * session with the instant fake CLI and a subscriber reading everything;
 * RSS and heap after a forced GC every `sampleEvery` turns. With `bare`, the
 * same turns on a bare Deno pipe (no library): what the runtime itself does.
 *
 * @module
 */

import { userLine } from "./_bare_pipe.ts";
import { forceGc, rssMb, within } from "./_measure.ts";
import { type CliTarget, openBare, openSession } from "./turns.ts";

/** Parameters of {@linkcode longSession}. */
export interface LongSessionParams {
  readonly target: CliTarget;
  readonly turns: number;
  /** The turn after which growth is measured (the warm-up). */
  readonly baselineTurn: number;
  /** The turn where the target's growth is read (the run goes on past it, for the leak check). */
  readonly checkpointTurn?: number;
  readonly sampleEvery: number;
  /** Run the turns on a bare Deno pipe instead of a session. */
  readonly bare?: boolean;
}

/**
 * RSS and heap over a long session.
 *
 * @param params The fake CLI and the sizes.
 * @returns Samples and the growth after the baseline turn.
 */
export async function longSession(params: LongSessionParams): Promise<Record<string, unknown>> {
  const { target, turns, baselineTurn, sampleEvery } = params;
  if (params.bare) return await longBare(params);
  const session = await openSession(target);
  const sub = session.subscribe({ capacity: 1024 });
  let events = 0;
  const reader = (async () => {
    for await (const _event of sub) events++;
  })();
  const samples: Sample[] = [];
  const gc = forceGc();
  try {
    for (let turn = 1; turn <= turns; turn++) {
      const done = await session.send(`turn ${turn}`);
      if (done.result.isError) throw new Error("Cannot run a turn: the fake CLI failed");
      if (turn % sampleEvery === 0 || turn === baselineTurn) {
        forceGc();
        samples.push({ turn, rssMb: rssMb(), heapMb: Deno.memoryUsage().heapUsed / 1048576 });
      }
    }
  } finally {
    await session.close();
    await within(reader, 10_000, "the reader");
  }
  return {
    turns,
    baselineTurn,
    gc,
    events,
    ...growth(samples, baselineTurn, params.checkpointTurn),
  };
}

type Sample = { turn: number; rssMb: number; heapMb: number };

function growth(
  samples: Sample[],
  baselineTurn: number,
  checkpointTurn?: number,
): Record<string, unknown> {
  const base = samples.find((s) => s.turn === baselineTurn);
  const checkpoint = samples.find((s) => s.turn === checkpointTurn) ?? samples.at(-1);
  const end = samples.at(-1);
  const half = samples[Math.floor((samples.indexOf(checkpoint as Sample) + 1) / 2)];
  return {
    samples,
    rssGrowthMb: checkpoint && base ? checkpoint.rssMb - base.rssMb : NaN,
    heapGrowthMb: checkpoint && base ? checkpoint.heapMb - base.heapMb : NaN,
    // Growth over the second half up to the checkpoint: a leak keeps growing, warm-up does not.
    rssGrowthSecondHalfMb: checkpoint && half ? checkpoint.rssMb - half.rssMb : NaN,
    // Past the checkpoint (the runtime warm): what a per-turn leak would show.
    lateTurns: end && checkpoint ? end.turn - checkpoint.turn : 0,
    lateRssGrowthMb: end && checkpoint ? end.rssMb - checkpoint.rssMb : NaN,
    lateHeapGrowthMb: end && checkpoint ? end.heapMb - checkpoint.heapMb : NaN,
  };
}

async function longBare(params: LongSessionParams): Promise<Record<string, unknown>> {
  const { target, turns, baselineTurn, sampleEvery } = params;
  const pipe = openBare(target);
  const samples: Sample[] = [];
  const gc = forceGc();
  try {
    for (let turn = 1; turn <= turns; turn++) {
      await within(pipe.turn(userLine(`turn ${turn}`)), 30_000, "a bare turn");
      if (turn % sampleEvery === 0 || turn === baselineTurn) {
        forceGc();
        samples.push({ turn, rssMb: rssMb(), heapMb: Deno.memoryUsage().heapUsed / 1048576 });
      }
    }
  } finally {
    await pipe.close();
  }
  return {
    turns,
    baselineTurn,
    gc,
    bare: true,
    ...growth(samples, baselineTurn, params.checkpointTurn),
  };
}
