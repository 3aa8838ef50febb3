// This module is browser compatible.
/*
 * Connecting to one of several relays, and reconnection after a dropped
 * connection: attempts with exponential backoff, each bounded, each trying
 * the relays in turn.
 */

import { sleep } from "../../src/_deadline.ts";
import type { ClientMessage } from "../../src/wire/wire.ts";
import type { Settings } from "./remote_options.ts";
import { type Connected, openSocket, reasonOf, Refusal } from "./_socket.ts";
import { tokenFor } from "./_token_source.ts";

/** How reconnecting ended: a new connection, the relay's refusal, or no connection at all. */
export type Reconnected =
  | { readonly kind: "connected"; readonly connected: Connected; readonly url: string }
  | { readonly kind: "refused"; readonly refusal: Refusal; readonly url: string }
  | { readonly kind: "failed"; readonly reason: string };

/** A connection to one of the relays, and which. */
export interface ConnectedTo {
  readonly connected: Connected;
  readonly url: string;
}

/** A relay's refusal, and which relay refused. */
export class RefusedBy extends Error {
  /**
   * @param refusal The relay's refusal.
   * @param url The relay's URL.
   */
  constructor(readonly refusal: Refusal, readonly url: string) {
    super(refusal.message);
    this.name = "RefusedBy";
  }
}

/**
 * The relays' URLs in the order to try: `first` (the one the session was
 * on), then the others as given.
 *
 * @param urls Every URL, as given.
 * @param first The URL to try first, if any.
 * @returns The order.
 */
export function tryOrder(urls: readonly string[], first?: string): string[] {
  if (first === undefined || !urls.includes(first)) return [...urls];
  return [first, ...urls.filter((url) => url !== first)];
}

/**
 * Connects to the first relay that answers, trying `urls` in order; a
 * refusal ends the attempt (another relay would say the same, or worse, not
 * know the session). The token is asked for once, before the first relay.
 *
 * @param settings The connection settings.
 * @param urls The URLs, in the order to try.
 * @param hello The first message.
 * @param signal Aborting it rejects with its reason.
 * @returns The connection and its relay's URL.
 * @throws {RefusedBy} When a relay refused.
 * @throws {DuplexError} When the token function gave no token (`tokenFor`).
 * @throws {unknown} The last relay's failure when none answered.
 */
export async function connectAny(
  settings: Settings,
  urls: readonly string[],
  hello: ClientMessage,
  signal?: AbortSignal,
): Promise<ConnectedTo> {
  const token = await tokenFor(settings.token, settings.connectTimeoutMs, urls[0]!, signal);
  let last: unknown;
  for (const url of urls) {
    try {
      return { connected: await openSocket({ ...settings, url, token }, hello, signal), url };
    } catch (error) {
      signal?.throwIfAborted();
      if (error instanceof Refusal) throw new RefusedBy(error, url);
      last = error;
    }
  }
  throw last;
}

/**
 * Tries to connect again with `hello` (a resume), up to `settings.attempts`
 * times; before attempt `n` (from 0) waits `min(maxDelayMs, initialDelayMs * 2^n)`.
 * Each attempt tries the relay the session was on first, then the others.
 *
 * @param settings The attempts, delays and connection settings.
 * @param hello The resume hello.
 * @param signal Stops the attempts (the transport ended): rejects with its reason.
 * @param current The URL of the relay the session was on.
 * @returns The outcome; `failed` names why the last attempt failed.
 */
export async function reconnect(
  settings: Settings,
  hello: ClientMessage,
  signal: AbortSignal,
  current: string = settings.url,
): Promise<Reconnected> {
  const { attempts, initialDelayMs, maxDelayMs } = settings;
  const order = tryOrder(settings.urls, current);
  let last = "no attempt was made";
  for (let attempt = 0; attempt < attempts; attempt++) {
    await sleep(Math.min(maxDelayMs, initialDelayMs * 2 ** attempt), { signal });
    try {
      const { connected, url } = await connectAny(settings, order, hello, signal);
      return { kind: "connected", connected, url };
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof RefusedBy) {
        return { kind: "refused", refusal: error.refusal, url: error.url };
      }
      last = reasonOf(error);
    }
  }
  return { kind: "failed", reason: last };
}
