/**
 * The capacity model: from the measured per-unit costs (keys of the figures
 * `capacity.ts` prints), how many conversations a host holds and what a
 * fleet needs. docs/capacity.md writes the same formulas out.
 *
 * @module
 */

/** The measured constants, by figure key. */
export type Costs = Readonly<Record<string, number>>;

/** What the model assumes beyond the measured costs. */
export const ASSUMED = Object.freeze({
  /** The share of a host's cores the model plans to use. */
  utilisation: 0.7,
  /** MiB a host keeps for the system, the relay's own baseline and the page cache. */
  reserveMib: 1024,
  /** PostgreSQL connections each relay's client opens (`postgres(url, { max: 4 })`). */
  pgConnectionsPerRelay: 4,
});

/** A host's size. */
export interface Host {
  readonly cores: number;
  readonly gib: number;
}

function cost(costs: Costs, key: string): number {
  const value = costs[key];
  if (value === undefined || !Number.isFinite(value)) {
    throw new Error(`Cannot apply the model: no measured ${key}`);
  }
  return value;
}

/** MiB one more live conversation takes: its CLI's private memory and its relay connection. */
export function liveMib(costs: Costs): number {
  return cost(costs, "cliIdleNUss") + cost(costs, "relayConnKib") / 1024;
}

/** CPU ms of one warm turn, on the host: the CLI, the relay, the library. */
export function warmTurnCpuMs(costs: Costs): number {
  return cost(costs, "cliWarmCpuMs") + cost(costs, "relayTurnCpuMs") +
    cost(costs, "libTurnCpuMs");
}

/** What one host holds. */
export interface HostCapacity {
  readonly liveByMemory: number;
  readonly liveByIdleCpu: number;
  /** Warm turns per second its cores run, all conversations live. */
  readonly warmTurnsPerSec: number;
  /** Cold starts (resumes) per second its cores run. */
  readonly resumesPerSec: number;
  /** Hibernated conversations whose pool records fit in its memory. */
  readonly hibernatedInMemory: number;
}

/**
 * One host's capacity.
 *
 * @param costs The measured costs.
 * @param host Its size.
 * @returns Its capacity.
 */
export function hostCapacity(costs: Costs, host: Host): HostCapacity {
  const free = host.gib * 1024 - ASSUMED.reserveMib - sharedMib(costs);
  const cpuMs = host.cores * 1000 * ASSUMED.utilisation;
  return {
    liveByMemory: Math.floor(free / liveMib(costs)),
    liveByIdleCpu: Math.floor(cpuMs / Math.max(cost(costs, "cliIdleCpu"), 0.01)),
    warmTurnsPerSec: cpuMs / warmTurnCpuMs(costs),
    resumesPerSec: cpuMs / (cost(costs, "cliColdCpuMs") + warmTurnCpuMs(costs)),
    hibernatedInMemory: Math.floor((free * 1048576) / cost(costs, "poolRecordBytes")),
  };
}

/** The CLI's pages all its processes share (its binary), counted once per host. */
export function sharedMib(costs: Costs): number {
  return cost(costs, "cliIdleNRss") - cost(costs, "cliIdleNUss");
}

/** A fleet's load. */
export interface Load {
  /** Conversations open at once. */
  readonly conversations: number;
  /** Mean seconds between two turns of one conversation (exponential gaps). */
  readonly thinkS: number;
  /** Seconds a conversation stays live after a turn before it is hibernated. */
  readonly idleS: number;
}

/** What a fleet needs. */
export interface Fleet {
  readonly turnsPerSec: number;
  /** The share of turns that find their conversation hibernated (a resume). */
  readonly resumeShare: number;
  readonly live: number;
  readonly cores: number;
  readonly memoryGib: number;
  readonly hosts: number;
  /** What sets the host count. */
  readonly bottleneck: "memory" | "cpu";
  readonly pgConnections: number;
  readonly pgRowsPerSec: number;
  readonly pgGibPerDay: number;
  /** The turns per second the measured PostgreSQL takes, over the load's. */
  readonly pgHeadroom: number;
}

/**
 * A fleet's needs, on hosts of one size (one relay per host, its CLIs its children).
 *
 * @param costs The measured costs.
 * @param load The load.
 * @param host The size of each host.
 * @returns What it needs.
 */
export function fleet(costs: Costs, load: Load, host: Host): Fleet {
  const turnsPerSec = load.conversations / load.thinkS;
  const resumeShare = Math.exp(-load.idleS / load.thinkS);
  // Live from a turn until `idleS` after it or the next turn: E[min(gap, idleS)] / thinkS.
  const live = Math.ceil(load.conversations * (1 - resumeShare));
  const cpuMs = turnsPerSec * (warmTurnCpuMs(costs) + resumeShare * cost(costs, "cliColdCpuMs")) +
    live * cost(costs, "cliIdleCpu");
  const cores = cpuMs / 1000 / ASSUMED.utilisation;
  const perHostFree = host.gib * 1024 - ASSUMED.reserveMib - sharedMib(costs);
  const hibernated = load.conversations - live;
  const liveMem = live * liveMib(costs) + hibernated * cost(costs, "poolRecordBytes") / 1048576;
  const byMemory = Math.ceil(liveMem / perHostFree);
  const byCpu = Math.ceil(cores / host.cores);
  const hosts = Math.max(byMemory, byCpu, 1);
  const rows = cost(costs, "cliTurnLines");
  return {
    turnsPerSec,
    resumeShare,
    live,
    cores,
    memoryGib: (liveMem + hosts * (ASSUMED.reserveMib + sharedMib(costs))) / 1024,
    hosts,
    bottleneck: byMemory >= byCpu ? "memory" : "cpu",
    pgConnections: hosts * ASSUMED.pgConnectionsPerRelay,
    pgRowsPerSec: turnsPerSec * rows,
    pgGibPerDay: (turnsPerSec * 86400 * rows * pgBytesPerEntry(costs)) / 1073741824,
    pgHeadroom: cost(costs, "pgTurnsPerSecN") / turnsPerSec,
  };
}

/** PostgreSQL's bytes (table and indexes) per stored entry, from the fixture's turns. */
export function pgBytesPerEntry(costs: Costs): number {
  return cost(costs, "pgTurnBytes") / cost(costs, "pgRowsPerTurn");
}
