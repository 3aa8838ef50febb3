/**
 * The web approvals server's defences, kept apart so they are easy to read
 * and to copy: who may call it (a per-run token, compared in constant time;
 * the `Host` a DNS-rebinding page would change; the `Origin` and
 * `Sec-Fetch-Site` a cross-site page would send), bounded JSON bodies, and
 * the headers every answer carries.
 *
 * @module
 */

/** An HTTP answer to give instead of going on. */
export class HttpError extends Error {
  /** The status code. */
  readonly status: number;

  /**
   * @param status The status code.
   * @param message What went wrong, for the caller.
   */
  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

/** Headers of every answer: nothing cached, sniffed, framed or referred. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-resource-policy": "same-origin",
};

/**
 * The page's Content-Security-Policy: only its own inline script and style
 * (by nonce), requests only to itself, never framed, and Trusted Types
 * required, so any `innerHTML = string` in the page throws instead of
 * parsing model or tool text as HTML.
 *
 * @param nonce The nonce of this answer's inline script and style.
 * @returns The header's value.
 */
export function pagePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join("; ");
}

/**
 * A JSON answer.
 *
 * @param status The status code.
 * @param body The value.
 * @returns The response.
 */
export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...COMMON_HEADERS, "content-type": "application/json; charset=utf-8" },
  });
}

/**
 * A random token of 32 bytes, base64url.
 *
 * @returns The token.
 */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * Compares two tokens in time that depends only on their length.
 *
 * @param given What the caller sent.
 * @param expected The token.
 * @returns Whether they are equal.
 */
export function sameToken(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** What {@linkcode checkCaller} checks a request against. */
export interface CallerPolicy {
  /** The per-run token. */
  readonly token: string;
  /** The server's origin, `http://127.0.0.1:<port>`, for messages. */
  readonly origin: string;
  /** `Host` values accepted; empty accepts any (a wildcard bind). */
  readonly hosts: ReadonlySet<string>;
}

/**
 * Refuses a request that another site, or a rebound DNS name, could have
 * made: a `Host` that is not ours, a cross-site `Sec-Fetch-Site`, an
 * `Origin` other than the `Host` it was sent to (requests without one, from
 * scripts, pass), and,
 * unless `tokenOptional`, a missing or wrong token (`Authorization: Bearer`,
 * or, on a GET, `?token=`, where a header cannot be set: `EventSource`).
 *
 * @param request The request.
 * @param policy The token, origin and hosts.
 * @param tokenOptional True for the page itself, which holds no data.
 * @throws {HttpError} 403 or 401 saying why.
 */
export function checkCaller(request: Request, policy: CallerPolicy, tokenOptional = false): void {
  const host = request.headers.get("host") ?? "";
  if (policy.hosts.size > 0 && !policy.hosts.has(host.toLowerCase())) {
    throw new HttpError(403, `Cannot serve host ${JSON.stringify(host)}: use ${policy.origin}`);
  }
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") {
    throw new HttpError(403, `Cannot serve a ${site} request: open ${policy.origin} itself`);
  }
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== `http://${host}`) {
    throw new HttpError(403, `Cannot serve origin ${JSON.stringify(origin)}`);
  }
  if (tokenOptional) return;
  const bearer = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
  // In the URL only where a header cannot be set (an `EventSource` GETs), never on a POST.
  const inUrl = request.method === "GET" ? new URL(request.url).searchParams.get("token") : null;
  const given = bearer ?? inUrl ?? "";
  if (!sameToken(given, policy.token)) {
    throw new HttpError(401, "Cannot serve the request: open the URL the server printed");
  }
}

/**
 * Reads a JSON object body of at most `maxBytes`, within `timeoutMs`.
 *
 * @param request The request.
 * @param maxBytes The largest body accepted.
 * @param timeoutMs How long the client may take to send it.
 * @returns The object.
 * @throws {HttpError} 415 for another content type, 413 when too large, 408
 *   when too slow, 400 when it is not a JSON object in UTF-8.
 */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, "Cannot read the body: send application/json");
  }
  if (Number(request.headers.get("content-length") ?? 0) > maxBytes) {
    throw new HttpError(413, `Cannot read the body: over ${maxBytes} bytes`);
  }
  const reader = request.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    reader?.cancel().catch(() => {});
  }, timeoutMs);
  try {
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new HttpError(413, `Cannot read the body: over ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, "Cannot read the body: the connection failed");
  } finally {
    clearTimeout(timer);
  }
  if (expired) {
    throw new HttpError(408, "Cannot read the body: it did not come in time");
  }
  let value: unknown;
  try {
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) bytes.set(chunk, (at += chunk.byteLength) - chunk.byteLength);
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError(400, "Cannot read the body: it is not JSON in UTF-8");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "Cannot read the body: it must be a JSON object");
  }
  return value as Record<string, unknown>;
}
