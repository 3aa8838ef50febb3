// This module is browser compatible.
/**
 * The options of `remote()`, their defaults, and their checks.
 *
 * @module
 */

import { checkMs } from "../../src/_deadline.ts";
import type { SpawnRequest } from "../../src/wire/wire.ts";
import type { TokenFunction } from "./_token_source.ts";

export type { TokenContext, TokenFunction } from "./_token_source.ts";

/** The constructor of the Web `WebSocket` (replaceable in tests). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

/** Default of {@linkcode RemoteOptions.connectTimeoutMs}. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Default of {@linkcode RemoteOptions.heartbeatMs}. */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Default of {@linkcode RemoteOptions.closeTimeoutMs}. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
/** Default of `reconnect.attempts` in {@linkcode RemoteOptions.reconnect}. */
export const DEFAULT_RECONNECT_ATTEMPTS = 8;
/** Default of `reconnect.initialDelayMs` in {@linkcode RemoteOptions.reconnect}. */
export const DEFAULT_RECONNECT_INITIAL_DELAY_MS = 200;
/** Default of `reconnect.maxDelayMs` in {@linkcode RemoteOptions.reconnect}. */
export const DEFAULT_RECONNECT_MAX_DELAY_MS = 5_000;

/**
 * Options of `remote()`. Every `…Ms` value is a number of milliseconds from
 * 1 (0 where noted) to 2^31-1, or `Infinity` for no time limit at all.
 */
export interface RemoteOptions {
  /**
   * The relay's WebSocket URL, for example `wss://relay.example.com/v1`, or
   * several relays' URLs, for deployments without a load balancer: the
   * first connection tries them in order until one answers; each reconnect
   * tries the relay the session was on first, then the others in order
   * (relays that share a session store resume each other's sessions). A
   * relay that answers with a refusal (a bad token, an unknown session) is
   * not passed over: its answer ends the attempt.
   */
  readonly url: string | readonly string[];
  /**
   * The bearer token the relay accepts (its static token, or one minted
   * with `mintRelayToken`), or a function that returns one. The function is
   * called once per connection attempt: for the first connection and again
   * for each reconnection attempt (shared by the relays that attempt tries),
   * so a session whose token expired reconnects with a fresh one. It is
   * bounded by `connectTimeoutMs` (its `signal` aborts then). A function
   * that throws or rejects fails the attempt with `unauthorized` (its error
   * the cause), one that returns no non-empty string with
   * `invalid_argument`, one too slow with `timeout`; a reconnection attempt
   * that fails so is retried like any other. A token the relay refuses is
   * `unauthorized`, fixed or fresh.
   */
  readonly token: string | TokenFunction;
  /** What to ask the relay to run (its policy decides what is allowed). */
  readonly spawn?: SpawnRequest;
  /** A bound on connecting and on each reconnection attempt. @default {10000} */
  readonly connectTimeoutMs?: number;
  /**
   * Reconnect after a dropped connection, resuming the same `claude` with
   * nothing lost or duplicated (while the relay keeps it: its grace period).
   * `false` ends the transport at the first drop. The delay before attempt
   * `n` (from 0) is `min(maxDelayMs, initialDelayMs * 2^n)`, less up to half
   * of it at random (jitter); both may be 0. A relay that answers `busy`
   * (its session or handshake limits; HTTP 429 / 503 from it or a proxy
   * before the upgrade) sends each attempt on to the next relay, and the
   * next attempt waits at least its `Retry-After`. The same attempts and
   * delays apply to starting a session while every relay is busy.
   *
   * @default {{ attempts: 8, initialDelayMs: 200, maxDelayMs: 5000 }}
   */
  readonly reconnect?: false | {
    readonly attempts?: number;
    readonly initialDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /**
   * Ping interval; a relay silent for twice this long is taken for gone and
   * the connection is dropped (then resumed). `Infinity` sends no pings and
   * never drops a silent relay.
   *
   * @default {15000}
   */
  readonly heartbeatMs?: number;
  /**
   * A bound on `close()` waiting for the relay's exit report (0: do not
   * wait; `Infinity`: wait as long as the connection lasts).
   *
   * @default {10000}
   */
  readonly closeTimeoutMs?: number;
  /** The `WebSocket` constructor to use. @default {globalThis.WebSocket} */
  readonly WebSocket?: WebSocketConstructor;
}

/** The checked options. */
export interface Settings {
  /** The first URL (the one connections are described by until another is used). */
  readonly url: string;
  /** Every URL, in the order given. */
  readonly urls: readonly string[];
  readonly token: string | TokenFunction;
  readonly spawn: SpawnRequest;
  readonly connectTimeoutMs: number;
  readonly attempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly heartbeatMs: number;
  readonly closeTimeoutMs: number;
  readonly Socket: WebSocketConstructor;
}

/**
 * Checks the options of `remote()` and fills in the defaults.
 *
 * @param options The options given.
 * @returns The settings.
 * @throws {TypeError} For a missing or malformed `url`, `token` or `WebSocket`.
 * @throws {RangeError} For a duration or count out of range.
 */
export function checkOptions(options: RemoteOptions): Settings {
  const urls = checkUrls(options?.url);
  const token: unknown = options.token;
  if (typeof token !== "function" && (typeof token !== "string" || token === "")) {
    throw new TypeError(
      "Cannot use remote(): token must be a non-empty string or a function returning one",
    );
  }
  const reconnect = options.reconnect === false ? { attempts: 0 } : options.reconnect ?? {};
  const Socket = options.WebSocket ?? globalThis.WebSocket;
  if (typeof Socket !== "function") {
    throw new TypeError(
      "Cannot use remote(): this runtime has no WebSocket; pass options.WebSocket",
    );
  }
  const attempts = reconnect.attempts ?? DEFAULT_RECONNECT_ATTEMPTS;
  if (!Number.isSafeInteger(attempts) || attempts < 0) {
    throw new RangeError(
      `Cannot use remote(): reconnect.attempts must be an integer >= 0, got ${attempts}`,
    );
  }
  return {
    url: urls[0]!,
    urls,
    token: options.token,
    spawn: options.spawn ?? {},
    connectTimeoutMs: ms("connectTimeoutMs", options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS),
    attempts,
    initialDelayMs: ms(
      "reconnect.initialDelayMs",
      reconnect.initialDelayMs,
      DEFAULT_RECONNECT_INITIAL_DELAY_MS,
      0,
    ),
    maxDelayMs: ms("reconnect.maxDelayMs", reconnect.maxDelayMs, DEFAULT_RECONNECT_MAX_DELAY_MS, 0),
    heartbeatMs: ms("heartbeatMs", options.heartbeatMs, DEFAULT_HEARTBEAT_MS),
    closeTimeoutMs: ms("closeTimeoutMs", options.closeTimeoutMs, DEFAULT_CLOSE_TIMEOUT_MS, 0),
    Socket,
  };
}

function checkUrls(url: unknown): readonly string[] {
  const urls = typeof url === "string" ? [url] : url;
  if (!Array.isArray(urls) || urls.length === 0) {
    throw new TypeError(
      `Cannot use remote(): url must be a ws:// or wss:// URL or a non-empty array of them, got ${
        JSON.stringify(url)
      }`,
    );
  }
  for (const item of urls) {
    if (typeof item !== "string" || !/^wss?:\/\//i.test(item)) {
      throw new TypeError(
        `Cannot use remote(): url must be a ws:// or wss:// URL, got ${JSON.stringify(item)}`,
      );
    }
  }
  return [...new Set(urls as string[])];
}

function ms(name: string, value: number | undefined, fallback: number, min = 1): number {
  return value === undefined ? fallback : checkMs(value, `Cannot use remote(): ${name}`, min);
}
