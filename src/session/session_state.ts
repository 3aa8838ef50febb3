// This module is browser compatible.
/**
 * The session lifecycle as one explicit state machine.
 *
 * @module
 */

/**
 * Where a session is in its life.
 *
 * - `ready`: open and usable.
 * - `closing`: `close()` was called; waiting for the peer to end.
 * - `closed`: ended cleanly, or by request.
 * - `failed`: the peer ended on its own with an error (non-zero exit, signal, lost connection).
 */
export type SessionState = "ready" | "closing" | "closed" | "failed";

/** What can happen to a session. */
export type SessionStateEvent =
  /** The caller asked to close. */
  | "close"
  /** The peer ended with a clean status (exit code 0, normal close). */
  | "ended_clean"
  /** The peer ended with an error status. */
  | "ended_failed";

/**
 * The next state. Pure; a terminal state never changes, and an event that
 * does not apply leaves the state as it is.
 *
 * Once `close()` was called, however the peer then ends counts as `closed`:
 * the CLI exits 1 after an interrupted last turn and 143 after the SIGTERM a
 * close may need, and neither is a failure the caller did not ask for.
 *
 * @param state The current state.
 * @param event What happened.
 * @returns The next state.
 *
 * @example Close a running session
 * ```ts
 * import { transition } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * assert.equal(transition("ready", "close"), "closing");
 * assert.equal(transition("closing", "ended_failed"), "closed");
 * assert.equal(transition("ready", "ended_failed"), "failed");
 * ```
 */
export function transition(state: SessionState, event: SessionStateEvent): SessionState {
  switch (state) {
    case "ready":
      return event === "close" ? "closing" : event === "ended_clean" ? "closed" : "failed";
    case "closing":
      return event === "close" ? "closing" : "closed";
    case "closed":
    case "failed":
      return state;
  }
}

/**
 * Tells whether the session in this state accepts new work.
 *
 * @param state A state.
 * @returns True only for `ready`.
 */
export function isUsable(state: SessionState): boolean {
  return state === "ready";
}
