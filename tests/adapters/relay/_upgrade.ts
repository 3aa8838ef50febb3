/**
 * An upgrade request the relay refuses before any WebSocket (a bad
 * credential, a forbidden origin), as a raw HTTP/1.1 client sees it: the
 * status, the headers, and the refusal the body carries.
 */

import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { TOKEN } from "./_client.ts";

/** A refused upgrade: its status, headers and the `error` message of its body. */
export interface RefusedUpgrade {
  readonly status: number;
  readonly headers: Headers;
  readonly kind: string;
  readonly message: string;
}

/** How {@linkcode refusedUpgrade} asks. */
export interface UpgradeAttempt {
  /** The bearer token, in the subprotocol (default: {@linkcode TOKEN}); null for none. */
  readonly token?: string | null;
  /** More request headers (an `Origin`, an `Authorization`). */
  readonly headers?: Record<string, string>;
  /** The subprotocols offered, as they are (instead of the one and the token's). */
  readonly protocols?: readonly string[];
}

/**
 * Sends a WebSocket upgrade request on a raw TCP connection and reads the
 * whole response.
 *
 * @param url The relay's `ws://127.0.0.1:<port>/v1` URL.
 * @param attempt The token and headers.
 * @returns The status and headers, and the refusal of the body.
 * @throws {Error} When the relay upgrades (101) or the body is no `error` message.
 */
export async function refusedUpgrade(
  url: string,
  attempt: UpgradeAttempt = {},
): Promise<RefusedUpgrade> {
  const token = attempt.token === undefined ? TOKEN : attempt.token;
  const protocols = attempt.protocols?.join(", ") ??
    (token === null ? SUBPROTOCOL : `${SUBPROTOCOL}, ${bearerProtocol(token)}`);
  const { hostname, port, pathname } = new URL(url);
  const lines = [
    `GET ${pathname} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    `Sec-WebSocket-Protocol: ${protocols}`,
    ...Object.entries(attempt.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ];
  const response = await exchange(hostname, Number(port), lines.join("\r\n"));
  if (response.status === 101) throw new Error(`The relay upgraded the connection: ${url}`);
  let body: { t?: unknown; kind?: unknown; message?: unknown };
  try {
    body = JSON.parse(response.body);
  } catch {
    throw new Error(`Expected an error message in the body, got ${JSON.stringify(response.body)}`);
  }
  if (body.t !== "error" || typeof body.kind !== "string" || typeof body.message !== "string") {
    throw new Error(`Expected an error message in the body, got ${response.body}`);
  }
  return {
    status: response.status,
    headers: response.headers,
    kind: body.kind,
    message: body.message,
  };
}

/** Writes a request and reads its response (head and a `content-length` body), bounded. */
async function exchange(
  hostname: string,
  port: number,
  request: string,
): Promise<{ status: number; headers: Headers; body: string }> {
  const connection = await Deno.connect({ hostname, port });
  const timer = setTimeout(() => connection.close(), 5_000);
  try {
    await connection.write(new TextEncoder().encode(request));
    const buffer = new Uint8Array(16 * 1024);
    let text = "";
    for (;;) {
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
        if (new TextEncoder().encode(text.slice(end + 4)).length >= length) break;
      }
      const n = await connection.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    const [head = "", ...rest] = text.split("\r\n\r\n");
    const [statusLine = "", ...fields] = head.split("\r\n");
    const headers = new Headers();
    for (const field of fields) {
      const colon = field.indexOf(":");
      if (colon > 0) headers.append(field.slice(0, colon).trim(), field.slice(colon + 1).trim());
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
    return { status, headers, body: rest.join("\r\n\r\n") };
  } finally {
    clearTimeout(timer);
    try {
      connection.close();
    } catch { /* closed by the bound */ }
  }
}
