// This module is browser compatible.
/*
 * Why a relay refused a connection that failed before it opened. The relay
 * refuses a bad token or origin with HTTP 401 / 403 before any WebSocket
 * (so that it never reads an anonymous client's frames), and a WebSocket
 * cannot read that answer: a browser's sees a close 1006, Deno's an error
 * naming the status. So when a connection fails before it opens, the client
 * asks once over plain HTTP: a `GET` of the same URL with the token in an
 * `Authorization` header, which the relay answers as it answered the upgrade
 * (the reason in the body, readable from any origin). A 401 or 403 is a
 * refusal (`unauthorized`, `not_permitted`: no other relay is tried and no
 * reconnection follows). A 429 (a proxy's per-source rate, HAProxy's in
 * examples/relay/haproxy.cfg) or a 503 (the relay's handshakes are full, or
 * it is shutting down) is `busy`, with the `Retry-After` it named: another
 * relay is tried, and the same one again later. Anything else, or no answer,
 * leaves the failure as it was (the relay is down, or unreachable); so does
 * a failure whose words name another status (Deno's "Invalid status code:
 * 404"), without asking.
 */

import { Refusal, type RelayErrorKind } from "../../src/wire/wire.ts";
import { parseRelayMessage } from "../../src/wire/wire_parse.ts";

/** The most of a refusal's body read, in bytes. */
const MAX_BODY_BYTES = 8192;

/** The longest `Retry-After` taken as said, in milliseconds (a longer one is cut to it). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The kinds of refusal an HTTP status before the upgrade stands for. */
const KIND_OF_STATUS: ReadonlyMap<number, RelayErrorKind> = new Map([
  [401, "unauthorized"],
  [403, "not_permitted"],
  [429, "busy"],
  [503, "busy"],
]);

/**
 * Whether a failed connection is worth asking about: its words name no HTTP
 * status (a browser's close 1006), or one that stands for a refusal.
 *
 * @param said The runtime's words for the failure, if any.
 * @returns False when they name a status that is no refusal (404, 502, ...).
 */
export function worthAsking(said: string | undefined): boolean {
  const status = said?.match(/status code:?\s*(\d{3})\b/i)?.[1];
  return status === undefined || KIND_OF_STATUS.has(Number(status));
}

/**
 * The wait a `Retry-After` header asks for: delay seconds, or an HTTP date.
 *
 * @param value The header's value, if any.
 * @param now The time now, in milliseconds since the epoch.
 * @returns Milliseconds from 0 to {@linkcode MAX_RETRY_AFTER_MS}, or undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  // Delay seconds, or an HTTP date (it has a day's name: Date.parse would read "-3" as a year).
  const ms = /^\d+$/.test(text)
    ? Number(text) * 1_000
    : /^[a-z]{3},/i.test(text)
    ? Date.parse(text) - now
    : NaN;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined;
}

/**
 * Asks the relay why it refused a connection.
 *
 * @param url The relay's WebSocket URL (`ws:` or `wss:`).
 * @param token The bearer token the connection offered.
 * @param signal Bounds the request (the connection's own bound).
 * @returns The relay's refusal, or undefined when it did not refuse (or could not be asked).
 */
export async function askWhyRefused(
  url: string,
  token: string,
  signal: AbortSignal,
): Promise<Refusal | undefined> {
  const fetcher = globalThis.fetch;
  if (typeof fetcher !== "function" || signal.aborted) return undefined;
  const http = url.replace(/^ws/i, "http");
  let response: Response;
  try {
    response = await fetcher(http, { headers: { authorization: `Bearer ${token}` }, signal });
  } catch {
    return undefined; // unreachable, a token no header can carry, or the bound
  }
  const kind = KIND_OF_STATUS.get(response.status);
  if (kind === undefined) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  const wait = kind === "busy" ? retryAfterMs(response.headers.get("retry-after")) : undefined;
  const answered = `Cannot connect to the relay: ${http} answered HTTP ${response.status}`;
  try {
    const text = await readSome(response);
    const parsed = parseRelayMessage(text.trim());
    if (parsed.ok && parsed.message.t === "error" && parsed.message.kind === kind) {
      return new Refusal(kind, parsed.message.message, wait);
    }
    // A proxy's page (HTML) says nothing its status does not.
    const said = text.trim().startsWith("<") ? "" : text.trim().slice(0, 200);
    return new Refusal(kind, answered + (said === "" ? "" : `: ${said}`), wait);
  } catch {
    return new Refusal(kind, answered, wait);
  } finally {
    await response.body?.cancel().catch(() => {});
  }
}

/** The start of a response's body as text, at most {@linkcode MAX_BODY_BYTES}. */
async function readSome(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    while (bytes < MAX_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}
