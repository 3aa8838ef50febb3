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
    if (Date.now() - target.lastHeard() > 2 * ms && await confirmedSilent(ms, signal, target)) {
      target.silent();
      return;
    }
    if (signal.aborted) return;
    target.ping();
  }
}

/** How long a silence is looked at again before the peer is taken for gone. */
const CONFIRM_MS = 5;
/** A look again this much later than asked came from a stalled event loop: it is not trusted. */
const LATE_MS = 4 * CONFIRM_MS;
/** The most looks again (a loop that stalls each time still ends its peer's heartbeat). */
const LOOKS = 10;

/*
 * Whether the peer is still silent once the event loop has turned. After a
 * stall the timer can fire before the messages that arrived meanwhile are
 * read (a client that answered every ping was dropped so, under load): look
 * again a moment later, and trust only a look that came on time.
 */
async function confirmedSilent(
  ms: number,
  signal: AbortSignal,
  target: HeartbeatTarget,
): Promise<boolean> {
  for (let look = 0; look < LOOKS; look++) {
    const asked = Date.now();
    try {
      await sleep(CONFIRM_MS, { signal });
    } catch {
      return false; // stopped
    }
    if (Date.now() - target.lastHeard() <= 2 * ms) return false;
    if (Date.now() - asked < LATE_MS) return true;
  }
  return true;
}
