// This module is browser compatible.
/**
 * The transport seam: what a session needs from whatever carries the CLI's
 * lines (a subprocess, a WebSocket, an in-memory script).
 *
 * Transports only move lines and report how the peer ended. Framing, bounds,
 * decoding and every protocol decision live once, in the core.
 *
 * @module
 */

import type { LaunchedCli } from "../compat/cli_check.ts";
import type { MirrorTarget } from "../store/mirror_target.ts";
import type { TransportExit } from "../errors.ts";

export type { TransportExit };

/**
 * An open connection to something that speaks the CLI's stream-json protocol.
 *
 * Contract (checked by `runTransportConformance` in `@duplex/claude/testing`):
 * - `readable` yields what the peer writes to stdout as `Uint8Array` chunks
 *   cut anywhere (the core splits them into lines; a transport that receives
 *   whole messages encodes each with its `\n`). A chunk is never changed after
 *   it was enqueued (the core may keep it).
 * - `readable` and `stderr` have ended (everything the peer wrote is queued
 *   in them) by the time `closed` resolves: the transport bounds its own drain
 *   after the peer's end (a descendant of a process may hold a pipe open), and
 *   the session relies on it.
 * - `write(line)` sends one JSON text (no newline; the transport frames it).
 *   Writes are delivered in call order. After the peer has gone, it rejects
 *   with a `DuplexError` of kind `process_exited`.
 * - `endInput()` signals end of input (stdin EOF): the CLI finishes its turn
 *   and exits. Idempotent. Later writes reject with a `DuplexError` of kind
 *   `closed`.
 * - `closed` resolves exactly once, with how the peer ended, and never rejects.
 * - `close()` ends the peer (politely first, then by force), is idempotent,
 *   finishes in bounded time and resolves with the same value as `closed`.
 * - `answered(uuid)`, when a transport has it, is told each user line a
 *   `result` the session read answers; it must not throw.
 */
export interface Transport {
  /** Output of the peer: byte chunks cut anywhere. */
  readonly readable: ReadableStream<Uint8Array>;
  /** The peer's diagnostic output (stderr), one line per chunk, if it has any. */
  readonly stderr?: ReadableStream<string>;
  /** What the transport is and what it knows about its peer. */
  readonly info: TransportInfo;
  /** Resolves once, with how the peer ended. Never rejects. */
  readonly closed: Promise<TransportExit>;
  /**
   * Sends one line.
   *
   * @param line One JSON text, without a trailing newline.
   */
  write(line: string): Promise<void>;
  /** Ends the peer's input (stdin EOF) and leaves it to exit by itself. */
  endInput(): Promise<void>;
  /** Ends the peer (politely, then by force) in bounded time. Idempotent. */
  close(): Promise<TransportExit>;
  /** Same as {@linkcode Transport.close}. */
  [Symbol.asyncDispose](): Promise<void>;
  /**
   * The session read a `result`: called once for each user line it answers
   * (its `user_message_uuids`, or `user_message_uuid`), in order. A transport
   * that resumes its peer elsewhere keeps track: the remote transport names
   * the last one when it resumes, so that a relay resuming the conversation
   * from the session store waits until the store holds that turn instead of
   * resuming a history without it, and ends the turns of lines a CLI that is
   * gone took and never answered. Optional; the session calls it when present.
   *
   * @param uuid The user line's uuid.
   */
  answered?(uuid: string): void;
}

/** What a transport tells about itself and its peer. */
export interface TransportInfo {
  /** A short name of the transport kind, for example `"subprocess"`, `"remote"`, `"scripted"`. */
  readonly kind: string;
  /** The peer's process id, when the transport started a process. */
  readonly pid?: number;
  /** A human-readable description of the peer (command line, URL, transcript name). */
  readonly description?: string;
  /**
   * Each `readable` chunk has a buffer of its own that nothing else holds
   * after it was enqueued (true of a subprocess's stdout). The session may
   * then free a chunk's memory as soon as it is done with it, instead of
   * waiting for the garbage collector: this bounds the memory an over-long
   * line costs. Leave it unset when chunks share buffers or are also kept
   * elsewhere (a `tee()`d stream, a recorder).
   */
  readonly freshChunks?: boolean;
  /**
   * What a transport that started the CLI asked of it and learned about it:
   * the permission mode it passed (`--permission-mode`; the session ends when
   * the CLI reports another before its first turn) and the CLI's version.
   * Transports that start no CLI leave it unset (nothing is checked).
   */
  readonly cli?: LaunchedCli;
  /**
   * Fields the CLI reads only from `initialize` that the transport's own
   * options set (for example the subprocess adapter's `skills`): the session
   * sends them in its `initialize`, under its own fields.
   */
  readonly initialize?: Readonly<Record<string, unknown>>;
  /**
   * Mirror the CLI's transcript to a store: the transport started the CLI
   * with `--session-mirror`, and the session appends the entries of its
   * `transcript_mirror` frames (which then never reach subscribers).
   */
  readonly mirror?: MirrorTarget;
}

/** What a transport factory receives from the session that opens it. */
export interface TransportOpenContext {
  /** Aborted when the session gives up on opening (the caller's start signal). */
  readonly signal: AbortSignal;
  /**
   * The W3C trace context of the session's span, when the session records
   * telemetry: a transport hands it to the CLI (`TRACEPARENT` and
   * `TRACESTATE` in its environment) so the CLI's own spans join the trace.
   */
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string };
}

/**
 * Opens a transport. The session calls it once per start; a factory may be
 * called again to restart.
 */
export type TransportFactory = (context: TransportOpenContext) => Promise<Transport>;
