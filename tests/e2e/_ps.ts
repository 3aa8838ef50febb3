/**
 * Processes seen through `ps` (Deno lets only `--allow-all` read `/proc`),
 * for the e2e tests that must prove a CLI and everything it started are
 * gone: the rows of given pids, the processes carrying a session's marker
 * variable (`DUPLEX_CLAUDE_SESSION=<uuid>`, which every process the CLI
 * starts inherits), a CLI's marker, and a bounded "none is left" check.
 *
 * @module
 */

import assert from "node:assert/strict";

/** The adapter's marker variable (see `adapters/subprocess/_marked_processes.ts`). */
export const MARKER_VARIABLE = "DUPLEX_CLAUDE_SESSION";

/** One line of `ps`. */
export interface PsRow {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly sid: number;
  readonly stat: string;
  /** The command line, followed by the environment when asked with `e`. */
  readonly args: string;
}

/** The columns {@linkcode psRows} parses. */
export const PS_COLUMNS = "pid=,ppid=,pgid=,sid=,stat=,args=";

/**
 * Runs `ps` to its end.
 *
 * @param args Its arguments.
 * @returns Its stdout (empty when no listed pid exists: `ps` then exits 1).
 */
export async function ps(args: readonly string[]): Promise<string> {
  const output = await new Deno.Command("ps", {
    args: [...args],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout);
}

/**
 * Parses `ps -o` output of the {@linkcode PS_COLUMNS} shape.
 *
 * @param text The output.
 * @returns One row per line.
 */
export function psRows(text: string): PsRow[] {
  const rows: PsRow[] = [];
  for (const line of text.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    rows.push({
      pid: Number(match[1]),
      ppid: Number(match[2]),
      pgid: Number(match[3]),
      sid: Number(match[4]),
      stat: match[5]!,
      args: match[6] ?? "",
    });
  }
  return rows;
}

/** Whether the row is a zombie (or dead): exited, not reaped yet. */
export function isZombie(row: PsRow): boolean {
  return row.stat.startsWith("Z") || row.stat.startsWith("X");
}

/**
 * The rows of the given pids that are alive (not zombies).
 *
 * @param pids The processes.
 * @returns Their rows, for those that run (`args` ends with the environment).
 */
export async function living(pids: readonly number[]): Promise<PsRow[]> {
  if (pids.length === 0) return [];
  const rows = psRows(await ps(["-ww", "-o", PS_COLUMNS, "e", "-p", pids.join(",")]));
  return rows.filter((row) => !isZombie(row));
}

/**
 * The live processes of a session (a tmux pane's program leads one).
 *
 * @param sid The session id (its leader's pid).
 * @returns Their rows.
 */
export async function inSession(sid: number): Promise<PsRow[]> {
  const rows = psRows(await ps(["-ww", "-o", PS_COLUMNS, "-s", String(sid)]));
  return rows.filter((row) => !isZombie(row));
}

/**
 * Every live process but this one whose environment carries the marker.
 *
 * @param marker A session's marker; `undefined` for any session's.
 * @returns Their rows (`args` ends with the environment).
 */
export async function marked(marker: string | undefined): Promise<PsRow[]> {
  const rows = psRows(await ps(["-e", "-ww", "-o", PS_COLUMNS, "e"]));
  const entry = marker === undefined ? `${MARKER_VARIABLE}=` : `${MARKER_VARIABLE}=${marker} `;
  return rows.filter((row) =>
    row.pid !== Deno.pid && !isZombie(row) && `${row.args} `.includes(` ${entry}`)
  );
}

/**
 * The marker of a running CLI, read from its environment.
 *
 * @param pid The CLI's pid.
 * @returns Its `DUPLEX_CLAUDE_SESSION` value.
 * @throws {assert.AssertionError} When it carries none (or is gone).
 */
export async function markerOf(pid: number): Promise<string> {
  const text = await ps(["-ww", "-o", "args=", "e", "-p", String(pid)]);
  const match = new RegExp(`(?:^|\\s)${MARKER_VARIABLE}=([0-9a-f-]{36})(?:\\s|$)`).exec(text);
  assert.ok(match, `the CLI ${pid} carries no ${MARKER_VARIABLE} (is it alive?)`);
  return match[1]!;
}

/**
 * A row for a failure message: ids, state and the command (without the
 * environment).
 *
 * @param row The row.
 * @returns One line.
 */
export function show(row: PsRow): string {
  const command = row.args.split(/ [A-Za-z_][A-Za-z0-9_]*=/)[0]!;
  return `pid ${row.pid} ppid ${row.ppid} pgid ${row.pgid} sid ${row.sid} ${row.stat} ` +
    JSON.stringify(command.slice(0, 120));
}

/**
 * Asserts that within `timeoutMs` none of `pids` runs and no process carries
 * one of `markers`; otherwise kills the survivors that carry a marker
 * (SIGKILL, so no test leaves them; a reused pid never carries one) and
 * fails listing every survivor.
 *
 * @param pids Processes that must be gone.
 * @param markers Markers of the CLIs whose descendants must be gone.
 * @param what When, for the failure (for example `after session.close()`).
 * @param timeoutMs How long they may take.
 * @returns Once none is left.
 * @throws {assert.AssertionError} When some are left after `timeoutMs`.
 */
export async function assertNoneLeft(
  pids: readonly number[],
  markers: readonly string[],
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = new Map<number, PsRow>();
    for (const row of await living(pids)) left.set(row.pid, row);
    for (const marker of markers) for (const row of await marked(marker)) left.set(row.pid, row);
    if (left.size === 0) return;
    if (Date.now() > deadline) {
      for (const row of left.values()) {
        if (!`${row.args} `.includes(` ${MARKER_VARIABLE}=`)) continue;
        try {
          Deno.kill(row.pid, "SIGKILL");
        } catch {
          // Gone meanwhile.
        }
      }
      assert.fail(
        `${what}: ${left.size} process(es) survived ${timeoutMs} ms:\n  ` +
          [...left.values()].map(show).join("\n  "),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
