// This module is browser compatible.
/*
 * Connecting to one of several relays, and reconnection after a dropped
 * connection: attempts with exponential backoff and jitter, each bounded,
 * each trying the relays in turn; a busy relay (or proxy) passes the attempt
 * to the next relay, and is tried again after the wait it asked for.
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
 * The wait before attempt `n` (from 0): `min(maxDelayMs, initialDelayMs * 2^n)`,
 * less up to half of it at random (so that the clients of a relay that died
 * do not all come back in the same instant), and never less than a busy
 * relay's `Retry-After`.
 *
 * @param settings The delays.
 * @param attempt The attempt, from 0.
 * @param retryAfterMs What the last busy refusal asked for, if anything.
 * @param random A number in [0, 1).
 * @returns Milliseconds.
 */
export function backoffMs(
  settings: Pick<Settings, "initialDelayMs" | "maxDelayMs">,
  attempt: number,
  retryAfterMs = 0,
  random: number = Math.random(),
): number {
  const full = Math.min(settings.maxDelayMs, settings.initialDelayMs * 2 ** attempt);
  return Math.max(retryAfterMs, full - (full / 2) * random);
}

/**
 * Connects to the first relay that answers, trying `urls` in order. A
 * relay that is `busy` sends the attempt on to the next; another refusal
 * ends it (another relay would say the same, or worse, not know the
 * session). The token is asked for once, before the first relay.
 *
 * @param settings The connection settings.
 * @param urls The URLs, in the order to try.
 * @param hello The first message.
 * @param signal Aborting it rejects with its reason.
 * @returns The connection and its relay's URL.
 * @throws {RefusedBy} When a relay refused; `busy` when none answered and one was busy.
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
  let busy: RefusedBy | undefined;
  for (const url of urls) {
    try {
      return { connected: await openSocket({ ...settings, url, token }, hello, signal), url };
    } catch (error) {
      signal?.throwIfAborted();
      if (!(error instanceof Refusal)) last = error;
      else if (error.kind === "busy") busy ??= new RefusedBy(error, url);
      else throw new RefusedBy(error, url);
    }
  }
  throw busy ?? last;
}

/**
 * Starts a session: {@linkcode connectAny}, and while every relay is
 * `busy`, again after {@linkcode backoffMs}, up to `settings.attempts`
 * more times.
 *
 * @param settings The attempts, delays and connection settings.
 * @param hello The first message.
 * @param signal Aborting it rejects with its reason.
 * @returns The connection and its relay's URL.
 * @throws {RefusedBy} When a relay refused, or was still busy after the last attempt.
 * @throws {unknown} As {@linkcode connectAny}.
 */
export async function connectPatiently(
  settings: Settings,
  hello: ClientMessage,
  signal?: AbortSignal,
): Promise<ConnectedTo> {
  for (let attempt = 0;; attempt++) {
    try {
      return await connectAny(settings, settings.urls, hello, signal);
    } catch (error) {
      if (!isBusy(error) || attempt >= settings.attempts) throw error;
      await sleep(backoffMs(settings, attempt, error.refusal.retryAfterMs), { signal });
    }
  }
}

/**
 * Tries to connect again with `hello` (a resume), up to `settings.attempts`
 * times, waiting {@linkcode backoffMs} before each. Each attempt tries the
 * relay the session was on first, then the others; every relay `busy` is
 * one more failed attempt, any other refusal ends the attempts.
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
  const order = tryOrder(settings.urls, current);
  let last = "no attempt was made";
  let retryAfter: number | undefined;
  for (let attempt = 0; attempt < settings.attempts; attempt++) {
    await sleep(backoffMs(settings, attempt, retryAfter), { signal });
    retryAfter = undefined;
    try {
      const { connected, url } = await connectAny(settings, order, hello, signal);
      return { kind: "connected", connected, url };
    } catch (error) {
      signal.throwIfAborted();
      if (isBusy(error)) {
        retryAfter = error.refusal.retryAfterMs;
        last = `busy: ${error.refusal.message}`;
      } else if (error instanceof RefusedBy) {
        return { kind: "refused", refusal: error.refusal, url: error.url };
      } else {
        last = reasonOf(error);
      }
    }
  }
  return { kind: "failed", reason: last };
}

function isBusy(error: unknown): error is RefusedBy {
  return error instanceof RefusedBy && error.refusal.kind === "busy";
}
