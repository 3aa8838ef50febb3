// This module is browser compatible.
/*
 * The session's one lifecycle state, and the pure rules of how it ends.
 * `alive`, `state`, `exitStatus` and whether it takes work are all derived
 * from it.
 */

import { rejectedFlag } from "../compat/cli_features.ts";
import { describeExit, DuplexError, type TransportExit } from "../errors.ts";
import type { ExitStatus, SessionState } from "./events.ts";

/** How a session ended (an {@linkcode ExitStatus} other than running). */
export type EndedStatus = Exclude<ExitStatus, { state: "running" }>;

/**
 * Where the session is:
 * - `ready`: usable;
 * - `closing`: the transport is being closed, by the caller (`close()`) or
 *   because the session failed (`failure`: the error every pending operation
 *   gets, for example a read pump that died);
 * - `ended`: the peer ended; how, for good.
 */
export type Lifecycle =
  | { readonly phase: "ready" }
  | { readonly phase: "closing"; readonly failure: DuplexError | undefined }
  | { readonly phase: "ended"; readonly status: EndedStatus };

/** The lifecycle of a new session. */
export const READY: Lifecycle = Object.freeze({ phase: "ready" });

const RUNNING: ExitStatus = Object.freeze({ state: "running" });

/**
 * The public state of a lifecycle.
 *
 * @param lifecycle The lifecycle.
 * @returns `ready`, `closing`, `closed` (ended cleanly or by request) or `failed`.
 */
export function stateOf(lifecycle: Lifecycle): SessionState {
  if (lifecycle.phase !== "ended") return lifecycle.phase;
  return lifecycle.status.state === "completed" ? "closed" : "failed";
}

/**
 * Checks that a session in this lifecycle takes work.
 *
 * @param lifecycle The lifecycle.
 * @param what What the caller wanted, for the message ("send a turn").
 * @throws The failure of a session closing because it failed; the error of
 *   a session that ended failed; else a `closed` DuplexError.
 */
export function assertUsable(lifecycle: Lifecycle, what: string): void {
  if (lifecycle.phase === "ready") return;
  if (lifecycle.phase === "closing" && lifecycle.failure) throw lifecycle.failure;
  if (lifecycle.phase === "ended" && lifecycle.status.state === "failed") {
    throw lifecycle.status.error;
  }
  throw new DuplexError(
    "closed",
    `Cannot ${what}: the session is ${stateOf(lifecycle)}; start a new session`,
    lifecycle.phase === "ended" ? { exit: lifecycle.status.exit } : {},
  );
}

/**
 * The exit status of a lifecycle.
 *
 * @param lifecycle The lifecycle.
 * @returns `{ state: "running" }` until the end, then how it ended.
 */
export function exitStatusOf(lifecycle: Lifecycle): ExitStatus {
  return lifecycle.phase === "ended" ? lifecycle.status : RUNNING;
}

/** How a session ended, and the error its pending operations get. */
export interface Ending {
  readonly status: EndedStatus;
  readonly error: DuplexError;
}

/**
 * How the session ends once its peer ended. Pure.
 *
 * - Closing on request, and the close ended the peer (`exit.requested`):
 *   `completed`, however the peer then ended (the CLI exits 1 after an
 *   interrupted last turn and 143 after the SIGTERM a close may need; neither
 *   is a failure the caller did not ask for); pending operations get a
 *   `closed` error.
 * - Closing on request, but the peer ended by itself before the close
 *   reached it (`requested: false`: it exited as `close()` was called, its
 *   exit not yet handled): as when ready, so an exit of its own with code 1
 *   is `failed` with code 1, whoever won the race.
 * - Closing because of a failure: `failed` with that failure.
 * - Ready: `completed` for a clean end (exit code 0, no signal), else
 *   `failed`; pending operations get a `process_exited` error either way,
 *   or an `unsupported` one when the CLI exited rejecting a flag of a
 *   feature it lacks (`error: unknown option '--await-claim'`).
 *
 * @param lifecycle The lifecycle before the end (not `ended`).
 * @param exit How the peer ended, and whether our side's close ended it.
 * @returns The final status and the error of pending operations.
 */
export function endingOf(
  lifecycle: Exclude<Lifecycle, { phase: "ended" }>,
  exit: TransportExit,
): Ending {
  const { code, signal } = exit;
  if (lifecycle.phase === "closing") {
    const { failure } = lifecycle;
    if (failure) {
      return { status: { state: "failed", code, signal, error: failure, exit }, error: failure };
    }
    if (exit.requested) {
      const error = new DuplexError("closed", "Cannot finish: the session was closed", { exit });
      return { status: { state: "completed", code, signal, exit }, error };
    }
  }
  // A flag of the feature table the CLI does not know: the feature is named, with its stderr.
  const error = rejectedFlag(exit) ?? new DuplexError(
    "process_exited",
    `The CLI ended (${describeExit(exit)}); start a new session to continue`,
    { exit },
  );
  const status: EndedStatus = code === 0 && signal === null
    ? { state: "completed", code, signal, exit }
    : { state: "failed", code, signal, error, exit };
  return { status, error };
}
