/**
 * The types of a relayed session: its one phase (and the pure rule of
 * whether its client asked to close it), what it needs from its connection,
 * its settings, and how it answers an input line.
 *
 * @module
 */

import type { SpawnRequest } from "../../src/wire/wire.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { Hibernated } from "./_hibernation.ts";
import type { OutputEntry } from "./_output_buffer.ts";
import type { Resent, StoreLink } from "./_relay_store.ts";
import type { SessionTrace } from "./_relay_telemetry.ts";
import type { RelaySession } from "./_relay_session.ts";

/**
 * Where a relayed session is:
 * - `running`: its CLI runs;
 * - `closing`: the client asked to close it (`close`), its exit follows;
 * - `exited`: the CLI exited, its exit message numbered `exitSeq`; the
 *   session waits for the client's acknowledgement of it (for the grace at
 *   most). `closeRequested`: the client asked for the close (a disconnect
 *   then forgets it at once);
 * - `forgotten`: its CLI is being closed and its buffer dropped; `done`
 *   resolves once the CLI is reaped and the pumps have ended.
 */
export type Phase =
  | { readonly phase: "running" | "closing" }
  | { readonly phase: "exited"; readonly exitSeq: number; readonly closeRequested: boolean }
  | { readonly phase: "forgotten"; readonly done: Promise<void> };

/** A session whose CLI runs. */
export const RUNNING: Phase = Object.freeze({ phase: "running" });
/** A session the client asked to close, its exit not yet handled. */
export const CLOSING: Phase = Object.freeze({ phase: "closing" });

/**
 * Whether the client asked to close the session (before or after its exit).
 *
 * @param phase The session's phase.
 * @returns True when closing, or exited after a close it asked for.
 */
export function closeRequested(phase: Phase): boolean {
  return phase.phase === "closing" || (phase.phase === "exited" && phase.closeRequested);
}

/** What a session needs from the connection attached to it. */
export interface Peer {
  /** Sends a text frame (ignored once the socket is closing). */
  sendText(text: string): void;
  /** Sends a binary frame (ignored once the socket is closing). */
  sendBinary(frame: Uint8Array<ArrayBuffer>): void;
  /** Closes the socket; the connection detaches itself. */
  end(code: number, reason: string): void;
  /** Whether the client answers a ping within `timeoutMs` (it is still at this end). */
  answers(timeoutMs: number): Promise<boolean>;
}

/** What a session continues: its token, sequence numbers and kept output. */
export interface Restore {
  /** The session token the client resumes with. */
  readonly id: string;
  /** The last output sequence number produced (the new output continues after it). */
  readonly outSeq: number;
  /** Output after this sequence number is kept (in `tail`); a resume from before it is a gap. */
  readonly keptAfter: number;
  /** The last input sequence number written to a CLI. */
  readonly applied: number;
  /** Output the client had not acknowledged (none for a resume from the store). */
  readonly tail: readonly OutputEntry[];
  /**
   * For a resume from the store: the user lines the CLI before took (in the
   * stored transcript) after the one the client's last result answered; the
   * client ends their turns if they are its own unanswered lines (the ready's
   * `gone.uuids`).
   */
  readonly taken?: readonly string[];
}

/**
 * What a resume in a new process (`claude --resume`) starts from: a session
 * hibernated on this relay, or the record another relay left in the store.
 */
export interface Wake {
  /** The options of the new CLI (`resume` set, no `sessionId`). */
  readonly options: SubprocessOptions;
  /** The CLI's session id (`--resume`). */
  readonly cliSessionId: string;
  /** The spawn request the conversation was started with (for its record in the store). */
  readonly spawn: SpawnRequest;
  /**
   * The folder its CLI runs in, relative to its owner's workspace root (kept
   * in its record; a wake checks it against the resuming credential's policy).
   */
  readonly cwd: string | undefined;
  /** Its record's epoch so far (0 without a store): the resume writes the next one. */
  readonly epoch: number;
  /** What the new session continues. */
  readonly restore: Restore;
  /**
   * For a resume from the store, once the conversation is taken over at
   * `epoch`: the last input the relays before wrote to their CLIs, as their
   * record says now (the old relay's last snapshots may have landed
   * meanwhile), a write still in flight waited for (see
   * `_store_wake.ts`); undefined when the record is another conversation's.
   * Rejects with a `busy` `Refusal` when the store does not load it.
   */
  readonly written?: (epoch: number) => Promise<number | undefined>;
  /** Set for a resume from the store: how re-sent lines the old CLI had are told. */
  readonly resent?: Resent;
  /**
   * For a resume from the store: the user line the client's last result
   * answers, which the store's transcript must hold before the takeover.
   */
  readonly answered?: string;
}

/**
 * What a session starts from: a spawn request (no CLI session id when it
 * cannot be resumed later), or a resume ({@linkcode Wake}, its epoch the next).
 */
export type Start = Omit<Wake, "cliSessionId" | "restore" | "resent" | "answered"> & {
  readonly cliSessionId: string | undefined;
  readonly restore?: Restore;
  readonly resent?: Resent;
};

/** Settings of a session. */
export interface RelaySessionSettings {
  /** Its span (`claude.relay.session`), ended when the CLI exits. */
  readonly trace: SessionTrace;
  /** The credential that created it (see `Credential.owner`); only it may resume. */
  readonly owner: string;
  /** Whether `ready` tells the CLI's pid. */
  readonly exposePid: boolean;
  /** The most input bytes received and not yet written to the CLI. */
  readonly maxPendingInputBytes: number;
  /** How long the process is kept without a connection, and after its exit (Infinity: no limit). */
  readonly graceMs: number;
  /** Whether a connection may resume the session; if not, a disconnect ends it. */
  readonly resumable: boolean;
  /** The bound of the replay buffer. */
  readonly bufferBytes: number;
  /** Called once when the session is forgotten, with the promise of its end. */
  readonly onForget: (session: RelaySession, done: Promise<void>) => void;
  /**
   * Hibernation, when the relay does it for this session: the CLI's session
   * id, the options its process runs with, its spawn request and folder, and
   * what takes the record when the grace ends with the process still running.
   */
  readonly hibernation?: {
    readonly cliSessionId: string;
    readonly options: SubprocessOptions;
    readonly spawn: SpawnRequest;
    readonly cwd: string | undefined;
    readonly keep: (record: Hibernated) => void;
  };
  /**
   * A session this one continues: a hibernated one (its token, sequence
   * numbers and kept output), or one resumed from the store (no output kept).
   */
  readonly restore?: Restore;
  /** Its use of the session store: mirroring, the record, re-sent lines. */
  readonly store?: StoreLink;
  /** Its token, when the relay chose it (a restored session's own; default: a new random one). */
  readonly id?: string;
}

/**
 * How the session answers an input line: taken, a gap in the sequence, or
 * refused because `maxPendingInputBytes` are waiting for the CLI already.
 */
export type InputResult = "ok" | "gap" | "full";
