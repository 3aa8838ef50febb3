/**
 * The process side of a subprocess transport: the running CLI, where it is
 * in its life, and everything that signals it and what it started (its
 * process group, the descendants recorded while it ran, the processes that
 * carry its marker variable).
 *
 * Its state is one {@linkcode ProcessState}: the life of the CLI
 * (`running` → `closing` → `exited`, or `running` → `exited` when it ends by
 * itself) and how far signals reach (`tree`, or only the CLI itself once
 * `Deno.kill` was refused).
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import { findMarkedSync, signalMarkedSync, sweepMarked } from "./_marked_processes.ts";
import {
  findDescendants,
  findDescendantsSync,
  isAliveSync,
  type ProcessRecord,
} from "./_process_tree.ts";

/**
 * How the child ended, as Deno reports it (not the session's public
 * `ExitStatus`, which tells whether the session runs and how it ended).
 */
export interface ChildExit {
  /** The exit code, or `null` when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it, or `null`. */
  readonly signal: string | null;
}

/**
 * The CLI's life: `running` (nobody asked it to end), `closing` (a close
 * acted on it while it ran: ended its input or signalled it), `exited`
 * (`requested`: after a close acted, so the close ended it).
 */
export type ProcessLife =
  | { readonly state: "running" }
  | { readonly state: "closing" }
  | { readonly state: "exited"; readonly requested: boolean };

/**
 * How far signals reach: `tree` (the CLI's process group, its recorded
 * descendants and its marked processes, with `Deno.kill`), or `child` (the
 * CLI alone, through its handle: `Deno.kill` needs full `--allow-run`).
 */
export type SignalReach = "tree" | "child";

/** The whole state of the process side; every combination is legal. */
export interface ProcessState {
  /** Where the CLI is in its life. */
  readonly life: ProcessLife;
  /** How far signals reach. */
  readonly reach: SignalReach;
}

function denied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

/** One spawned CLI and what it started. */
export class CliProcess {
  /** The CLI's pid, which is also its process group id (it is spawned detached). */
  readonly pid: number;
  /** Resolves once, when the child has been reaped; never rejects. */
  readonly status: Promise<ChildExit>;
  readonly #child: Deno.ChildProcess;
  readonly #marker: string;
  readonly #descendants = new Map<number, ProcessRecord>();
  #state: ProcessState = { life: { state: "running" }, reach: "tree" };

  /**
   * @param child The spawned CLI.
   * @param marker The value of its marker variable.
   */
  constructor(child: Deno.ChildProcess, marker: string) {
    this.#child = child;
    this.#marker = marker;
    this.pid = child.pid;
    // One reaction, the first on `child.status`: the exit is known here before any other
    // code hears of it (a close that begins after it finds the CLI exited, not closing).
    this.status = child.status.then(
      (status): ChildExit => this.#exited({ code: status.code, signal: status.signal }),
      (): ChildExit => this.#exited({ code: null, signal: null }),
    );
  }

  /** The state of the process side. */
  get state(): ProcessState {
    return this.#state;
  }

  /** True once the child has been reaped. */
  get exited(): boolean {
    return this.#state.life.state === "exited";
  }

  /** The descendants recorded so far. */
  get descendants(): ProcessRecord[] {
    return [...this.#descendants.values()];
  }

  /**
   * Says that a close acts on the CLI now, ending its input or signalling it
   * (`running` → `closing`; nothing otherwise). Its exit is the close's from
   * then on; an exit known before is its own.
   */
  requestClose(): void {
    if (this.#state.life.state === "running") this.#setLife({ state: "closing" });
  }

  /** Records the CLI's living descendants (they may leave its tree before it ends). */
  async record(): Promise<void> {
    for (const record of await findDescendants(this.pid)) this.#descendants.set(record.pid, record);
  }

  /**
   * Waits for the CLI to exit, for at most `ms` (0: not at all, `Infinity`: as long as it takes).
   *
   * @param ms A checked duration.
   */
  async waitExit(ms: number): Promise<void> {
    if (this.exited || ms === 0) return;
    using limit = deadline(ms);
    await abortable(this.status, limit.signal).catch(() => {});
  }

  /**
   * Sends a signal to the CLI's process group; falls back to the CLI alone
   * without the permission for `Deno.kill`.
   *
   * @param signal The signal.
   * @returns True if a process received it.
   */
  signalGroup(signal: Deno.Signal): boolean {
    if (this.#state.reach === "tree") {
      try {
        Deno.kill(-this.pid, signal);
        return true;
      } catch (error) {
        if (denied(error)) this.#setReach("child");
        // Otherwise no such group is left (or groups are not supported here).
      }
    }
    if (this.exited) return false;
    try {
      this.#child.kill(signal);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Sends a signal to a recorded descendant, and to its group if it leads one.
   *
   * @param record The descendant.
   * @param signal The signal.
   */
  signalDescendant(record: ProcessRecord, signal: Deno.Signal): void {
    if (this.#state.reach !== "tree") return;
    const targets = record.pgid === record.pid && record.pgid !== this.pid
      ? [-record.pid, record.pid]
      : [record.pid];
    for (const target of targets) {
      try {
        Deno.kill(target, signal);
      } catch (error) {
        if (denied(error)) {
          this.#setReach("child");
          return;
        }
      }
    }
  }

  /**
   * Ends whatever the CLI started and left behind (double-forked,
   * reparented, in a session of its own): every process with its marker.
   *
   * @param graceMs The time between SIGTERM and SIGKILL.
   */
  async sweepMarked(graceMs: number): Promise<void> {
    if (this.#state.reach === "tree") await sweepMarked(this.#marker, graceMs);
  }

  /**
   * Signals the CLI's group, its known descendants and its marked processes
   * now, without waiting (for the host's exit, when nothing asynchronous runs).
   *
   * @param signal The signal.
   */
  signalNow(signal: "SIGTERM" | "SIGKILL"): void {
    if (!this.exited) {
      this.requestClose();
      for (const record of findDescendantsSync(this.pid)) this.#descendants.set(record.pid, record);
      this.signalGroup(signal);
    }
    for (const record of this.#descendants.values()) {
      if (isAliveSync(record)) this.signalDescendant(record, signal);
    }
    if (this.#state.reach === "tree") signalMarkedSync(this.#marker, signal);
  }

  /**
   * Tells now, without waiting, whether the CLI or anything it started still
   * runs: a process with its marker (the CLI carries it too, and a zombie
   * does not), or a recorded descendant.
   *
   * @returns `undefined` when it cannot be told (neither `/proc` nor `ps` can be read).
   */
  runningNow(): boolean | undefined {
    if (this.#state.reach === "tree") {
      const marked = findMarkedSync(this.#marker);
      if (marked === undefined) return undefined;
      return marked.length > 0 || this.descendants.some((record) => isAliveSync(record));
    }
    // Only the CLI itself can be signalled: nothing is left once it has been reaped.
    return this.exited ? false : undefined;
  }

  #exited(status: ChildExit): ChildExit {
    this.#setLife({ state: "exited", requested: this.#state.life.state === "closing" });
    return status;
  }

  #setLife(life: ProcessLife): void {
    this.#state = { ...this.#state, life };
  }

  #setReach(reach: SignalReach): void {
    this.#state = { ...this.#state, reach };
  }
}
