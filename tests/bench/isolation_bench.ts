/**
 * What `isolation: "bubblewrap"` costs (workload 9 of `run.ts`, issue 21),
 * on the real CLI against the fake Messages API: a cold start (spawn to
 * the first result) and a warm turn, sandboxed vs not. The two modes run
 * in children of their own, alternating round by round.
 *
 * - 9a: cold first turn, `DuplexSession.start` over `subprocess()` then
 *   `send`, `isolation: "bubblewrap"` vs `"none"`;
 * - 9b: warm turns on the same processes.
 *
 * `run.ts --only=9` runs only these; without `bwrap` on PATH the rows are
 * skipped and say why.
 *
 * @module
 */

import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { echoTurn, processOf, timed } from "./_pool_bench.ts";
import { median, quantile } from "./_measure.ts";
import type { PoolKit } from "./run_pool.ts";
import type { Result } from "./run.ts";
import type { CliTarget } from "./turns.ts";

/** Parameters of {@linkcode isolationTurns}. */
export interface IsolationTurnsParams {
  readonly target: CliTarget;
  readonly isolation: "none" | "bubblewrap";
  /** Cold starts in this process (the runner may drop the first). */
  readonly samples: number;
  /** Warm turns after each cold start. */
  readonly warmTurns: number;
}

/**
 * Measures cold starts and warm turns in one isolation mode (the child side).
 *
 * @param params The CLI, the mode and the sizes.
 * @returns `cold` (spawn to first result) and `warm` (each later turn), in ms.
 */
export async function isolationTurns(
  params: IsolationTurnsParams,
): Promise<Record<string, unknown>> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < params.samples; i++) {
    let session: DuplexSession | undefined;
    try {
      const transport = subprocess({ ...processOf(params.target), isolation: params.isolation });
      cold.push(
        await timed(async () => {
          session = await DuplexSession.start({ transport });
          await echoTurn(session, `cold ${i}`);
        }),
      );
      const live = session as DuplexSession;
      for (let turn = 0; turn < params.warmTurns; turn++) {
        warm.push(await timed(() => echoTurn(live, `warm ${i}.${turn}`)));
      }
    } finally {
      await session?.close();
    }
  }
  return { cold, warm };
}

/** What `run.ts` lends this workload (a part of the pool's kit). */
export type IsolationKit = Pick<
  PoolKit,
  | "smoke"
  | "rounds"
  | "cliWhy"
  | "real"
  | "deno"
  | "interleave"
  | "progress"
  | "format"
  | "raw"
  | "rows"
>;

const FULL = { rounds: 5, samples: 4, warmTurns: 5, warmup: true };
const SMOKE = { rounds: 1, samples: 1, warmTurns: 2, warmup: false };

function bwrapOnPath(): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
    try {
      return dir !== "" && Deno.statSync(`${dir}/bwrap`).isFile;
    } catch {
      return false;
    }
  });
}

/**
 * Adds rows 9a and 9b.
 *
 * @param kit What the runner lends.
 */
export async function workload9(kit: IsolationKit): Promise<void> {
  const { ms, x } = kit.format;
  const skip = (why: string): void => {
    for (const [id, workload] of [["9a", "cold first turn"], ["9b", "warm turn"]]) {
      kit.rows.push({
        id: id!,
        workload: `${workload}, real CLI: isolation bubblewrap vs none`,
        ours: "skipped",
        peer: why,
        ratio: "",
        target: "",
        met: "n/a",
      });
    }
  };
  if (!kit.real) return skip(kit.cliWhy);
  if (!bwrapOnPath()) return skip("bwrap is not on PATH (apt-get install bubblewrap)");
  kit.progress("workload 9: the bubblewrap sandbox");
  const sizes = kit.smoke ? SMOKE : FULL;
  const target = await kit.real();
  const runs: Partial<Record<"none" | "bubblewrap", Result>>[] = [];
  const side = (isolation: "none" | "bubblewrap") => () =>
    kit.deno("isolation-turns", {
      target,
      isolation,
      samples: sizes.samples,
      warmTurns: sizes.warmTurns,
    }, 300_000);
  for (let round = 0; round < (kit.rounds ?? sizes.rounds); round++) {
    const got = await kit.interleave(round, { none: side("none"), bubblewrap: side("bubblewrap") });
    runs.push(got);
  }
  kit.raw["isolation-turns"] = runs;
  const values = (mode: "none" | "bubblewrap", key: "cold" | "warm"): number[] =>
    runs.flatMap((run) => {
      const all = (run[mode]?.[key] as number[] | undefined) ?? [];
      // The first cold start of each child warms it up (and its turns with it).
      const skipped = sizes.warmup ? (key === "cold" ? 1 : sizes.warmTurns) : 0;
      return all.slice(skipped);
    });
  const p90 = (list: number[]): string => `${ms(median(list))} (p90 ${ms(quantile(list, 0.9))})`;
  const cold = { on: values("bubblewrap", "cold"), off: values("none", "cold") };
  const warm = { on: values("bubblewrap", "warm"), off: values("none", "warm") };
  const coldRatio = median(cold.on) / median(cold.off);
  const added = median(cold.on) - median(cold.off);
  const warmRatio = median(warm.on) / median(warm.off);
  kit.rows.push({
    id: "9a",
    workload: "cold first turn, real CLI (spawn to result): isolation bubblewrap vs none",
    ours: p90(cold.on),
    peer: p90(cold.off),
    ratio: `${x(coldRatio)} (${added >= 0 ? "+" : "-"}${ms(Math.abs(added))})`,
    target: "(info)",
    met: "info",
  });
  kit.rows.push({
    id: "9b",
    workload: "warm turn, real CLI: isolation bubblewrap vs none",
    ours: p90(warm.on),
    peer: p90(warm.off),
    ratio: x(warmRatio),
    target: "<= 1.1x",
    met: kit.format.yes(warmRatio <= 1.1),
  });
}
