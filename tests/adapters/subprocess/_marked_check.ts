/**
 * The start-time guard of the marker sweep, as one check that runs both in the
 * test process (which cannot read `/proc`: `ps` finds the processes) and, run
 * as a program with `--allow-all`, where `/proc` is read.
 *
 * As a program it prints one JSON line, `{"sources":[…]}`, and exits 0 when
 * every assertion held.
 */

import assert from "node:assert/strict";
import { abortable, deadline } from "../../../src/_deadline.ts";
import {
  findMarked,
  findMarkedSync,
  type MarkedProcess,
  MARKER_VARIABLE,
  signalFound,
  signalFoundSync,
  type SignalOutcome,
} from "../../../adapters/subprocess/_marked_processes.ts";

/** How long a process that was not signalled is watched for staying alive. */
const STAYS_ALIVE_MS = 200;

type Signaller = (found: readonly MarkedProcess[], signal: Deno.Signal) => Promise<SignalOutcome>;

/** Starts a marked `sleep`; returns it and its marker. */
function spawnMarked(): { child: Deno.ChildProcess; marker: string } {
  const marker = crypto.randomUUID();
  const child = new Deno.Command("sleep", {
    args: ["30"],
    env: { [MARKER_VARIABLE]: marker },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return { child, marker };
}

async function ended(
  child: Deno.ChildProcess,
  ms: number,
): Promise<Deno.CommandStatus | undefined> {
  using limit = deadline(ms);
  return await abortable(child.status, limit.signal).catch(() => undefined);
}

/**
 * Finds a marked process, then signals it as if its pid had been taken by
 * another process (a different start time): it must not get the signal. Then
 * signals it with its true start time: it must.
 *
 * @param find How to find it.
 * @param signal How to signal it.
 * @returns Where the process was found (`proc` or `ps`).
 */
export async function checkStartTimeGuard(
  find: (marker: string) => Promise<MarkedProcess[]>,
  signal: Signaller,
): Promise<string> {
  const { child, marker } = spawnMarked();
  try {
    const found = await find(marker);
    assert.equal(found.length, 1, JSON.stringify(found));
    const [record] = found as [MarkedProcess];
    assert.equal(record.pid, child.pid);
    const reused = { ...record, startTime: `${record.startTime}0` };
    assert.deepEqual(await signal([reused], "SIGTERM"), { signalled: 0, denied: false });
    assert.equal(await ended(child, STAYS_ALIVE_MS), undefined, "a reused pid was signalled");
    assert.deepEqual(await signal(found, "SIGTERM"), { signalled: 1, denied: false });
    assert.equal((await child.status).signal, "SIGTERM");
    return record.source;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // ended
    }
    await child.status;
  }
}

/** The check through the asynchronous and the synchronous functions. */
export async function checkBoth(): Promise<string[]> {
  return [
    await checkStartTimeGuard(findMarked, signalFound),
    await checkStartTimeGuard(
      (marker) => Promise.resolve(findMarkedSync(marker) ?? []),
      (found, signal) => Promise.resolve(signalFoundSync(found, signal)),
    ),
  ];
}

if (import.meta.main) {
  const sources = await checkBoth();
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ sources }) + "\n"));
}
