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

/** CPU ms of one warm turn, on the host: the CLI (with its tail), the relay, the library. */
export function warmTurnCpuMs(costs: Costs): number {
  return cost(costs, "cliTurnCpuMs") + cost(costs, "relayTurnCpuMs") +
    cost(costs, "libTurnCpuMs");
}

/** CPU ms of a resume beyond its warm turn: a cold start of the CLI and its tail. */
export function resumeCpuMs(costs: Costs): number {
  return cost(costs, "cliColdCpuMs") + cost(costs, "cliColdTailCpuMs");
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
    resumesPerSec: cpuMs / (resumeCpuMs(costs) + warmTurnCpuMs(costs)),
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

/** What one conversation costs on average under a load. */
export interface PerConversation {
  /** The share of turns that find their conversation hibernated (a resume). */
  readonly resumeShare: number;
  /** The share of time it is live (a CLI running). */
  readonly liveShare: number;
  /** MiB of host memory. */
  readonly mib: number;
  /** CPU ms per second. */
  readonly cpuMsPerSec: number;
}

/**
 * What one conversation costs on average: live from a turn until `idleS`
 * after it or its next turn, whichever is first (with exponential gaps of
 * mean `thinkS`, a share `1 - e^(-idleS/thinkS)` of the time), and while a
 * resume starts it; a resume for each turn whose gap was longer than
 * `idleS` (a share `e^(-idleS/thinkS)`).
 *
 * @param costs The measured costs.
 * @param load The load (its `conversations` unused).
 * @returns Its costs.
 */
export function perConversation(costs: Costs, load: Load): PerConversation {
  const rate = 1 / load.thinkS;
  const resumeShare = Math.exp(-load.idleS / load.thinkS);
  const liveShare = Math.min(
    1,
    1 - resumeShare + rate * resumeShare * cost(costs, "cliColdMs") / 1000,
  );
  return {
    resumeShare,
    liveShare,
    mib: liveShare * liveMib(costs) +
      (1 - liveShare) * cost(costs, "poolRecordBytes") / 1048576,
    cpuMsPerSec: rate * (warmTurnCpuMs(costs) + resumeShare * resumeCpuMs(costs)) +
      liveShare * cost(costs, "cliIdleCpu"),
  };
}

/** How many conversations of a load one host holds. */
export interface PerHost {
  readonly byMemory: number;
  readonly byCpu: number;
  /** The smaller. */
  readonly holds: number;
  /** Which sets it. */
  readonly bottleneck: "memory" | "cpu";
}

/**
 * The conversations of a load one host holds.
 *
 * @param costs The measured costs.
 * @param load The load.
 * @param host Its size.
 * @returns By memory, by CPU, and the smaller.
 */
export function perHost(costs: Costs, load: Load, host: Host): PerHost {
  const one = perConversation(costs, load);
  const free = host.gib * 1024 - ASSUMED.reserveMib - sharedMib(costs);
  const byMemory = Math.floor(free / one.mib);
  const byCpu = Math.floor((host.cores * 1000 * ASSUMED.utilisation) / one.cpuMsPerSec);
  return {
    byMemory,
    byCpu,
    holds: Math.min(byMemory, byCpu),
    bottleneck: byMemory <= byCpu ? "memory" : "cpu",
  };
}

/** The idle times {@linkcode bestIdle} tries, in seconds. */
export const IDLE_CANDIDATES: readonly number[] = [0, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600];

/**
 * The idle time (of {@linkcode IDLE_CANDIDATES}) after which hibernating
 * lets a host hold the most conversations of a turn rate.
 *
 * @param costs The measured costs.
 * @param thinkS Mean seconds between two turns of a conversation.
 * @param host The host.
 * @returns That idle time and what the host then holds.
 */
export function bestIdle(costs: Costs, thinkS: number, host: Host): PerHost & { idleS: number } {
  let best: PerHost & { idleS: number } | undefined;
  for (const idleS of IDLE_CANDIDATES) {
    const got = perHost(costs, { conversations: 1, thinkS, idleS }, host);
    if (best === undefined || got.holds > best.holds) best = { ...got, idleS };
  }
  return best!;
}

/** What a fleet needs. */
export interface Fleet extends PerConversation {
  readonly turnsPerSec: number;
  /** Conversations live at once. */
  readonly live: number;
  /** Cores busy (at the planned utilisation). */
  readonly cores: number;
  /** Host memory in all, GiB. */
  readonly memoryGib: number;
  /** Hosts (one relay each, its CLIs its children). */
  readonly hosts: number;
  /** What sets the host count. */
  readonly bottleneck: "memory" | "cpu";
  readonly pgConnections: number;
  /** Appends per second (the relay's records and the transcript's batches). */
  readonly pgAppendsPerSec: number;
  /** Cores PostgreSQL's server is busy with (at the planned utilisation). */
  readonly pgCores: number;
  readonly pgRowsPerSec: number;
  readonly pgGibPerDay: number;
  /** The appends per second the measured PostgreSQL takes (of a whole turn each), over the load's. */
  readonly pgHeadroom: number;
}

/**
 * A fleet's needs, on hosts of one size.
 *
 * @param costs The measured costs.
 * @param load The load.
 * @param host The size of each host.
 * @returns What it needs.
 */
export function fleet(costs: Costs, load: Load, host: Host): Fleet {
  const one = perConversation(costs, load);
  const each = perHost(costs, load, host);
  const hosts = Math.max(1, Math.ceil(load.conversations / each.holds));
  const turnsPerSec = load.conversations / load.thinkS;
  const rows = cost(costs, "storeRowsPerTurn");
  const appends = turnsPerSec * cost(costs, "storeAppendsPerTurn");
  return {
    ...one,
    turnsPerSec,
    live: Math.ceil(load.conversations * one.liveShare),
    cores: (load.conversations * one.cpuMsPerSec) / 1000 / ASSUMED.utilisation,
    memoryGib: (load.conversations * one.mib +
      hosts * (ASSUMED.reserveMib + sharedMib(costs))) / 1024,
    hosts,
    bottleneck: each.bottleneck,
    pgConnections: hosts * ASSUMED.pgConnectionsPerRelay,
    pgRowsPerSec: turnsPerSec * rows,
    pgGibPerDay: (turnsPerSec * 86400 * pgBytesPerTurn(costs)) / 1073741824,
    pgAppendsPerSec: appends,
    pgCores: (appends * cost(costs, "pgCpuMsPerAppend")) / 1000 / ASSUMED.utilisation,
    pgHeadroom: cost(costs, "pgTurnsPerSecN") / appends,
  };
}

/**
 * PostgreSQL's bytes (tables and indexes) per turn through a relay: the
 * measured bytes per byte of a stored turn's JSON, times the JSON bytes a
 * relay stores per turn (its record and the transcript's entries).
 */
export function pgBytesPerTurn(costs: Costs): number {
  return cost(costs, "pgTurnBytes") / cost(costs, "turnJsonBytes") * cost(costs, "storeTurnBytes");
}
