/**
 * What `isolation: "bubblewrap"` costs (workload 9 of `run.ts`, issue 21),
 * on the real CLI against the fake Messages API: a cold start (spawn to
 * the first result) and a warm turn, sandboxed vs not. Each child runs both
 * modes in pairs (`isolationTurns`), one child per round.
 *
 * - 9a: cold first turn, `DuplexSession.start` over `subprocess()` then
 *   `send`, `isolation: "bubblewrap"` vs `"none"`;
 * - 9b: warm turns on the same processes;
 * - 9c: the sandbox's own setup: `bwrap` with the adapter's arguments
 *   running `true`, vs `true` alone (spawn to exit), alternating, in the
 *   runner: the low-noise part of 9a.
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
import { bubblewrapArgs } from "../../adapters/subprocess/_bubblewrap.ts";
import type { PoolKit } from "./run_pool.ts";
import type { Result } from "./run.ts";
import type { CliTarget } from "./turns.ts";

/** The two modes compared. */
const MODES = ["none", "bubblewrap"] as const;
type Mode = typeof MODES[number];

/** Parameters of {@linkcode isolationTurns}. */
export interface IsolationTurnsParams {
  readonly target: CliTarget;
  /** Cold starts of each mode in this process (the runner may drop the first pair). */
  readonly samples: number;
  /** Warm turns of each mode after each pair of cold starts. */
  readonly warmTurns: number;
}

/**
 * Measures cold starts and warm turns of both modes in pairs (the child
 * side): each sample starts one sandboxed and one plain CLI (which first
 * alternates), then alternates their warm turns, so that the load of a
 * shared machine falls on both alike.
 *
 * @param params The CLI and the sizes.
 * @returns `cold` and `warm` times per mode, in ms.
 */
export async function isolationTurns(
  params: IsolationTurnsParams,
): Promise<Record<string, unknown>> {
  const cold: Record<Mode, number[]> = { none: [], bubblewrap: [] };
  const warm: Record<Mode, number[]> = { none: [], bubblewrap: [] };
  for (let i = 0; i < params.samples; i++) {
    const order = i % 2 === 0 ? MODES : [...MODES].reverse() as Mode[];
    const sessions = new Map<Mode, DuplexSession>();
    try {
      for (const mode of order) {
        const transport = subprocess({ ...processOf(params.target), isolation: mode });
        cold[mode].push(
          await timed(async () => {
            const session = await DuplexSession.start({ transport });
            sessions.set(mode, session);
            await echoTurn(session, `cold ${mode} ${i}`);
          }),
        );
      }
      for (let turn = 0; turn < params.warmTurns; turn++) {
        for (const mode of order) {
          const session = sessions.get(mode)!;
          warm[mode].push(await timed(() => echoTurn(session, `warm ${mode} ${i}.${turn}`)));
        }
      }
    } finally {
      for (const session of sessions.values()) await session.close();
    }
  }
  return { cold, warm };
}

/** What `run.ts` lends this workload (a part of the pool's kit). */
export type IsolationKit = Pick<
  PoolKit,
  | "smoke"
  | "rounds"
  | "temp"
  | "cliWhy"
  | "real"
  | "deno"
  | "progress"
  | "format"
  | "raw"
  | "rows"
>;

const FULL = { rounds: 4, samples: 5, warmTurns: 6, warmup: true };
const SMOKE = { rounds: 1, samples: 1, warmTurns: 2, warmup: false };
/** Spawns of each side for 9c. */
const SETUP_RUNS = { full: 200, smoke: 10 };

/* Spawn to exit of `true`, plain and in the sandbox, alternating; medians in ms. */
async function setupCost(
  runs: number,
  temp: string,
): Promise<{ plain: number; sandboxed: number }> {
  await Deno.mkdir(`${temp}/home`, { recursive: true });
  await Deno.mkdir(`${temp}/work`, { recursive: true });
  const args = bubblewrapArgs({
    program: "/usr/bin/true",
    args: [],
    cwd: `${temp}/work`,
    env: { HOME: `${temp}/home`, TMPDIR: `${temp}/home` },
    privateDir: temp,
  });
  const time = async (program: string, argv: string[]): Promise<number> => {
    const start = performance.now();
    const status = await new Deno.Command(program, { args: argv, detached: true }).output();
    if (!status.success) throw new Error(`Cannot time ${program}: exit ${status.code}`);
    return performance.now() - start;
  };
  const plain: number[] = [];
  const sandboxed: number[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await time("/usr/bin/true", []));
    sandboxed.push(await time("bwrap", args));
  }
  return { plain: median(plain), sandboxed: median(sandboxed) };
}

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
    for (
      const [id, workload] of [["9a", "cold first turn"], ["9b", "warm turn"], ["9c", "setup"]]
    ) {
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
  const runs: Result[] = [];
  for (let round = 0; round < (kit.rounds ?? sizes.rounds); round++) {
    runs.push(
      await kit.deno("isolation-turns", {
        target,
        samples: sizes.samples,
        warmTurns: sizes.warmTurns,
      }, 300_000),
    );
  }
  kit.raw["isolation-turns"] = runs;
  const values = (mode: Mode, key: "cold" | "warm"): number[] =>
    runs.flatMap((run) => {
      const all = (run[key] as Record<Mode, number[]> | undefined)?.[mode] ?? [];
      // The first pair of each child warms it up (and its turns with it).
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
  const setup = await setupCost(
    kit.smoke ? SETUP_RUNS.smoke : SETUP_RUNS.full,
    `${kit.temp}/setup`,
  );
  kit.raw["isolation-setup"] = setup;
  kit.rows.push({
    id: "9c",
    workload: "sandbox setup: bwrap (the adapter's arguments) running true vs true, spawn to exit",
    ours: ms(setup.sandboxed),
    peer: ms(setup.plain),
    ratio: `+${ms(setup.sandboxed - setup.plain)}`,
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
