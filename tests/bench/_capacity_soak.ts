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
}

/** What the model predicts for it. */
export interface SoakPrediction {
  /** RSS of each relay process, MiB. */
  readonly relayRssMib: number;
  /** Memory of all the CLIs together (private pages of each, shared ones once), MiB. */
  readonly cliMib: number;
  /**
   * Turns per second with every core busy on the CLI, the relay and the
   * client library (PostgreSQL's and HAProxy's own CPU not counted: an
   * upper bound).
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
  const [rss, uss, turn] = shape.cli === "real"
    ? ["cliIdleNRss", "cliIdleNUss", "cliBurstCpuMs"]
    : ["standInRss", "standInUss", "standInTurnCpuMs"];
  const perTurn = cost(costs, turn) + cost(costs, "relayTurnCpuMs") + cost(costs, "libTurnCpuMs");
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
