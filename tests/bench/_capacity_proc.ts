/**
 * What the capacity bench reads of a process from `/proc`: its memory (RSS,
 * and what it alone holds: the private pages, USS), its CPU time, and a
 * median-of-samples record with its unit.
 *
 * @module
 */

import process from "node:process";
import { median } from "./_measure.ts";
import { denoRunArgs } from "../adapters/subprocess/_helpers.ts";

/** The pool tests' stand-in CLI, the default of {@linkcode standInCli}. */
export const FAKE_POOL_CLAUDE: string = decodeURIComponent(
  new URL("../fixtures/fake_pool_claude.ts", import.meta.url).pathname,
);

/**
 * The options that run a stand-in CLI (a Deno script taking the CLI's flags).
 *
 * @param script Its path (default: the pool tests' stand-in, its turns kept in memory).
 * @param configDir Its `CLAUDE_CONFIG_DIR` (where a stand-in that keeps transcripts writes them).
 * @returns The binary, its arguments and that variable.
 */
export function standInCli(script: string, configDir: string): {
  binary: string;
  binaryArgs: string[];
  extraEnv: Record<string, string>;
} {
  return {
    binary: Deno.execPath(),
    binaryArgs: denoRunArgs(script),
    extraEnv: { CLAUDE_CONFIG_DIR: configDir },
  };
}

/** One process's memory, in MiB. */
export interface Memory {
  /** Resident set size. */
  readonly rss: number;
  /** Private pages only (clean and dirty): what ending the process gives back. */
  readonly uss: number;
  /** Proportional set size (shared pages divided among their sharers). */
  readonly pss: number;
}

/**
 * The memory of a process, from `/proc/<pid>/smaps_rollup`.
 *
 * @param pid The process.
 * @returns Its memory, in MiB.
 */
export function memoryOf(pid: number): Memory {
  const text = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  const kb = (field: string): number => {
    const found = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
    if (found === null) throw new Error(`Cannot read ${field} of process ${pid}`);
    return Number(found[1]);
  };
  return {
    rss: kb("Rss") / 1024,
    uss: (kb("Private_Clean") + kb("Private_Dirty")) / 1024,
    pss: kb("Pss") / 1024,
  };
}

/**
 * The CPU time a process has used (user and system), from `/proc/<pid>/stat`.
 *
 * @param pid The process.
 * @returns Milliseconds (at the kernel's 100 ticks per second).
 */
export function cpuMsOf(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The CPU time this process has used, to the microsecond.
 *
 * @returns Milliseconds.
 */
export function selfCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One measured figure: the median of its samples, with its unit. */
export interface Figure {
  /** Its key in the model (`cliIdleMb`, …). */
  readonly key: string;
  /** What was measured. */
  readonly what: string;
  /** The median of the samples. */
  readonly value: number;
  readonly unit: string;
  readonly samples: readonly number[];
}

/**
 * A figure from its samples.
 *
 * @param key Its key.
 * @param what What was measured.
 * @param unit The unit.
 * @param samples The samples (at least one).
 * @returns The figure.
 */
export function figure(key: string, what: string, unit: string, samples: number[]): Figure {
  if (samples.length === 0) throw new Error(`Cannot report ${key}: no samples`);
  return { key, what, unit, value: median(samples), samples };
}

/**
 * A markdown table, its columns padded to their widest cell.
 *
 * @param rows The header, then the rows.
 * @returns Its lines.
 */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: readonly string[]): string =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.slice(1).map(line),
  ].join("\n");
}

/**
 * Progress, on stderr (stdout holds the table).
 *
 * @param text The line.
 */
export function progress(text: string): void {
  // deno-lint-ignore no-console
  console.error(`[capacity] ${text}`);
}
