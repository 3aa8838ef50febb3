// This module is browser compatible.
/*
 * HS256 JSON Web Tokens over WebCrypto: the compact JWS serialization
 * (RFC 7515 section 7.1) with HMAC-SHA-256 (RFC 7518 section 3.2), as the
 * relay's scoped tokens use it (RFC 7519). The one place that signs tokens and
 * checks their form and signature; what the claims mean is checked by
 * `verify_relay_token.ts`.
 *
 * - The header is `{"alg":"HS256","typ":"JWT"}`. Only `alg: "HS256"` is
 *   accepted (never `none`, never another algorithm); `typ`, when present,
 *   must be `JWT`; a `crit` parameter is refused (no extension is understood).
 * - The signature is checked with `crypto.subtle.verify`, which compares in
 *   constant time, against each secret in turn (key rotation).
 * - Secrets are at least 32 bytes of UTF-8 (RFC 7518 section 3.2: a key as long
 *   as the hash).
 */

import { isRecord } from "../_values.ts";
import { base64url, fromBase64url } from "../codec/base64url.ts";

/** The fewest bytes of an HS256 secret (the length of a SHA-256 hash). */
export const MIN_SECRET_BYTES = 32;

/** The longest token taken, in characters (it travels in an HTTP header). */
export const MAX_TOKEN_CHARS = 8192;

/** The header every token of ours has. */
const HEADER = base64url(new TextEncoder().encode('{"alg":"HS256","typ":"JWT"}'));

const encoder = new TextEncoder();

/** What checking a token's form and signature gives: its payload, or why not. */
export type JwsCheck =
  | { readonly ok: true; readonly payload: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks a secret: a string of at least {@linkcode MIN_SECRET_BYTES} bytes.
 *
 * @param value The secret given.
 * @param what Where it was given, for the message: `Cannot mint a relay token: secret`.
 * @returns The secret.
 * @throws {TypeError} If it is not a string.
 * @throws {RangeError} If it is shorter than 32 bytes.
 */
export function checkSecret(value: unknown, what: string): string {
  if (typeof value !== "string") throw new TypeError(`${what} must be a string`);
  const bytes = encoder.encode(value).length;
  if (bytes < MIN_SECRET_BYTES) {
    throw new RangeError(
      `${what} must be at least ${MIN_SECRET_BYTES} bytes (HS256 needs a key as long as its ` +
        `hash), got ${bytes}; make one with crypto.getRandomValues`,
    );
  }
  return value;
}

/**
 * Imports a checked secret as an HMAC-SHA-256 key.
 *
 * @param secret The secret.
 * @returns A key that signs and verifies.
 */
export function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

/**
 * Signs claims as a compact HS256 JWS.
 *
 * @param claims The payload (a JSON object).
 * @param key An HMAC-SHA-256 key.
 * @returns `header.payload.signature`, each part base64url without padding.
 */
export async function signHs256(claims: Record<string, unknown>, key: CryptoKey): Promise<string> {
  const input = `${HEADER}.${base64url(encoder.encode(JSON.stringify(claims)))}`;
  const signature = await crypto.subtle.sign("HMAC", key, encoder.encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

/**
 * Checks a compact JWS: its form, its header and its signature (against
 * each key), then reads its payload.
 *
 * @param token The token as presented.
 * @param keys The HMAC-SHA-256 keys to try, current first.
 * @returns The payload, or the reason the token is refused.
 */
export async function checkHs256(token: string, keys: readonly CryptoKey[]): Promise<JwsCheck> {
  if (token.length > MAX_TOKEN_CHARS) {
    return refused(`the token is longer than ${MAX_TOKEN_CHARS} characters`);
  }
  const parts = token.split(".");
  if (parts.length !== 3) {
    return refused("the token is not a JWT (three base64url parts separated by dots)");
  }
  const [head, body, tail] = parts as [string, string, string];
  const header = jsonPart(head);
  if (header === undefined) return refused("the token's header is not base64url JSON object");
  if (header.alg !== "HS256") {
    return refused(`the token's alg is ${shown(header.alg)}; the relay takes only HS256`);
  }
  if (header.typ !== undefined && !(typeof header.typ === "string" && /^jwt$/i.test(header.typ))) {
    return refused(`the token's typ is ${shown(header.typ)}; expected JWT`);
  }
  if (header.crit !== undefined) {
    return refused("the token's header has crit parameters, which the relay does not understand");
  }
  const signature = fromBase64url(tail);
  if (signature === undefined || signature.length === 0) {
    return refused("the token's signature is not base64url");
  }
  const input = encoder.encode(`${head}.${body}`);
  let valid = false;
  for (const key of keys) {
    if (await crypto.subtle.verify("HMAC", key, signature, input)) valid = true;
  }
  if (!valid) return refused("the token's signature matches none of the relay's secrets");
  const payload = jsonPart(body);
  if (payload === undefined) return refused("the token's payload is not a JSON object");
  return { ok: true, payload };
}

/** A part that holds a JSON object, read; undefined for anything else. */
function jsonPart(part: string): Record<string, unknown> | undefined {
  const bytes = fromBase64url(part);
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function refused(reason: string): JwsCheck {
  return { ok: false, reason };
}

function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.slice(0, 20)) : String(value);
}
