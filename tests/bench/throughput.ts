/**
 * Frame throughput workloads (Deno side), workload 3:
 *
 * - {@linkcode throughputOurs}: the fake CLI writes N `stream_event` frames
 *   as fast as it can; one subscriber of a `DuplexSession` (subprocess
 *   transport) counts them. With `slow`, the subscriber yields one macrotask
 *   per event (a consumer slower than the producer).
 * - {@linkcode throughputBare}: the same frames read by a bare Deno pipe
 *   (no library): what the platform gives.
 * - {@linkcode throughputLimit}: `JSON.parse` of the same lines, pre-split,
 *   in one loop: the ceiling.
 *
 * Times run from the first `stream_event` seen to the `result`, so process
 * start-up is not counted on any side. With `warmStream`, every side first
 * streams the same frames once unmeasured (steady state, like the limit's
 * repeated loops).
 *
 * @module
 */

import type { SessionEvent } from "../../mod.ts";
import { streamEventLines } from "./_frames.ts";
import { userLine } from "./_bare_pipe.ts";
import { forceGc, macrotask, median, within } from "./_measure.ts";
import { type CliTarget, openBare, openSession } from "./turns.ts";

const LIMIT_MS = 300_000;

/** Parameters of {@linkcode throughputOurs}. */
export interface ThroughputParams {
  readonly target: CliTarget;
  readonly frames: number;
  /** Subscriber capacity (default: the library's default). */
  readonly capacity?: number;
  /** Yield a macrotask per event. */
  readonly slow?: boolean;
  /** Stream the frames once unmeasured first (warm JIT and heap). */
  readonly warmStream?: boolean;
  /** Keep the turn's events in `turn.events` (default: the library's default, true). */
  readonly collectEvents?: boolean;
}

/**
 * Frames per second delivered to one subscriber.
 *
 * @param params The fake CLI, the frame count, the subscriber.
 * @returns Counts and times.
 */
export async function throughputOurs(params: ThroughputParams): Promise<Record<string, unknown>> {
  const { target, frames, capacity, slow } = params;
  const collect = params.collectEvents === undefined ? {} : { collectEvents: params.collectEvents };
  const session = await openSession(target);
  try {
    await session.send("warm up"); // the process is up and answering
    if (params.warmStream) {
      // The same stream once unmeasured: steady state, as the limit's repeated loops.
      await session.send(`[[stream:${frames}]]`, collect);
    }
    forceGc();
    const sub = session.subscribe(capacity === undefined ? {} : { capacity });
    let first = 0;
    let last = 0;
    let delivered = 0;
    let lagged = 0;
    const consumer = (async () => {
      for await (const event of sub as AsyncIterable<SessionEvent>) {
        if (event.type === "stream_event") {
          if (delivered === 0) first = performance.now();
          delivered++;
        } else if (event.type === "lagged") {
          lagged += event.count;
        } else if (event.type === "result") {
          last = performance.now();
          break;
        }
        if (slow) await macrotask();
      }
    })();
    const turn = session.send(`[[stream:${frames}]]`, collect);
    await within(Promise.all([turn, consumer]), LIMIT_MS, "the stream");
    const seconds = (last - first) / 1000;
    return {
      frames,
      delivered,
      lagged,
      dropped: sub.dropped,
      seconds,
      framesPerSecond: frames / seconds,
    };
  } finally {
    await session.close();
  }
}

/**
 * The same frames through a bare Deno pipe (byte split, decode, parse).
 *
 * @param params The fake CLI and the frame count.
 * @returns Counts and times.
 */
export async function throughputBare(params: ThroughputParams): Promise<Record<string, unknown>> {
  const pipe = openBare(params.target);
  try {
    await pipe.turn(userLine("warm up"));
    if (params.warmStream) await pipe.turn(userLine(`[[stream:${params.frames}]]`));
    forceGc();
    let first = 0;
    let delivered = 0;
    await pipe.write(userLine(`[[stream:${params.frames}]]`));
    await within(
      pipe.readUntilResult((frame) => {
        if (frame.type !== "stream_event") return;
        if (delivered === 0) first = performance.now();
        delivered++;
      }),
      LIMIT_MS,
      "the stream",
    );
    const seconds = (performance.now() - first) / 1000;
    return { frames: params.frames, delivered, seconds, framesPerSecond: params.frames / seconds };
  } finally {
    await pipe.close();
  }
}

/**
 * The ceiling: `JSON.parse` of the pre-split lines in one loop (median of `repeat` loops).
 *
 * @param params The frame count and repetitions.
 * @returns Frames per second.
 */
export function throughputLimit(
  params: { frames: number; repeat: number },
): Record<string, unknown> {
  const lines = streamEventLines(params.frames);
  const rates: number[] = [];
  for (let r = 0; r < params.repeat; r++) {
    forceGc();
    const start = performance.now();
    let count = 0;
    for (const line of lines) if (JSON.parse(line) !== null) count++;
    const seconds = (performance.now() - start) / 1000;
    if (count !== params.frames) throw new Error(`Cannot parse: got ${count} frames`);
    rates.push(params.frames / seconds);
  }
  return { frames: params.frames, rates, framesPerSecond: median(rates) };
}
