/**
 * What a relay connection needs from the relay (the relay implements it):
 * its bounds, and the starts, finds and wakes of sessions.
 *
 * @module
 */

import type { ClientMessage, SpawnRequest } from "../../src/wire/wire.ts";
import type { TraceContext } from "../../src/telemetry/_trace_context.ts";
import type { Credential } from "./_access.ts";
import type { RelayConnection } from "./_connection.ts";
import type { RelaySession } from "./_relay_session.ts";

/**
 * Where a client resumes a session from: the last output it has (`after`),
 * the highest input it was acknowledged (`applied`) and the user line the last
 * result it read answers (`answered`), as its hello said.
 */
export type ResumePoint = Omit<
  NonNullable<Extract<ClientMessage, { t: "hello" }>["resume"]>,
  "session"
>;

/** What a connection needs from the relay. */
export interface ConnectionHost {
  /** How often to ping; a connection silent for twice as long is dropped (Infinity: never). */
  readonly heartbeatMs: number;
  /** How long to wait for the hello (Infinity: no limit). */
  readonly helloTimeoutMs: number;
  /** The largest text frame taken, in bytes, checked before parsing. */
  readonly maxFrameBytes: number;
  /** The most bytes of input held for the CLI (frames queued while it starts included). */
  readonly maxPendingInputBytes: number;
  /** True once the relay is closing. */
  readonly closing: boolean;
  /**
   * Spawns a session for a spawn request, owned by the credential, in the
   * client's trace (when its hello carried one).
   *
   * @throws {Refusal} When it is not allowed or fails.
   */
  spawn(
    request: SpawnRequest | undefined,
    credential: Credential,
    trace: TraceContext | undefined,
  ): Promise<RelaySession>;
  /**
   * The live session with this token if the owner owns it, else undefined:
   * an unknown session and another owner's look the same, in about the same time.
   */
  find(token: string, owner: string): RelaySession | undefined;
  /**
   * Starts a hibernated session again (`claude --resume`) if the credential's
   * owner owns it, or one the shared session store holds the record of (its
   * output numbering continuing after `from.after`); resolves with `undefined`
   * for an unknown one or another owner's, alike. Asked only for a
   * credential whose policy allows resumes.
   *
   * @throws {Refusal} `busy` at the relay's maximum, `spawn_failed`.
   */
  wake(
    token: string,
    from: ResumePoint,
    credential: Credential,
    trace: TraceContext | undefined,
  ): Promise<RelaySession | undefined>;
  /**
   * Called once when the connection has a session, or, without one, when its
   * socket has closed (a refused connection stays counted until then).
   */
  settled(connection: RelayConnection): void;
  /** Called once when the connection is done (its socket closed). */
  removeConnection(connection: RelayConnection): void;
}
