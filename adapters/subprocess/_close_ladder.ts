/**
 * The close ladder of a subprocess transport, each step bounded:
 *
 * 1. record the CLI's descendants while it still runs; if its output has
 *    ended (it is exiting by itself), wait up to `closeGraceMs` for that
 *    exit; end its input (stdin EOF), and wait up to `closeGraceMs` for it
 *    to exit. An exit seen before the input ended is the CLI's own (not
 *    `requested`), one after it the close's;
 * 2. record again, SIGTERM to its process group, and wait up to
 *    `terminateGraceMs`;
 * 3. tear its input down (a write it never read must not block the close);
 * 4. SIGTERM to the recorded descendants still alive and to the members of
 *    its group that outlived it, SIGKILL to the group if the CLI still runs,
 *    up to 1 s for the rest to go, then SIGKILL to them;
 * 5. always reap the child, then end every process still carrying its
 *    marker (SIGTERM, up to 1 s, SIGKILL).
 *
 * @module
 */

import { deadline, sleep } from "../../src/_deadline.ts";
import type { CliProcess } from "./_cli_process.ts";
import { isAlive, type ProcessRecord } from "./_process_tree.ts";

/** The most time between SIGTERM and SIGKILL for descendants and marked processes. */
const MAX_DESCENDANT_GRACE_MS = 1000;
/** How often descendants are checked while waiting for them to end. */
const POLL_MS = 25;
/** How long the members of the CLI's group that outlived it get before SIGKILL. */
const GROUP_LEFT_GRACE_MS = 100;

/** What the ladder needs from the pipes. */
export interface LadderInput {
  /** True when the CLI's output reached its end by itself (the CLI is exiting, or has). */
  outputEnded(): boolean;
  /** Ends the CLI's input (stdin EOF; or, for an impolite close, refuses later writes). */
  end(): void;
  /** Tears the input down, failing a write the CLI never read. */
  tearDown(): void;
}

/** The waits of the ladder (checked durations; 0 skips a wait). */
export interface LadderGrace {
  /** How long the CLI gets after stdin EOF. */
  readonly closeGraceMs: number;
  /** How long the CLI gets after SIGTERM. */
  readonly terminateGraceMs: number;
}

/**
 * Climbs the close ladder until nothing of the CLI is left.
 *
 * @param process The CLI.
 * @param input Its input side.
 * @param grace The waits.
 */
export async function climbCloseLadder(
  process: CliProcess,
  input: LadderInput,
  grace: LadderGrace,
): Promise<void> {
  if (!process.exited) await process.record();
  // A CLI that ended its output is on its way out by itself (its exit may not be reaped yet):
  // its exit is its own, not the EOF's.
  if (!process.exited && input.outputEnded()) await process.waitExit(grace.closeGraceMs);
  // The close acts from here: an exit that arrived before (as the close began, or while it
  // recorded) is the CLI's own, and says so (`requested: false`).
  if (!process.exited) process.requestClose();
  input.end();
  await process.waitExit(grace.closeGraceMs);
  if (!process.exited) {
    await process.record();
    process.signalGroup("SIGTERM");
    await process.waitExit(grace.terminateGraceMs);
  }
  input.tearDown();
  const leftovers = await living(process.descendants);
  for (const record of leftovers) process.signalDescendant(record, "SIGTERM");
  // Members of the CLI's group that outlived it, if it ended during this close (a CLI
  // that had exited before is left alone: its pid may belong to another process by now).
  const { life } = process.state;
  const groupLeft = life.state === "exited" && life.requested && process.signalGroup("SIGTERM");
  if (!process.exited) process.signalGroup("SIGKILL");
  const leftoverGraceMs = Math.min(grace.terminateGraceMs, MAX_DESCENDANT_GRACE_MS);
  if (leftovers.length > 0 || groupLeft) {
    const alive = await waitGone(leftovers, leftoverGraceMs);
    if (groupLeft && alive.length === 0) {
      await sleep(Math.min(leftoverGraceMs, GROUP_LEFT_GRACE_MS));
    }
    for (const record of alive) process.signalDescendant(record, "SIGKILL");
    if (groupLeft) process.signalGroup("SIGKILL");
  }
  await process.status;
  await process.sweepMarked(leftoverGraceMs);
}

/* Polls the records until none is alive or `ms` has passed; returns those still alive. */
async function waitGone(records: readonly ProcessRecord[], ms: number): Promise<ProcessRecord[]> {
  let alive = [...records];
  if (ms === 0) return alive;
  using limit = deadline(ms);
  while (alive.length > 0 && !limit.signal.aborted) {
    await sleep(POLL_MS);
    alive = await living(alive);
  }
  return alive;
}

async function living(records: readonly ProcessRecord[]): Promise<ProcessRecord[]> {
  const alive = await Promise.all(records.map(isAlive));
  return records.filter((_, i) => alive[i]);
}
