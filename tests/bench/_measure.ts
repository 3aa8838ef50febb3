/**
 * Measuring helpers shared by the Deno side of the benchmarks: peak RSS,
 * forced GC, statistics, and the result line a workload child prints.
 *
 * @module
 */

import process from "node:process";
import { setImmediate as setImmediateFn } from "node:timers";

/** The prefix of the one stdout line a workload child reports its result on. */
export const RESULT_PREFIX = "BENCH_RESULT ";

/**
 * Peak resident set size of this process so far (getrusage's maxrss), in MiB.
 *
 * @returns Megabytes (2^20 bytes).
 */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * Current resident set size, in MiB.
 *
 * @returns Megabytes (2^20 bytes).
 */
export function rssMb(): number {
  return Deno.memoryUsage().rss / 1048576;
}

/**
 * Runs a full GC when the process was started with `--v8-flags=--expose-gc`.
 *
 * @returns Whether a GC ran.
 */
export function forceGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== "function") return false;
  gc();
  gc();
  return true;
}

/**
 * The `q` quantile of the values (nearest rank).
 *
 * @param values The samples.
 * @param q Between 0 and 1.
 * @returns The quantile, or NaN for no samples.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Median (nearest rank, lower middle). */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * Yields to the event loop once, as a macrotask (a check-phase callback, as
 * Node's `setImmediate`; `setTimeout(0)` is clamped to 4 ms when nested).
 *
 * @returns After the macrotask ran.
 */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediateFn(resolve));
}

/**
 * Prints a workload's result for the runner and nothing else on that line.
 *
 * @param result A JSON-able record.
 */
export function report(result: Record<string, unknown>): void {
  // deno-lint-ignore no-console
  console.log(RESULT_PREFIX + JSON.stringify({ ...result, peakRssMb: peakRssMb() }));
}

/**
 * Waits for a promise at most `ms` milliseconds, then rejects naming `what`.
 *
 * @param promise What to wait for.
 * @param ms The bound.
 * @param what A description for the error.
 * @returns The promise's value.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Cannot finish ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A whole-number flag of a bench script (`--name=N`, at least 1).
 *
 * @param name The flag, without the dashes.
 * @param fallback Its value when absent.
 * @returns The value.
 * @throws {Error} For a value that is not a whole number of at least 1.
 */
export function option(name: string, fallback: number): number {
  const found = Deno.args.find((arg) => arg.startsWith(`--${name}=`));
  const value = found === undefined ? fallback : Number(found.slice(name.length + 3));
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be >= 1`);
  return value;
}

/**
 * Milliseconds for a table: whole ones from 100 ms, one decimal below.
 *
 * @param value The duration in milliseconds.
 * @returns For example `"312 ms"` or `"41.5 ms"`.
 */
export function ms(value: number): string {
  return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`;
}

/**
 * Prints rows as a Markdown table, columns padded (the first row is the header).
 *
 * @param rows The header, then the rows, cells as text.
 */
export function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: readonly string[]): string =>
    `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  // deno-lint-ignore no-console
  console.log([line(rows[0]!), rule, ...rows.slice(1).map(line)].join("\n"));
}
