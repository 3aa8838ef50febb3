/**
 * Oversized-line workload (Deno side), workload 6: the fake CLI writes one
 * line far over `maxLineBytes`; the session must report `line_too_long`,
 * stay usable (a later turn succeeds) and keep its memory bounded.
 *
 * @module
 */

import { forceGc, peakRssMb, rssMb, within } from "./_measure.ts";
import { type CliTarget, openSession } from "./turns.ts";

/** Parameters of {@linkcode oversized}. */
export interface OversizedParams {
  readonly target: CliTarget;
  readonly lineBytes: number;
  readonly maxLineBytes: number;
}

/**
 * One huge line, then a normal turn.
 *
 * @param params The fake CLI, the line size and the limit.
 * @returns What the session reported, the next turn's outcome and memory.
 */
export async function oversized(params: OversizedParams): Promise<Record<string, unknown>> {
  const session = await openSession(params.target, { maxLineBytes: params.maxLineBytes });
  const sub = session.subscribe({ capacity: 64 });
  const diagnostics: { kind: string; bytes?: number; message: string }[] = [];
  const reader = (async () => {
    for await (const event of sub) {
      if (event.type === "diagnostic") {
        diagnostics.push({
          kind: event.kind,
          message: event.message,
          ...("bytes" in event && typeof event.bytes === "number" && { bytes: event.bytes }),
        });
      }
    }
  })();
  try {
    await session.send("warm up");
    forceGc();
    const rssBeforeMb = rssMb();
    const peakBeforeMb = peakRssMb();
    const start = performance.now();
    const big = await within(
      session.send(`[[huge:${params.lineBytes}]]`, { collectEvents: false }),
      120_000,
      "the huge line",
    );
    const seconds = (performance.now() - start) / 1000;
    const after = await within(session.send("after the huge line"), 30_000, "the next turn");
    return {
      lineBytes: params.lineBytes,
      maxLineBytes: params.maxLineBytes,
      seconds,
      bigTurnOk: !big.result.isError,
      nextTurnOk: !after.result.isError && after.result.text === "Echo: after the huge line",
      diagnostics,
      lineTooLong: diagnostics.some((d) => d.kind === "line_too_long"),
      rssBeforeMb,
      peakBeforeMb,
    };
  } finally {
    await session.close();
    await within(reader, 10_000, "the reader");
  }
}
