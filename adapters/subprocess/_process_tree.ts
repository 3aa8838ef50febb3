/**
 * The descendants of a process, read from `/proc` (Linux).
 *
 * The CLI runs its tools (Bash commands) in their own sessions and process
 * groups, so a signal to the CLI's group does not reach them, and after the
 * CLI dies they are reparented and cannot be traced back to it. A close that
 * wants no survivors records the descendants while the CLI still lives, and
 * ends the ones still alive afterwards. Each record keeps the process start
 * time, so a reused pid is never mistaken for a recorded process.
 *
 * Degrades to "no descendants known" when `/proc` cannot be read: not Linux,
 * or (Deno 2.x) without `--allow-all`, since Deno treats `/proc` as a
 * privileged path.
 *
 * @module
 */

/** A process seen in `/proc`. */
export interface ProcessRecord {
  /** Its process id. */
  readonly pid: number;
  /** Its process group id. */
  readonly pgid: number;
  /** Its start time (clock ticks after boot), to tell it from a later process with the same pid. */
  readonly startTime: string;
}

/** The fields of `/proc/<pid>/stat` this module uses. */
export interface StatFields extends ProcessRecord {
  /** The parent's process id. */
  readonly ppid: number;
  /** The one-letter state (`R`, `S`, `Z` for a zombie, …). */
  readonly state: string;
}

/**
 * Parses the text of `/proc/<pid>/stat`.
 *
 * @param text The file's content.
 * @returns The fields, or `undefined` when the text does not parse.
 */
export function parseStat(text: string): StatFields | undefined {
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
  //  cmajflt utime stime cutime cstime priority nice threads itreal starttime …";
  // comm may hold spaces and parentheses, so split after the last ")".
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open));
  const rest = text.slice(close + 2).split(" ");
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgid = Number(rest[2]);
  const startTime = rest[19];
  if (
    !Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) ||
    state === undefined || startTime === undefined
  ) {
    return undefined;
  }
  return { pid, ppid, pgid, state, startTime };
}

/**
 * Picks the descendants of `root` (children, their children, …) from a list
 * of processes.
 *
 * @param root The ancestor's pid.
 * @param processes Every process seen.
 * @returns The descendants, nearest first.
 */
export function descendantsOf(root: number, processes: readonly StatFields[]): ProcessRecord[] {
  const children = new Map<number, StatFields[]>();
  for (const process of processes) {
    const siblings = children.get(process.ppid);
    if (siblings === undefined) children.set(process.ppid, [process]);
    else siblings.push(process);
  }
  const found: ProcessRecord[] = [];
  const seen = new Set<number>([root]);
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    for (const child of children.get(queue[i]!) ?? []) {
      if (seen.has(child.pid) || isGone(child.state)) continue;
      seen.add(child.pid);
      found.push({ pid: child.pid, pgid: child.pgid, startTime: child.startTime });
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * Lists the living descendants of a process.
 *
 * @param root The ancestor's pid.
 * @returns The descendants; empty when `/proc` cannot be read.
 */
export async function findDescendants(root: number): Promise<ProcessRecord[]> {
  const pids: number[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      const pid = Number(entry.name);
      if (Number.isInteger(pid) && pid > 0) pids.push(pid);
    }
  } catch {
    return []; // not Linux, or not permitted: nothing is known
  }
  const stats = await Promise.all(pids.map(readStat));
  return descendantsOf(root, stats.filter((stat) => stat !== undefined));
}

/**
 * Lists the living descendants of a process, synchronously (for `unload`).
 *
 * @param root The ancestor's pid.
 * @returns The descendants; empty when `/proc` cannot be read.
 */
export function findDescendantsSync(root: number): ProcessRecord[] {
  const stats: StatFields[] = [];
  try {
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      const stat = readStatSync(pid);
      if (stat !== undefined) stats.push(stat);
    }
  } catch {
    return [];
  }
  return descendantsOf(root, stats);
}

/**
 * Tells whether a recorded process still runs (same pid, same start time,
 * not a zombie).
 *
 * @param record The process as recorded.
 * @returns False when it is gone, or when `/proc` cannot tell.
 */
export async function isAlive(record: ProcessRecord): Promise<boolean> {
  const stat = await readStat(record.pid);
  return stat !== undefined && stat.startTime === record.startTime && !isGone(stat.state);
}

/**
 * Synchronous {@linkcode isAlive}.
 *
 * @param record The process as recorded.
 * @returns False when it is gone, or when `/proc` cannot tell.
 */
export function isAliveSync(record: ProcessRecord): boolean {
  const stat = readStatSync(record.pid);
  return stat !== undefined && stat.startTime === record.startTime && !isGone(stat.state);
}

/**
 * Reads `/proc/<pid>/stat`.
 *
 * @param pid The process id.
 * @returns The fields, or `undefined` when the process is gone or `/proc` cannot be read.
 */
export async function readStat(pid: number): Promise<StatFields | undefined> {
  try {
    return parseStat(await Deno.readTextFile(`/proc/${pid}/stat`));
  } catch {
    return undefined;
  }
}

/**
 * Synchronous {@linkcode readStat}.
 *
 * @param pid The process id.
 * @returns The fields, or `undefined` when the process is gone or `/proc` cannot be read.
 */
export function readStatSync(pid: number): StatFields | undefined {
  try {
    return parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return undefined;
  }
}

/**
 * Tells whether a `/proc` state letter is that of an ended process (a zombie, or dead).
 *
 * @param state The state letter of `/proc/<pid>/stat`.
 * @returns True for an ended process.
 */
export function isGone(state: string): boolean {
  return state === "Z" || state === "X" || state === "x";
}
