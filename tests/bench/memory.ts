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
  return { turns, baselineTurn, gc, events, ...growth(samples, baselineTurn) };
}

type Sample = { turn: number; rssMb: number; heapMb: number };

function growth(samples: Sample[], baselineTurn: number): Record<string, unknown> {
  const base = samples.find((s) => s.turn === baselineTurn);
  const end = samples.at(-1);
  const half = samples[Math.floor((samples.length - 1) / 2)];
  return {
    samples,
    rssGrowthMb: end && base ? end.rssMb - base.rssMb : NaN,
    heapGrowthMb: end && base ? end.heapMb - base.heapMb : NaN,
    // Growth over the second half of the run: a leak keeps growing, warm-up does not.
    rssGrowthSecondHalfMb: end && half ? end.rssMb - half.rssMb : NaN,
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
  return { turns, baselineTurn, gc, bare: true, ...growth(samples, baselineTurn) };
}
