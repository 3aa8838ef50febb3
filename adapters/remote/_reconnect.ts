// This module is browser compatible.
/* Reconnection after a dropped connection: attempts with exponential backoff, each bounded. */

import { sleep } from "../../src/_deadline.ts";
import type { ClientMessage } from "../../src/remote/wire.ts";
import type { Settings } from "./remote_options.ts";
import { type Connected, messageOf, openSocket, Refusal } from "./_socket.ts";

/** How reconnecting ended: a new connection, the relay's refusal, or no connection at all. */
export type Reconnected =
  | { readonly kind: "connected"; readonly connected: Connected }
  | { readonly kind: "refused"; readonly refusal: Refusal }
  | { readonly kind: "failed"; readonly reason: string };

/**
 * Tries to connect again with `hello` (a resume), up to `settings.attempts`
 * times; before attempt `n` (from 0) waits `min(maxDelayMs, initialDelayMs * 2^n)`.
 *
 * @param settings The attempts, delays and connection settings.
 * @param hello The resume hello.
 * @param signal Stops the attempts (the transport ended): rejects with its reason.
 * @returns The outcome; `failed` names why the last attempt failed.
 */
export async function reconnect(
  settings: Settings,
  hello: ClientMessage,
  signal: AbortSignal,
): Promise<Reconnected> {
  const { attempts, initialDelayMs, maxDelayMs } = settings;
  let last = "no attempt was made";
  for (let attempt = 0; attempt < attempts; attempt++) {
    await sleep(Math.min(maxDelayMs, initialDelayMs * 2 ** attempt), { signal });
    try {
      return { kind: "connected", connected: await openSocket(settings, hello, signal) };
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof Refusal) return { kind: "refused", refusal: error };
      last = messageOf(error) ?? String(error);
    }
  }
  return { kind: "failed", reason: last };
}
