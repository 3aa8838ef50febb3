/**
 * What the capacity model predicts for a soak run (`tests/soak/soak.ts`):
 * the memory of its relays and of its CLIs, and the turns per second its
 * machine's cores allow, from the measured costs, to set against the soak's
 * own figures (the model's error).
 *
 * @module
 */

import type { Costs } from "./_capacity_model.ts";

/** A soak's shape. */
export interface SoakShape {
  /** The CLI its relays run. */
  readonly cli: "stand-in" | "real";
  readonly relays: number;
  /** Conversations live at once (a CLI and a relay connection each). */
  readonly live: number;
  /** The machine's cores. */
  readonly cores: number;
  /** Turns per conversation: each conversation's start is spread over them (default: no starts). */
  readonly turns?: number;
}

/** What the model predicts for it. */
export interface SoakPrediction {
  /** RSS of each relay process, MiB. */
  readonly relayRssMib: number;
  /** Memory of all the CLIs together (private pages of each, shared ones once), MiB. */
  readonly cliMib: number;
  /**
   * Turns per second with every core busy on the CLI (its turns, and its
   * start spread over a conversation's turns), the relay, the client
   * library and PostgreSQL's server (its appends; HAProxy's CPU not
   * counted: an upper bound).
   */
  readonly turnsPerSec: number;
}

function cost(costs: Costs, key: string): number {
  const value = costs[key];
  if (value === undefined) throw new Error(`Cannot predict the soak: no measured ${key}`);
  return value;
}

/**
 * Predicts a soak's figures.
 *
 * @param costs The measured costs.
 * @param shape The soak.
 * @returns The prediction.
 */
export function predictSoak(costs: Costs, shape: SoakShape): SoakPrediction {
  const [rss, uss, turn, start] = shape.cli === "real"
    ? ["cliIdleNRss", "cliIdleNUss", "cliBurstCpuMs", "cliColdCpuMs"]
    : ["standInRss", "standInUss", "standInTurnCpuMs", "standInColdCpuMs"];
  const perTurn = cost(costs, turn) + cost(costs, "relayTurnCpuMs") + cost(costs, "libTurnCpuMs") +
    (shape.turns === undefined ? 0 : cost(costs, start) / shape.turns) +
    cost(costs, "storeAppendsPerTurn") * cost(costs, "pgCpuMsPerAppend");
  return {
    relayRssMib: cost(costs, "relayBaseMb") +
      (shape.live / shape.relays) * cost(costs, "relayConnKib") / 1024,
    cliMib: shape.live * cost(costs, uss) + (cost(costs, rss) - cost(costs, uss)),
    turnsPerSec: (shape.cores * 1000) / perTurn,
  };
}

/**
 * Reads a shape from `<cli>:<relays>:<live>` (`stand-in:3:1000`).
 *
 * @param text The flag's value.
 * @param cores The machine's cores.
 * @returns The shape.
 */
export function parseShape(text: string, cores: number): SoakShape {
  const [cli, relays, live] = text.split(":");
  if ((cli !== "real" && cli !== "stand-in") || !(Number(relays) >= 1) || !(Number(live) >= 1)) {
    throw new Error(`Cannot read the soak shape "${text}": want <stand-in|real>:<relays>:<live>`);
  }
  return { cli, relays: Number(relays), live: Number(live), cores };
}

/** What the check reads of a soak's report (`tests/soak/soak.ts --json`). */
export interface SoakFigures {
  readonly options: {
    readonly cli: "stand-in" | "real";
    readonly concurrency: number;
    /** Turns per conversation. */
    readonly turns: number;
  };
  readonly turnsPerSec: number;
  readonly delivered: number;
  readonly errorResults: number;
  readonly relayRss: readonly { readonly peakMib: number }[];
  readonly relayKibPerSession?: number;
}

/** One figure, predicted and measured. */
export interface SoakCheck {
  readonly what: string;
  readonly predicted: number;
  readonly measured: number;
  /** `(measured - predicted) / predicted`. */
  readonly error: number;
}

function check(what: string, predicted: number, measured: number): SoakCheck {
  return { what, predicted, measured, error: (measured - predicted) / predicted };
}

/**
 * The model against soak runs: each run's relays' peak RSS and RSS per live
 * conversation, its turns per second against the CPU ceiling, and, given
 * two runs with the CPU each used in all (its process tree's, from
 * `getrusage`), the CPU of one more turn.
 *
 * @param costs The measured costs (the stand-in's from a `--stand-in` run of the soak's CLI).
 * @param runs The soak reports, with the CPU seconds each run used if known.
 * @param cores The machine's cores.
 * @returns The checks.
 */
export function checkSoak(
  costs: Costs,
  runs: readonly { readonly report: SoakFigures; readonly cpuS?: number }[],
  cores: number,
): SoakCheck[] {
  const checks: SoakCheck[] = [];
  for (const { report } of runs) {
    const relays = report.relayRss.length;
    const shape = {
      cli: report.options.cli,
      relays,
      live: report.options.concurrency,
      cores,
      turns: report.options.turns,
    };
    const predicted = predictSoak(costs, shape);
    const size = `${report.options.cli}, ${report.options.concurrency} at once`;
    checks.push(check(
      `${size}: a relay's peak RSS, MiB`,
      predicted.relayRssMib,
      Math.max(...report.relayRss.map((relay) => relay.peakMib)),
    ));
    if (report.relayKibPerSession !== undefined) {
      checks.push(check(
        `${size}: relay RSS per live conversation, KiB`,
        cost(costs, "relayConnKib"),
        report.relayKibPerSession,
      ));
    }
    checks.push(
      check(
        `${size}: turns/s (the model: CPU's ceiling)`,
        predicted.turnsPerSec,
        report.turnsPerSec,
      ),
    );
  }
  const timed = runs.filter((run) => run.cpuS !== undefined);
  if (timed.length === 2 && timed[0]!.report.options.cli === timed[1]!.report.options.cli) {
    const turns = timed.map((run) => run.report.delivered + run.report.errorResults);
    const perTurn = ((timed[1]!.cpuS! - timed[0]!.cpuS!) * 1000) / (turns[1]! - turns[0]!);
    const shape = { cli: timed[0]!.report.options.cli, relays: 1, live: 1, cores };
    checks.push(check(
      `${shape.cli}: CPU of one more turn (between the two runs), ms`,
      (cores * 1000) / predictSoak(costs, shape).turnsPerSec,
      perTurn,
    ));
  }
  return checks;
}
