// This module is browser compatible.
/*
 * The heartbeat rule of the relay protocol, used by both ends: every
 * `heartbeatMs` a side pings, and a peer it has not heard from for twice as
 * long is taken for gone.
 */

import { sleep } from "../_deadline.ts";

/** What a heartbeat needs from the connection it watches. */
export interface HeartbeatTarget {
  /** When the peer was last heard from (`Date.now()` time). */
  lastHeard(): number;
  /** Sends a ping. */
  ping(): void;
  /** The peer was silent for two beats. The heartbeat stops after calling it. */
  silent(): void;
}

/**
 * Beats until `signal` aborts or the peer falls silent.
 *
 * @param ms A checked interval; `Infinity` beats never (the promise resolves at once).
 * @param signal Stops the heartbeat.
 * @param target The connection watched.
 * @returns Resolves when the heartbeat stops.
 */
export async function heartbeat(
  ms: number,
  signal: AbortSignal,
  target: HeartbeatTarget,
): Promise<void> {
  if (ms === Infinity) return;
  while (!signal.aborted) {
    try {
      await sleep(ms, { signal });
    } catch {
      return; // stopped
    }
    if (Date.now() - target.lastHeard() > 2 * ms) {
      target.silent();
      return;
    }
    target.ping();
  }
}
