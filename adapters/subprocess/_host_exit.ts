/**
 * One process-wide registry of open subprocess transports, so that the
 * `claude` processes do not outlive the host program.
 *
 * The CLI is spawned detached (its own session and process group), so a
 * Ctrl-C in the terminal or a `kill` of the host does not reach it. While at
 * least one transport is open the registry listens for:
 *
 * - SIGINT, SIGTERM and SIGHUP to the host (`Deno.addSignalListener`): it
 *   closes every registered transport with its normal ladder (stdin EOF,
 *   SIGTERM, SIGKILL, descendants), then exits the host with 128 + the
 *   signal number (130, 143, 129) as a shell would, because listening for a
 *   signal replaces Deno's default action of dying from it. A second signal
 *   during the cleanup skips the waiting: SIGKILL to everything, exit now.
 *   A transport opened with `hostSignal: "close"` says that the program has
 *   its own signal handling: the transports are still closed, but the host
 *   is not exited (when any open transport says so). With `"ignore"` the
 *   transport does not take part in signal handling at all.
 * - `unload` (`Deno.exit()` or the natural end of the program): listeners
 *   of `unload` cannot wait for events, so each open transport gets SIGTERM to
 *   its group, its known descendants and its marked processes, synchronously,
 *   then, after a blocking 200 ms pause, SIGKILL to whatever is left. The CLI
 *   reacts to SIGTERM by ending its tools and exiting within milliseconds.
 * - While the cleanup after a signal runs, unhandled rejections (the
 *   program's own turns rejecting as their CLI ends) do not end the host
 *   early; it exits with 128 + the signal number once everything is closed.
 *
 * Listeners are added with the first open transport and removed with the
 * last, so that a program (or a test) with no open transport keeps Deno's
 * default signal behaviour and can exit.
 *
 * @module
 */

/** How a transport takes part in the host's SIGINT/SIGTERM/SIGHUP handling. */
export type HostSignalMode = "close-and-exit" | "close" | "ignore";

/** The host signal modes accepted by the `hostSignal` option. */
export const HOST_SIGNAL_MODES: readonly HostSignalMode[] = ["close-and-exit", "close", "ignore"];

/** What the registry needs from an open transport. */
export interface HostExitMember {
  /** How it takes part in signal handling. */
  readonly hostSignal: HostSignalMode;
  /** Closes it with the normal ladder. */
  close(): Promise<unknown>;
  /** Signals its process group and known descendants now, without waiting. */
  terminateNow(signal: "SIGTERM" | "SIGKILL"): void;
}

type HostSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

const EXIT_CODES: Readonly<Record<HostSignal, number>> = {
  SIGINT: 130,
  SIGTERM: 143,
  SIGHUP: 129,
};

class HostExitRegistry {
  readonly #members = new Set<HostExitMember>();
  readonly #signalHandlers = new Map<HostSignal, () => void>();
  #unloadHandler: (() => void) | undefined;
  #handling = false;

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

  #update(): void {
    const wantsSignals = [...this.#members].some((member) => member.hostSignal !== "ignore");
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
    const members = [...this.#members].filter((member) => member.hostSignal !== "ignore");
    const exit = members.every((member) => member.hostSignal === "close-and-exit");
    const code = EXIT_CODES[signal];
    if (this.#handling) {
      // A second signal: the user does not want to wait.
      for (const member of this.#members) terminate(member, "SIGKILL");
      if (exit) Deno.exit(code);
      return;
    }
    this.#handling = true;
    // While the sessions close, the program's own awaits reject (its turns end with the
    // CLI): an unhandled rejection then would end the host before the cleanup finished.
    const keepAlive = (event: PromiseRejectionEvent): void => {
      if (exit) event.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", keepAlive);
    void Promise.allSettled(members.map((member) => member.close())).then(() => {
      this.#handling = false;
      globalThis.removeEventListener("unhandledrejection", keepAlive);
      if (exit) Deno.exit(code);
    });
  }

  #onUnload(): void {
    for (const member of this.#members) terminate(member, "SIGTERM");
    if (this.#members.size === 0) return;
    // Nothing asynchronous runs any more: give the processes a moment, then SIGKILL the rest.
    pauseSync(UNLOAD_GRACE_MS);
    for (const member of this.#members) terminate(member, "SIGKILL");
  }
}

/** How long the host's exit waits between SIGTERM and SIGKILL (it cannot wait for events). */
const UNLOAD_GRACE_MS = 200;

function pauseSync(ms: number): void {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  } catch {
    // Not allowed here: no grace, then.
  }
}

function terminate(member: HostExitMember, signal: "SIGTERM" | "SIGKILL"): void {
  try {
    member.terminateNow(signal);
  } catch {
    // best effort: the host is going away
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
 * How many transports are registered and whether listeners are installed, for tests.
 *
 * @returns The count and the listener state.
 */
export function hostExitState(): { members: number; listening: boolean } {
  return { members: registry.size, listening: registry.listening };
}
