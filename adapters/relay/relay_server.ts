/**
 * The relay server: `claude` for clients that cannot spawn processes, over
 * the `duplex-claude.v1` WebSocket protocol.
 *
 * @module
 */

import type { RelayPolicy } from "./_policy.ts";
import { Relay } from "./_relay.ts";
import { checkOptions } from "./_relay_config.ts";
import type { RelayOptions } from "./relay_options.ts";

export type { RelayPolicy };
export * from "./relay_options.ts";

/** A running relay. */
export interface RelayServer {
  /** The WebSocket URL clients connect to, for example `ws://127.0.0.1:8787/v1`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The sessions it holds now (connected or in their grace). */
  readonly sessionCount: number;
  /** The disconnected sessions it keeps hibernated (no process; resumable, see `maxHibernated`). */
  readonly hibernatedCount: number;
  /** Resolves once the relay has closed. */
  readonly closed: Promise<void>;
  /**
   * Closes every connection (`1001`), closes every `claude` (bounded) and
   * stops listening. Idempotent.
   */
  close(): Promise<void>;
  /** Same as {@linkcode RelayServer.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a relay: an HTTP server with `GET /health` and the WebSocket
 * endpoint `/v1`, which spawns one `claude` per session with the
 * subprocess adapter and forwards between the socket and the process.
 *
 * Permissions: `--allow-net` for the address, `--allow-read` for the
 * workspace, and what the subprocess adapter needs (`--allow-run`,
 * `--allow-env`).
 *
 * Each connection is admitted before anything starts: its `Origin` (when
 * `allowedOrigins` is set), then its bearer token: a static one (`tokens`),
 * or a scoped JWT signed with one of `secrets` (`mintRelayToken`), whose
 * policy narrows the relay's. A session is bound to the credential that
 * started it: a resume by any other is answered as for an unknown session.
 *
 * With `telemetry`, each connection and each spawned CLI has a span, in the
 * client's trace when its hello carries one, and the CLI joins that trace.
 *
 * @param options Tokens and secrets, origins, address, workspace, spawn policy and bounds.
 * @returns The running relay.
 * @throws {DuplexError} `invalid_argument` for an unusable value (no tokens nor secrets, a
 * missing workspace, an origin that is not one).
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a `…Ms` option out of range, or a secret shorter than 32 bytes.
 *
 * @example Serve a relay on a free port
 * ```ts
 * import { serveRelay } from "@duplex/claude/relay";
 * import assert from "node:assert/strict";
 *
 * await using relay = serveRelay({
 *   tokens: ["a-long-random-static-token-for-servers"],
 *   workspace: ".",
 *   policy: { models: ["sonnet", "haiku"] },
 * });
 * assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1$/);
 * assert.equal(relay.sessionCount, 0);
 * ```
 */
export function serveRelay(options: RelayOptions): RelayServer {
  return new Relay(checkOptions(options));
}
