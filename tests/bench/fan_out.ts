/**
 * Fan-out workload (Deno side), workload 4: many subscribers on one session,
 * each counting every event of a long stream; optionally one more subscriber
 * that never reads (stalled).
 *
 * @module
 */

import type { SessionEvent, Subscription } from "../../mod.ts";
import { forceGc, within } from "./_measure.ts";
import { type CliTarget, openSession } from "./turns.ts";

/** Parameters of {@linkcode fanOut}. */
export interface FanOutParams {
  readonly target: CliTarget;
  readonly frames: number;
  readonly subscribers: number;
  /** Capacity of every subscriber (the stalled one included). */
  readonly capacity: number;
  /** Add one subscriber that never reads. */
  readonly stalled: boolean;
}

/**
 * Deliveries per second to `subscribers` readers, with or without a stalled one.
 *
 * @param params The fake CLI and the sizes.
 * @returns Times, deliveries, drops, and what the stalled subscriber holds.
 */
export async function fanOut(params: FanOutParams): Promise<Record<string, unknown>> {
  const { target, frames, subscribers, capacity } = params;
  const session = await openSession(target);
  try {
    await session.send("warm up");
    forceGc();
    const stalled: Subscription<SessionEvent> | undefined = params.stalled
      ? session.subscribe({ capacity })
      : undefined;
    let first = 0;
    let delivered = 0;
    let lagged = 0;
    const readers: Promise<number>[] = [];
    for (let s = 0; s < subscribers; s++) {
      const sub = session.subscribe({ capacity });
      readers.push((async () => {
        for await (const event of sub) {
          if (event.type === "stream_event") {
            if (first === 0) first = performance.now();
            delivered++;
          } else if (event.type === "lagged") {
            lagged += event.count;
          } else if (event.type === "result") {
            break;
          }
        }
        return performance.now();
      })());
    }
    const turn = session.send(`[[stream:${frames}]]`, { collectEvents: false });
    const [, ends] = await within(
      Promise.all([turn, Promise.all(readers)]),
      300_000,
      "the fan-out",
    );
    const seconds = (Math.max(...ends) - first) / 1000;
    const result = {
      frames,
      subscribers,
      capacity,
      stalled: params.stalled,
      delivered,
      lagged,
      seconds,
      deliveriesPerSecond: delivered / seconds,
      stalledHeld: stalled?.size,
      stalledDropped: stalled?.dropped,
      heapUsedMb: Deno.memoryUsage().heapUsed / 1048576,
    };
    stalled?.unsubscribe();
    return result;
  } finally {
    await session.close();
  }
}
