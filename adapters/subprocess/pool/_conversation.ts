/*
 * One conversation of a pool as one state, and what `peek` and `health`
 * derive from it (pure). The pool makes every transition; this file only
 * names the states and reads them.
 */

import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import type { ConversationState } from "./pool_events.ts";
import type { ConversationOptions } from "./pool_options.ts";

/**
 * Where a conversation is:
 * - `new`: it never had a process (a session id to resume, if given, is in
 *   its options);
 * - `starting`: a process is being started for it (`started` settles when
 *   the start has ended); a failed start puts it back `from` where it was;
 * - `live`: a process serves it; `idleTimer` runs while nobody holds it and
 *   hibernates it when it fires; `sessionId` is the id known before this
 *   process told its own;
 * - `hibernated`: it had a process and has none now (closed by the pool, or
 *   ended by itself); `sessionId` is what the next start resumes.
 */
export type Phase =
  | { readonly phase: "new" }
  | { readonly phase: "starting"; readonly started: Promise<DuplexSession>; readonly from: Resting }
  | {
    readonly phase: "live";
    readonly session: DuplexSession;
    readonly sessionId: string | undefined;
    idleTimer: ReturnType<typeof setTimeout> | undefined;
  }
  | { readonly phase: "hibernated"; readonly sessionId: string | undefined };

/** A conversation without a process and none starting: what a start begins from. */
export type Resting = Extract<Phase, { phase: "new" | "hibernated" }>;

/** A conversation a process serves. */
export type Live = Extract<Phase, { phase: "live" }>;

/** What the pool knows of one conversation; a hibernated one holds only this. */
export interface Conversation {
  readonly key: string;
  /** Its options, from its first `acquire` (`undefined`: none given). */
  readonly options: ConversationOptions | undefined;
  /** Holders that acquired it and have not released it. */
  holds: number;
  state: Phase;
}

/** The state of a conversation the pool has just heard of. */
export const NEW: Resting = Object.freeze({ phase: "new" });

/**
 * The session id a state knows: a live process's own, else the one kept.
 *
 * @param state The state.
 * @returns The id, or `undefined` before any process told one.
 */
export function sessionIdOf(state: Phase): string | undefined {
  switch (state.phase) {
    case "new":
      return undefined;
    case "starting":
      return sessionIdOf(state.from);
    case "live":
      return state.session.sessionId ?? state.sessionId;
    case "hibernated":
      return state.sessionId;
  }
}

/**
 * Stops a live conversation's idle timer (any other state has none).
 *
 * @param state The state.
 */
export function disarmIdle(state: Phase): void {
  if (state.phase !== "live") return;
  clearTimeout(state.idleTimer);
  state.idleTimer = undefined;
}

/**
 * Tells whether a session may be hibernated: no turn running, no
 * permission request waiting.
 *
 * @param session The session.
 * @returns True when idle.
 */
export function idle(session: DuplexSession): boolean {
  return !session.busy && session.pendingPermissions.length === 0;
}

/**
 * Where a conversation is, as `peek` tells: a new one reads as hibernated
 * (known, no process).
 *
 * @param conversation The conversation.
 * @returns Its public state.
 */
export function viewOf(conversation: Conversation): ConversationState {
  const { state } = conversation;
  return {
    state: state.phase === "live" || state.phase === "starting" ? state.phase : "hibernated",
    sessionId: sessionIdOf(state),
    holds: conversation.holds,
    busy: state.phase === "live" && !idle(state.session),
  };
}

/** The counts of `health` that come from the conversations' states. */
export interface Tally {
  /** Live conversations with a turn running or a permission waiting. */
  readonly busy: number;
  readonly starting: number;
  /** Hibernated ones, and new ones given a session id to resume (waiting for a first process is not). */
  readonly hibernated: number;
}

/**
 * Counts conversations by state, for `health`.
 *
 * @param conversations Every conversation of the pool.
 * @returns The counts.
 */
export function tally(conversations: Iterable<Conversation>): Tally {
  let busy = 0;
  let starting = 0;
  let hibernated = 0;
  for (const { state, options } of conversations) {
    if (state.phase === "live") {
      if (!idle(state.session)) busy++;
    } else if (state.phase === "starting") starting++;
    else if (state.phase === "hibernated" || options?.resume !== undefined) hibernated++;
  }
  return { busy, starting, hibernated };
}
