// This module is browser compatible.
/**
 * The one error class of the library, {@linkcode DuplexError}, and its kinds.
 *
 * @module
 */

/**
 * What went wrong, as a string tag a caller can switch on.
 *
 * - `turn_in_flight`: `send` was called while another turn runs.
 * - `cannot_defer_again`: `respondToPermission` was given `{ behavior: "defer" }`.
 * - `closed`: the session was closed (by the caller) before the operation finished.
 * - `process_exited`: the CLI (or the remote peer) ended; `exit` says how.
 * - `timeout`: a `timeoutMs` given to an operation elapsed.
 * - `aborted`: an operation was aborted by something other than the caller's own signal.
 * - `protocol`: the peer sent something the protocol does not allow.
 * - `control_failed`: the CLI answered a control request with an error.
 * - `cli_not_found`: the `claude` binary could not be found.
 * - `not_permitted`: the runtime refused a permission (for Deno: a missing `--allow-*` flag).
 * - `line_too_long`: a line exceeded the configured maximum length.
 * - `unauthorized`: a relay refused the credentials.
 * - `lagged`: a subscriber with the `"error"` overflow policy fell behind.
 * - `invalid_argument`: the caller passed a value the library cannot use.
 * - `not_found`: the session, conversation or subagent named by id does not exist (in the
 *   CLI's files, the store, the pool or the relay); the message names the id and where it looked.
 * - `claim_refused`: a parked spare refused `claim_session`; `errorCode` holds the CLI's
 *   reason token (`cwd_not_found`, `env_key_not_claimable`, `permission_mode_not_claimable`, …).
 * - `pool_exhausted`: a `SessionPool` has no live slot and its waiting line is full.
 * - `resume_failed`: a conversation could not be resumed in a new process (`exit` says how).
 * - `store_failed`: a session store's backend failed (a database down, an SQL error); `cause`
 *   holds the driver's error.
 * - `unsupported`: the CLI does not support what the session's options need, so the session
 *   refuses to run on it: a hook asks for `onFailure: "block"` and the CLI's `initialize` reply
 *   does not confirm it (`hook_on_failure_supported: true`, hooks applied). The message names the
 *   hook events and what the reply lacked; no user line was sent, every `send` is refused, and
 *   the session ends (`subtype` is `"initialize"`). Or the host lacks what an option needs:
 *   `isolation: "bubblewrap"` with no `bwrap` on PATH (or not on Linux), the message naming the
 *   package to install; the CLI never runs unsandboxed instead.
 */
export type DuplexErrorKind =
  | "turn_in_flight"
  | "cannot_defer_again"
  | "closed"
  | "process_exited"
  | "timeout"
  | "aborted"
  | "protocol"
  | "control_failed"
  | "cli_not_found"
  | "not_permitted"
  | "line_too_long"
  | "unauthorized"
  | "lagged"
  | "invalid_argument"
  | "not_found"
  | "claim_refused"
  | "pool_exhausted"
  | "resume_failed"
  | "store_failed"
  | "unsupported";

/** How a transport's peer ended: a process exit, or a closed connection. */
export interface TransportExit {
  /** The process exit code, or `null` when it ended by a signal or is not a process. */
  readonly code: number | null;
  /** The signal that ended the process (`"SIGTERM"`), or `null`. */
  readonly signal: string | null;
  /** A connection close code (WebSocket), when the transport has one. */
  readonly closeCode?: number;
  /** A human-readable reason, when the transport knows one. */
  readonly reason?: string;
  /** The last lines the peer wrote to stderr (bounded), possibly empty. */
  readonly stderrTail: string;
  /** True when the end was asked for by our side (`close()`), not chosen by the peer. */
  readonly requested: boolean;
}

/** Options of the {@linkcode DuplexError} constructor. */
export interface DuplexErrorOptions {
  /** The underlying error or reason. */
  cause?: unknown;
  /** How the peer ended, for `process_exited` and `closed`. */
  exit?: TransportExit;
  /** The control request id involved, for `control_failed` and permission errors. */
  requestId?: string;
  /** The control request subtype involved, for `control_failed`. */
  subtype?: string;
  /** The CLI's `error_code` for `control_failed` (for example `unsupported_request`). */
  errorCode?: string;
  /** A truncated excerpt of the offending input, for `protocol` and `line_too_long`. */
  excerpt?: string;
}

/**
 * The error every operation of the library rejects with, except for caller
 * aborts (which reject with the caller's `signal.reason`, unchanged) and
 * argument type errors.
 *
 * @example Switch on the kind
 * ```ts
 * import { DuplexError } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const error = new DuplexError("turn_in_flight", "Cannot send: a turn is already running");
 * assert.ok(error instanceof Error);
 * assert.equal(error.name, "DuplexError");
 * assert.equal(error.kind, "turn_in_flight");
 * ```
 */
export class DuplexError extends Error {
  /** What went wrong. */
  readonly kind: DuplexErrorKind;
  /** How the peer ended, when the error comes from its end. */
  readonly exit: TransportExit | undefined;
  /** The control request id involved, if any. */
  readonly requestId: string | undefined;
  /** The control request subtype involved, if any. */
  readonly subtype: string | undefined;
  /** The CLI's `error_code`, if it sent one. */
  readonly errorCode: string | undefined;
  /** A truncated excerpt of the offending input, if any. */
  readonly excerpt: string | undefined;

  /**
   * Makes an error of the given kind.
   *
   * @param kind What went wrong.
   * @param message What happened and what to do about it.
   * @param options The cause and the data of the error.
   */
  constructor(kind: DuplexErrorKind, message: string, options: DuplexErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DuplexError";
    this.kind = kind;
    this.exit = options.exit;
    this.requestId = options.requestId;
    this.subtype = options.subtype;
    this.errorCode = options.errorCode;
    this.excerpt = options.excerpt;
  }
}

/**
 * Tells whether a value is a {@linkcode DuplexError}, optionally of one kind.
 *
 * @param value Anything caught.
 * @param kind The kind to match, if any.
 * @returns True for a `DuplexError` (of that kind).
 *
 * @example Narrow a caught value
 * ```ts
 * import { DuplexError, isDuplexError } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const caught: unknown = new DuplexError("closed", "Cannot send: the session is closed");
 * assert.ok(isDuplexError(caught, "closed"));
 * assert.ok(!isDuplexError(caught, "timeout"));
 * ```
 */
export function isDuplexError(value: unknown, kind?: DuplexErrorKind): value is DuplexError {
  return value instanceof DuplexError && (kind === undefined || value.kind === kind);
}

/**
 * Shortens text for an error message: at most `max` characters, with the cut marked.
 *
 * @param text The text to shorten.
 * @param max The most characters to keep.
 * @returns The text, or its head followed by `…(N more)`.
 */
export function excerptOf(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more)`;
}

/**
 * Describes how a peer ended, for an error message.
 *
 * @param exit How the peer ended.
 * @returns For example `exit code 1` or `signal SIGKILL`, with the stderr tail's last line.
 */
export function describeExit(exit: TransportExit): string {
  const how = exit.signal !== null
    ? `signal ${exit.signal}`
    : exit.code !== null
    ? `exit code ${exit.code}`
    : exit.closeCode !== undefined
    ? `close code ${exit.closeCode}`
    : "end of stream";
  const reason = exit.reason ? ` (${exit.reason})` : "";
  const lastLine = exit.stderrTail.trimEnd().split("\n").at(-1) ?? "";
  return lastLine ? `${how}${reason}; stderr: ${excerptOf(lastLine, 300)}` : `${how}${reason}`;
}
