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
 * reconnection follows); anything else, or no answer, leaves the failure as
 * it was (the relay is down, or unreachable).
 */

import { Refusal } from "../../src/wire/wire.ts";
import { parseRelayMessage } from "../../src/wire/wire_parse.ts";

/** The most of a refusal's body read, in bytes. */
const MAX_BODY_BYTES = 8192;

/** The kinds of refusal an HTTP status before the upgrade stands for. */
const KIND_OF_STATUS: ReadonlyMap<number, "unauthorized" | "not_permitted"> = new Map([
  [401, "unauthorized"],
  [403, "not_permitted"],
]);

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
  try {
    if (kind === undefined) return undefined;
    const text = await readSome(response);
    const parsed = parseRelayMessage(text.trim());
    if (parsed.ok && parsed.message.t === "error" && parsed.message.kind === kind) {
      return new Refusal(kind, parsed.message.message);
    }
    const said = text.trim().slice(0, 200);
    return new Refusal(
      kind,
      `Cannot connect to the relay: ${http} answered HTTP ${response.status}` +
        (said === "" ? "" : `: ${said}`),
    );
  } catch {
    return kind === undefined ? undefined : new Refusal(
      kind,
      `Cannot connect to the relay: ${http} answered HTTP ${response.status}`,
    );
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
