/**
 * The options of {@linkcode serveRelay} and their defaults.
 *
 * @module
 */

import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { RelayPolicy } from "./relay_policy.ts";

/** Default of {@linkcode RelayOptions.graceMs}. */
export const DEFAULT_GRACE_MS = 30_000;
/** Default of {@linkcode RelayOptions.bufferBytes}. */
export const DEFAULT_BUFFER_BYTES = 8 * 1024 * 1024;
/** Default of {@linkcode RelayOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 16;
/** Default of {@linkcode RelayOptions.heartbeatMs}. */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Default of {@linkcode RelayOptions.helloTimeoutMs}. */
export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;

/** Options of {@linkcode serveRelay}. */
export interface RelayOptions {
  /** The bearer tokens clients may present (at least one). */
  readonly tokens: readonly string[];
  /** The address to listen on. Default: `"127.0.0.1"`. */
  readonly hostname?: string;
  /** The port to listen on; 0 picks a free one. Default: 0. */
  readonly port?: number;
  /**
   * The base options of every spawned `claude` (binary, environment, grace
   * periods, fixed flags). `cwd` is replaced by the session's folder in the
   * workspace; the policy decides what clients may add.
   */
  readonly cli?: SubprocessOptions;
  /**
   * The root folder of the sessions: a client's `spawn.cwd` is resolved inside
   * it (and refused when it leads outside, symbolic links followed). It is
   * also the default working directory.
   */
  readonly workspace: string;
  /** What clients may choose. */
  readonly policy?: RelayPolicy;
  /**
   * How long a disconnected session's process is kept for a resume, in ms
   * (0 to 2^31-1, or `Infinity`: until the relay closes). Default: 30 000.
   */
  readonly graceMs?: number;
  /**
   * The most bytes of unacknowledged output kept per session for a resume.
   * Also the flow-control window: with half of it unacknowledged the relay
   * stops reading the CLI's stdout until the client acknowledges (the CLI
   * then waits on its pipe, as it would for a slow local reader), so stdout
   * is never dropped, and neither the buffer nor a socket's send queue grows
   * past it, however slowly a client reads. Default: 8 MiB.
   */
  readonly bufferBytes?: number;
  /** The most sessions at once (disconnected ones in their grace included). Default: 16. */
  readonly maxSessions?: number;
  /**
   * How often the relay pings each connection, in ms; a connection that
   * sends nothing for twice as long is dropped (its session waits for a
   * resume); 1 to 2^31-1, or `Infinity` for no heartbeat. Default: 15 000.
   */
  readonly heartbeatMs?: number;
  /**
   * How long a new connection has to send its hello, in ms (1 to 2^31-1, or
   * `Infinity` for no limit). Default: 10 000.
   */
  readonly helloTimeoutMs?: number;
  /** Aborting it closes the relay. */
  readonly signal?: AbortSignal;
}
