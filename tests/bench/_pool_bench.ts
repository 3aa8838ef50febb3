/**
 * Helpers of the pool's benchmarks (workload 8): the pool's process options
 * for a bench target, bounded polling, a checked echo turn, and a count of
 * this process's descendant processes (read from `/proc`).
 *
 * @module
 */

import type { DuplexSession } from "../../mod.ts";
import type { SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import type { CliTarget } from "./turns.ts";

/** How long one turn of a pool benchmark may take. */
export const TURN_LIMIT_MS = 60_000;

/**
 * The subprocess options of a bench target (the real CLI in its sandbox).
 *
 * @param target The CLI.
 * @returns The options a `SessionPool` or `subprocess()` takes.
 */
export function processOf(target: CliTarget): SubprocessOptions {
  return {
    pathToClaudeCodeExecutable: target.binary,
    ...(target.cwd !== undefined && { cwd: target.cwd }),
    ...(target.env !== undefined && { env: target.env }),
    clearEnv: target.clearEnv === true,
  };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `check` every 10 ms until it is true.
 *
 * @param what What is waited for (for the error).
 * @param check The condition.
 * @param timeoutMs The bound.
 * @throws {Error} When it is still false after `timeoutMs`.
 */
export async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`Cannot see ${what} within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/**
 * Runs one turn and checks that its result is the fake API's echo of it.
 *
 * @param session The session.
 * @param text The prompt.
 * @throws {Error} For an error result or another turn's text.
 */
export async function echoTurn(session: DuplexSession, text: string): Promise<void> {
  const turn = await session.send(text, { timeoutMs: TURN_LIMIT_MS });
  if (turn.result.isError) throw new Error(`Cannot run the turn: ${turn.result.text}`);
  if (turn.result.text !== `Echo: ${text}`) {
    throw new Error(`Cannot trust the turn "${text}": its result is "${turn.result.text}"`);
  }
}

/**
 * Times `fn`, in milliseconds.
 *
 * @param fn What to time.
 * @returns The elapsed time.
 */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * The processes below `root` (children, their children, …), from `/proc`.
 *
 * @param root The ancestor's pid.
 * @returns Their pids and command names.
 */
export function descendants(root = Deno.pid): { pid: number; name: string }[] {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid …; comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(")");
    names.set(pid, stat.slice(stat.indexOf("(") + 1, close));
    parents.set(pid, Number(stat.slice(close + 2).split(" ")[1]));
  }
  const found: { pid: number; name: string }[] = [];
  const below = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (!below.has(pid) && below.has(parent)) {
        below.add(pid);
        found.push({ pid, name: names.get(pid) ?? "?" });
        grew = true;
      }
    }
  }
  return found;
}

/**
 * CPU time of this process's children that have ended and been reaped
 * (`cutime + cstime` of `/proc/self/stat`): what the CLIs it ran used.
 *
 * @returns Milliseconds (at the kernel's 100 ticks per second).
 */
export function reapedChildrenCpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  // Fields after "(comm)": state is field 3; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * The machine's 1-, 5- and 15-minute load averages (the machine is shared:
 * they go with the figures, in the raw results).
 *
 * @returns The three averages.
 */
export function loadAverage(): number[] {
  return Deno.loadavg().map((value) => Math.round(value * 100) / 100);
}
