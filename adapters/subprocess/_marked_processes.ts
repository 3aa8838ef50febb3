/**
 * Processes marked with a session's environment variable.
 *
 * The CLI's Bash tools run in their own sessions, and a command that puts a
 * process in the background (`nohup sleep 300 &`) leaves it reparented to
 * init before the tool even returns: neither the CLI's process group nor a
 * parent-id walk finds it at close. Every process the CLI starts inherits
 * its environment, though, so the adapter gives each CLI a unique marker
 * variable and, when closing, ends every process that still carries it.
 *
 * A pid is free for another process as soon as its process has ended and
 * been reaped, and a sweep waits between finding a process and signalling it
 * (a grace period, a `ps` run). So each process is found with its start time,
 * and the start time is read again right before every signal: a process that
 * is gone, or whose start time differs (another process took the pid), is
 * skipped.
 *
 * Reads `/proc/<pid>/stat` and `/proc/<pid>/environ` (Linux; Deno asks for
 * `--allow-all` to read `/proc`), else asks `ps` (`--allow-run=ps`), else
 * finds nothing.
 *
 * @module
 */

import { deadline, sleep } from "../../src/_deadline.ts";
import { isGone, readStat, readStatSync, type StatFields } from "./_process_tree.ts";

/** The environment variable that marks a session's processes. */
export const MARKER_VARIABLE = "DUPLEX_CLAUDE_SESSION";

/** A marked process, as found. */
export interface MarkedProcess {
  /** Its process id. */
  readonly pid: number;
  /** When it started, as `source` tells it: clock ticks after boot, or `ps`'s `lstart`. */
  readonly startTime: string;
  /** Where it was found, and so where its start time is read again. */
  readonly source: "proc" | "ps";
}

/** What signalling found processes did. */
export interface SignalOutcome {
  /** How many processes got the signal (the others were gone or had another start time). */
  readonly signalled: number;
  /** True when signals are not permitted at all (the rest was not tried). */
  readonly denied: boolean;
}

/** Every process: pid, start time, and command line followed by the environment (`e`). */
const PS_FIND_ARGS = ["-e", "-ww", "-o", "pid=,lstart=,args=", "e"];
/** `ps` prints its dates the same way whatever the host's locale. */
const PS_ENV = { LC_ALL: "C" };
/** A `ps` line: the pid, the five words of `lstart` (`Tue Dec  1 09:22:42 2026`), the rest. */
const PS_LINE = /^\s*(\d+)\s+(\S+\s+\S+\s+\d+\s+\d+:\d+:\d+\s+\d+)(?:\s(.*))?$/;
/** How often a sweep checks whether the marked processes have ended. */
const POLL_MS = 25;

function denied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

function entryOf(marker: string): string {
  return `${MARKER_VARIABLE}=${marker}`;
}

function markedIn(environ: string, entry: string): boolean {
  return environ.split("\0").includes(entry);
}

/* The stat is read before the environment: a pid taken over in between gives a start time
 * that matches neither process, so the later check skips it (missed, never the wrong one). */
function procRecord(stat: StatFields | undefined): MarkedProcess | undefined {
  return stat === undefined || isGone(stat.state)
    ? undefined
    : { pid: stat.pid, startTime: stat.startTime, source: "proc" };
}

async function fromProc(entry: string): Promise<MarkedProcess[] | undefined> {
  const found: MarkedProcess[] = [];
  try {
    for await (const dir of Deno.readDir("/proc")) {
      const pid = Number(dir.name);
      if (!Number.isInteger(pid) || pid === Deno.pid) continue;
      try {
        const record = procRecord(await readStat(pid));
        if (record && markedIn(await Deno.readTextFile(`/proc/${pid}/environ`), entry)) {
          found.push(record);
        }
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) return undefined;
        // The process ended meanwhile, or belongs to another user.
      }
    }
  } catch {
    return undefined; // no /proc, or not permitted to read it
  }
  return found;
}

function fromProcSync(entry: string): MarkedProcess[] | undefined {
  const found: MarkedProcess[] = [];
  try {
    for (const dir of Deno.readDirSync("/proc")) {
      const pid = Number(dir.name);
      if (!Number.isInteger(pid) || pid === Deno.pid) continue;
      try {
        const record = procRecord(readStatSync(pid));
        if (record && markedIn(Deno.readTextFileSync(`/proc/${pid}/environ`), entry)) {
          found.push(record);
        }
      } catch (error) {
        if (error instanceof Deno.errors.NotCapable) return undefined;
        // Ended meanwhile, or another user's.
      }
    }
  } catch {
    return undefined;
  }
  return found;
}

function psCommand(args: readonly string[]): Deno.Command {
  return new Deno.Command("ps", {
    args: [...args],
    env: PS_ENV,
    stdout: "piped",
    stderr: "null",
    stdin: "null",
  });
}

/* `ps`'s output, or undefined when it cannot run (exit 1 with no output: no listed pid exists). */
async function runPs(args: readonly string[]): Promise<string | undefined> {
  try {
    return new TextDecoder().decode((await psCommand(args).output()).stdout);
  } catch {
    return undefined; // no ps, or not permitted to run it
  }
}

function runPsSync(args: readonly string[]): string | undefined {
  try {
    return new TextDecoder().decode(psCommand(args).outputSync().stdout);
  } catch {
    return undefined;
  }
}

/**
 * Reads the lines of `ps -o pid=,lstart=,args=` (with `e`, the environment
 * follows the command line).
 *
 * @param text The output of `ps`.
 * @param entry When given, only the processes whose environment holds this `NAME=value`.
 * @returns The processes, with `lstart` (spaces collapsed) as their start time.
 */
export function parsePs(text: string, entry?: string): MarkedProcess[] {
  const found: MarkedProcess[] = [];
  for (const line of text.split("\n")) {
    const match = PS_LINE.exec(line);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === Deno.pid) continue;
    if (entry !== undefined && !` ${match[3] ?? ""} `.includes(` ${entry} `)) continue;
    found.push({ pid, startTime: match[2]!.replace(/\s+/g, " "), source: "ps" });
  }
  return found;
}

function psStartArgs(found: readonly MarkedProcess[]): string[] | undefined {
  const pids = found.filter((process) => process.source === "ps").map((process) => process.pid);
  return pids.length === 0 ? undefined : ["-o", "pid=,lstart=", "-p", pids.join(",")];
}

function startTimes(psText: string | undefined): Map<number, string> {
  return new Map(parsePs(psText ?? "").map((process) => [process.pid, process.startTime]));
}

/**
 * Finds the live processes whose environment holds `MARKER_VARIABLE=marker`.
 *
 * @param marker The session's marker value.
 * @returns The processes (empty when nothing can be read).
 */
export async function findMarked(marker: string): Promise<MarkedProcess[]> {
  const entry = entryOf(marker);
  return await fromProc(entry) ?? parsePs(await runPs(PS_FIND_ARGS) ?? "", entry);
}

/**
 * Synchronous {@linkcode findMarked} (for the host's exit, when nothing asynchronous runs).
 *
 * @param marker The session's marker value.
 * @returns The processes, or `undefined` when neither `/proc` nor `ps` can be read.
 */
export function findMarkedSync(marker: string): MarkedProcess[] | undefined {
  const entry = entryOf(marker);
  const fromProc = fromProcSync(entry);
  if (fromProc !== undefined) return fromProc;
  const text = runPsSync(PS_FIND_ARGS);
  return text === undefined ? undefined : parsePs(text, entry);
}

/**
 * Signals found processes whose start time, read again now, is still the
 * one they were found with; skips the others (gone, or their pid taken).
 *
 * @param found The processes, as found.
 * @param signal The signal to send.
 * @returns How many got it, and whether signals are refused.
 */
export async function signalFound(
  found: readonly MarkedProcess[],
  signal: Deno.Signal,
): Promise<SignalOutcome> {
  const psArgs = psStartArgs(found);
  const [stats, ps] = await Promise.all([
    Promise.all(found.map((process) => process.source === "proc" ? readStat(process.pid) : null)),
    psArgs === undefined ? undefined : runPs(psArgs),
  ]);
  const viaPs = startTimes(ps);
  return signalIfSame(
    found,
    signal,
    (process, i) =>
      process.source === "proc"
        ? procRecord(stats[i] ?? undefined)?.startTime
        : viaPs.get(process.pid),
  );
}

/**
 * Synchronous {@linkcode signalFound}.
 *
 * @param found The processes, as found.
 * @param signal The signal to send.
 * @returns How many got it, and whether signals are refused.
 */
export function signalFoundSync(
  found: readonly MarkedProcess[],
  signal: Deno.Signal,
): SignalOutcome {
  const psArgs = psStartArgs(found);
  const viaPs = startTimes(psArgs === undefined ? undefined : runPsSync(psArgs));
  return signalIfSame(
    found,
    signal,
    (process) =>
      process.source === "proc"
        ? procRecord(readStatSync(process.pid))?.startTime
        : viaPs.get(process.pid),
  );
}

function signalIfSame(
  found: readonly MarkedProcess[],
  signal: Deno.Signal,
  startTimeNow: (process: MarkedProcess, index: number) => string | undefined,
): SignalOutcome {
  let signalled = 0;
  for (const [i, process] of found.entries()) {
    if (startTimeNow(process, i) !== process.startTime) continue;
    try {
      Deno.kill(process.pid, signal);
      signalled++;
    } catch (error) {
      if (denied(error)) return { signalled, denied: true };
      // Ended meanwhile.
    }
  }
  return { signalled, denied: false };
}

/**
 * Ends every process still marked: SIGTERM, up to `graceMs` to go, then SIGKILL.
 *
 * @param marker The session's marker value.
 * @param graceMs How long the processes get between SIGTERM and SIGKILL.
 * @returns How many processes were found.
 */
export async function sweepMarked(marker: string, graceMs: number): Promise<number> {
  let alive = await findMarked(marker);
  const found = alive.length;
  if (found === 0) return 0;
  if ((await signalFound(alive, "SIGTERM")).denied) return found;
  {
    using grace = deadline(graceMs);
    while (alive.length > 0 && !grace.signal.aborted) {
      await sleep(POLL_MS);
      alive = await findMarked(marker);
    }
  }
  await signalFound(alive, "SIGKILL");
  return found;
}

/**
 * Signals the marked processes now, without waiting (for the host's exit,
 * when nothing asynchronous can run).
 *
 * @param marker The session's marker value.
 * @param signal The signal to send.
 */
export function signalMarkedSync(marker: string, signal: Deno.Signal): void {
  const found = findMarkedSync(marker);
  if (found !== undefined) signalFoundSync(found, signal);
}
