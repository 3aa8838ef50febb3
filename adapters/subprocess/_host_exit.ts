/**
 * One process-wide registry of open subprocess transports, so that the
 * `claude` processes do not outlive the host program.
 *
 * The CLI is spawned detached (its own session and process group), so a
 * Ctrl-C in the terminal or a `kill` of the host does not reach it. What the
 * registry installs, and when (nothing at all while no transport is open):
 *
 * - **Signal listeners** (`Deno.addSignalListener`) for SIGINT, SIGTERM and
 *   SIGHUP, where the platform has them: added when the first open transport
 *   whose `hostSignal` is not `"ignore"` registers, removed when the last
 *   such transport has ended or closed. A signal listener replaces Deno's
 *   default action (dying from the signal). On a signal:
 *   - when every such transport says `"close-and-exit"` (the default), the
 *     registry ends every open CLI synchronously (SIGTERM to its process
 *     group, its known descendants and its marked processes; up to 1 s,
 *     polled with a blocking pause, for them to go; SIGKILL to what is left)
 *     and exits the host with 128 + the signal number (130, 143, 129) as a
 *     shell would. Nothing of the program runs between the signal and the
 *     exit, so no rejection of its own (its turns failing as their CLI ends)
 *     can end the host before the processes are gone: no global handler is
 *     needed for that;
 *   - when any says `"close"` (the program has a signal listener of its own,
 *     which decides when to exit), every transport that is not `"ignore"` is
 *     closed with its normal ladder (`close()`, asynchronous) and the host is
 *     not exited; a second signal during those closes sends SIGKILL to them.
 * - **An `unload` listener** (`globalThis.addEventListener("unload", …)`;
 *   `Deno.exit()` or the natural end of the program): added with the first
 *   open transport of any mode, removed with the last. Listeners of `unload`
 *   cannot wait for events, so it ends every open CLI synchronously as above
 *   (the host is exiting already).
 *
 * - **Participants** (a relay: `registerHostExitParticipant`), parts of the
 *   program that must close before the CLIs end: a participant that is not
 *   `"ignore"` has the signal listeners added as a transport does (so a
 *   relay that holds no CLI yet still closes on a signal). On a signal the
 *   registry first awaits every such participant's `close()` (a relay tells
 *   its clients 1001 and closes its sessions, which ends their CLIs with the
 *   normal ladder and leaves their records), for
 *   {@linkcode HOST_EXIT_CLOSE_MS} at most; then it goes on as above with
 *   the transports left, the participants' modes counted with theirs. A
 *   second signal meanwhile does not wait: `"close-and-exit"` ends the CLIs
 *   and exits at once, `"close"` sends SIGKILL to them.
 *
 * Nothing else: no `unhandledrejection`, `error` or `beforeunload` listener,
 * no change to how the program's own errors end it.
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import type { HostSignalMode } from "./subprocess_options.ts";

/** What the registry needs from an open transport. */
export interface HostExitMember {
  /** How it takes part in signal handling. */
  readonly hostSignal: HostSignalMode;
  /** Its time between SIGTERM and SIGKILL (the host's exit waits at most 1 s of it). */
  readonly terminateGraceMs: number;
  /** Closes it with the normal ladder. */
  close(): Promise<unknown>;
  /** Signals its CLI, the CLI's group, known descendants and marked processes now. */
  signalNow(signal: "SIGTERM" | "SIGKILL"): void;
  /** Whether anything of it still runs, now (`undefined`: it cannot be told). */
  runningNow(): boolean | undefined;
  /** Removes what it wrote for its CLI (the private files), now: no event loop runs after. */
  cleanUpNow(): void;
}

/**
 * A part of the program that must close before the CLIs are ended on a
 * host signal (a relay: its clients are told first, and its sessions end
 * with their normal close).
 */
export interface HostExitParticipant {
  /** How it takes part in signal handling (`"ignore"`: not at all). */
  readonly hostSignal: HostSignalMode;
  /** Closes it; awaited for {@linkcode HOST_EXIT_CLOSE_MS} at most. */
  close(): Promise<unknown>;
}

/** The most time a host signal waits for the participants to close before ending the CLIs. */
export const HOST_EXIT_CLOSE_MS = 5000;

type HostSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

const EXIT_CODES: Readonly<Record<HostSignal, number>> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
};

/** The most time the host's exit gives its CLIs after SIGTERM before SIGKILL. */
const HOST_EXIT_GRACE_MS = 1000;
/** How often the host's exit checks whether its CLIs have gone. */
const HOST_EXIT_POLL_MS = 20;
/** The pause between SIGTERM and SIGKILL when nothing can tell whether they have gone. */
const HOST_EXIT_BLIND_GRACE_MS = 200;

class HostExitRegistry {
  readonly #members = new Set<HostExitMember>();
  readonly #participants = new Set<HostExitParticipant>();
  readonly #signalHandlers = new Map<HostSignal, () => void>();
  #unloadHandler: (() => void) | undefined;
  #closing = false;
  /** Set while a signal waits for the participants to close. */
  #waiting: HostSignal | undefined;

  get size(): number {
    return this.#members.size;
  }

  get listening(): boolean {
    return this.#signalHandlers.size > 0 || this.#unloadHandler !== undefined;
  }

  register(member: HostExitMember): void {
    this.#members.add(member);
    this.#update();
  }

  unregister(member: HostExitMember): void {
    this.#members.delete(member);
    this.#update();
  }

  join(participant: HostExitParticipant): void {
    this.#participants.add(participant);
    this.#update();
  }

  leave(participant: HostExitParticipant): void {
    this.#participants.delete(participant);
    this.#update();
  }

  #update(): void {
    const wantsSignals = [...this.#members, ...this.#participants]
      .some((member) => member.hostSignal !== "ignore");
    if (wantsSignals && this.#signalHandlers.size === 0) {
      for (const signal of Object.keys(EXIT_CODES) as HostSignal[]) {
        const handler = (): void => this.#onSignal(signal);
        try {
          Deno.addSignalListener(signal, handler);
          this.#signalHandlers.set(signal, handler);
        } catch {
          // Not supported here (Windows supports only SIGINT and SIGBREAK).
        }
      }
    } else if (!wantsSignals && this.#signalHandlers.size > 0) {
      for (const [signal, handler] of this.#signalHandlers) {
        try {
          Deno.removeSignalListener(signal, handler);
        } catch {
          // already gone
        }
      }
      this.#signalHandlers.clear();
    }
    if (this.#members.size > 0 && this.#unloadHandler === undefined) {
      this.#unloadHandler = (): void => this.#onUnload();
      globalThis.addEventListener("unload", this.#unloadHandler);
    } else if (this.#members.size === 0 && this.#unloadHandler !== undefined) {
      globalThis.removeEventListener("unload", this.#unloadHandler);
      this.#unloadHandler = undefined;
    }
  }

  #onSignal(signal: HostSignal): void {
    if (this.#waiting !== undefined) {
      // A second signal while the participants close: the user does not want to wait.
      this.#waiting = undefined;
      this.#endMembers(signal, true);
      return;
    }
    const participants = [...this.#participants].filter((p) => p.hostSignal !== "ignore");
    if (participants.length === 0) {
      this.#endMembers(signal, false);
      return;
    }
    this.#waiting = signal;
    const closed = Promise.allSettled(participants.map((participant) => participant.close()));
    void bounded(closed, HOST_EXIT_CLOSE_MS).then(() => {
      if (this.#waiting === undefined) return; // a second signal went on already
      this.#waiting = undefined;
      // The participants' modes count with the transports': any "close" leaves the exit to
      // the program.
      this.#endMembers(signal, false, participants);
    });
  }

  /*
   * Ends or closes the transports as their modes say (`participants`: those that closed,
   * whose modes count too); `again`: a second signal.
   */
  #endMembers(
    signal: HostSignal,
    again: boolean,
    participants: readonly HostExitParticipant[] = [...this.#participants],
  ): void {
    const all = [...this.#members];
    const members = all.filter((member) => member.hostSignal !== "ignore");
    const modes = [...members, ...participants].filter((p) => p.hostSignal !== "ignore");
    if (modes.every((member) => member.hostSignal === "close-and-exit")) {
      // From here to the exit everything is synchronous: nothing else of the program runs.
      this.#members.clear();
      this.#update();
      endNow(all);
      Deno.exit(EXIT_CODES[signal]);
    }
    if (this.#closing || again) {
      // A second signal: the user does not want to wait.
      for (const member of members) signalNow(member, "SIGKILL");
      return;
    }
    this.#closing = true;
    void Promise.allSettled(members.map((member) => member.close())).then(() => {
      this.#closing = false;
    });
  }

  #onUnload(): void {
    endNow([...this.#members]);
  }
}

/**
 * Ends the members' processes without yielding to the event loop: SIGTERM,
 * then a blocking wait until they have gone (bounded), then SIGKILL to the
 * members with anything left.
 */
function endNow(members: readonly HostExitMember[]): void {
  if (members.length === 0) return;
  for (const member of members) signalNow(member, "SIGTERM");
  const graceMs = Math.min(
    HOST_EXIT_GRACE_MS,
    Math.max(...members.map((member) => member.terminateGraceMs)),
  );
  const started = performance.now();
  let left = members;
  for (;;) {
    const running = left.map(runningNow);
    left = left.filter((_, i) => running[i] !== false);
    const waited = performance.now() - started;
    if (left.length === 0 || waited >= graceMs) break;
    if (running.includes(undefined)) {
      // Nothing can tell when they are gone: give them a fixed moment.
      pauseSync(Math.min(HOST_EXIT_BLIND_GRACE_MS, graceMs) - waited);
      break;
    }
    pauseSync(Math.min(HOST_EXIT_POLL_MS, graceMs - waited));
  }
  for (const member of left) signalNow(member, "SIGKILL");
  for (const member of members) {
    try {
      member.cleanUpNow();
    } catch {
      // best effort: the host is going away
    }
  }
}

/* Resolves when `promise` settles or after `ms`, whichever is first. */
async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  using limit = deadline(ms);
  await abortable(promise, limit.signal).catch(() => {});
}

/* Blocks the thread (no event runs meanwhile: the children are not reaped, so no pid is reused). */
function pauseSync(ms: number): void {
  if (ms <= 0) return;
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  } catch {
    // Not allowed here: no grace, then.
  }
}

function signalNow(member: HostExitMember, signal: "SIGTERM" | "SIGKILL"): void {
  try {
    member.signalNow(signal);
  } catch {
    // best effort: the host is going away
  }
}

function runningNow(member: HostExitMember): boolean | undefined {
  try {
    return member.runningNow();
  } catch {
    return undefined;
  }
}

const registry = new HostExitRegistry();

/**
 * Adds an open transport to the registry (adding the listeners if it is the first).
 *
 * @param member The transport.
 */
export function registerForHostExit(member: HostExitMember): void {
  registry.register(member);
}

/**
 * Removes a transport from the registry (removing the listeners if it was the last).
 *
 * @param member The transport.
 */
export function unregisterForHostExit(member: HostExitMember): void {
  registry.unregister(member);
}

/**
 * Adds a participant (a relay): on a host signal it is closed before the
 * CLIs are ended (see the module's documentation).
 *
 * @param participant What to close first.
 */
export function registerHostExitParticipant(participant: HostExitParticipant): void {
  registry.join(participant);
}

/**
 * Removes a participant (removing the listeners if nothing else needs them).
 *
 * @param participant The participant.
 */
export function unregisterHostExitParticipant(participant: HostExitParticipant): void {
  registry.leave(participant);
}

/**
 * How many transports are registered and whether listeners are installed, for tests.
 *
 * @returns The count and the listener state.
 */
export function hostExitState(): { members: number; listening: boolean } {
  return { members: registry.size, listening: registry.listening };
}
