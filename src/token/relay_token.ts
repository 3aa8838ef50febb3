// This module is browser compatible.
/**
 * Short-lived scoped tokens for the relay: {@linkcode mintRelayToken}.
 *
 * A scoped token is a standard JSON Web Token (RFC 7519): a compact JWS
 * signed with HMAC-SHA-256 (`alg: "HS256"`) by a secret the application
 * server shares with the relay (`serveRelay({ secrets })`). Its claims:
 *
 * - `sub`: the subject (the user the application vouches for). Every relay
 *   session is bound to it: only a token of the same subject can resume it.
 * - `iat`, `exp` (and optionally `nbf`): NumericDates, in seconds. The
 *   relay refuses a token without `iat`, and one whose lifetime (`exp - iat`)
 *   is over its `maxTokenLifetimeSeconds` (by default a day, the most minted
 *   here, plus the clock skew).
 * - `jti`: a random id.
 * - `policy` (optional): a {@linkcode RelayTokenPolicy} that narrows the
 *   relay's own policy; it can never widen it.
 *
 * Minting uses only WebCrypto, so it runs wherever the application does: a
 * server, an edge worker, a browser (though a browser should never hold the
 * secret). Any JWT library verifies these tokens, and the relay verifies
 * tokens any JWT library signs with HS256.
 *
 * @module
 */

import { checkSecret, hmacKey, signHs256 } from "./_jwt.ts";
import { checkTokenPolicy } from "./_token_policy.ts";
import type { RelayPolicy } from "./relay_policy.ts";

export type { RelayPolicy };

/** The longest lifetime {@linkcode mintRelayToken} gives a token, in seconds (one day). */
export const MAX_RELAY_TOKEN_TTL_SECONDS = 86_400;

/**
 * What a scoped token lets its holder do, within the relay's own policy: the
 * fields of the relay's {@linkcode RelayPolicy}, and `cwd`. Each field
 * narrows the relay's (lists are intersected, `maxTurns` is the smaller,
 * flags must be true on both sides: `false` narrows), and a field left out
 * narrows nothing. As with the relay's policy, the lists bound what a holder
 * may name: one that names no model or mode gets the CLI's (or the relay's
 * `cli`) default.
 */
export interface RelayTokenPolicy extends RelayPolicy {
  /**
   * A folder of the relay's workspace (relative to it) that confines the
   * holder: its sessions run there, or in a sub-folder of it the holder names.
   */
  readonly cwd?: string;
}

/** Options of {@linkcode mintRelayToken}. */
export interface MintRelayTokenOptions {
  /** The secret shared with the relay (one of its `secrets`): at least 32 bytes. */
  readonly secret: string;
  /** The subject: who the token is for (1 to 256 characters). Sessions are bound to it. */
  readonly subject: string;
  /** How long the token is valid, in seconds (1 to {@linkcode MAX_RELAY_TOKEN_TTL_SECONDS}). */
  readonly ttlSeconds: number;
  /** What the holder may do, narrowing the relay's policy. @default {{}} */
  readonly policy?: RelayTokenPolicy;
  /** When the token becomes valid (`nbf`), in seconds since the epoch. @default {undefined} */
  readonly notBefore?: number;
  /** When the token is issued (`iat`), in seconds since the epoch. @default {the current time} */
  readonly issuedAt?: number;
  /** The token's id (`jti`). @default {crypto.randomUUID()} */
  readonly id?: string;
}

/**
 * Mints a short-lived scoped token for the relay: an HS256 JWT with `sub`,
 * `iat`, `exp`, `jti`, optionally `nbf`, and the `policy` claim. The
 * application server mints one per user and hands it to the browser or
 * worker, which passes it as `remote({ token })`; the relay's long-lived
 * secret never leaves the server.
 *
 * @example Mint a token for one user, narrowed to one model
 * ```ts
 * import { mintRelayToken } from "@duplex/claude/token";
 * import assert from "node:assert/strict";
 *
 * const secret = "a-secret-of-at-least-32-bytes-0123456789";
 * const token = await mintRelayToken({
 *   secret,
 *   subject: "user-42",
 *   ttlSeconds: 300,
 *   policy: { models: ["haiku"], maxTurns: 5 },
 * });
 * const [, payload] = token.split(".");
 * const claims = JSON.parse(atob(payload!.replaceAll("-", "+").replaceAll("_", "/")));
 * assert.equal(claims.sub, "user-42");
 * assert.equal(claims.exp - claims.iat, 300);
 * assert.deepEqual(claims.policy, { models: ["haiku"], maxTurns: 5 });
 * ```
 *
 * @param options The secret, subject, lifetime and policy.
 * @returns The token (`header.payload.signature`).
 * @throws {TypeError} For a missing or malformed option (a policy with an unknown field included).
 * @throws {RangeError} For a secret shorter than 32 bytes, or a lifetime or time out of range.
 */
export async function mintRelayToken(options: MintRelayTokenOptions): Promise<string> {
  const what = "Cannot mint a relay token";
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${what}: options must be an object`);
  }
  const secret = checkSecret(options.secret, `${what}: secret`);
  const { subject, ttlSeconds, notBefore, id = crypto.randomUUID() } = options;
  if (typeof subject !== "string" || subject === "" || subject.length > 256) {
    throw new TypeError(`${what}: subject must be a string of 1 to 256 characters`);
  }
  if (
    typeof ttlSeconds !== "number" || !Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 ||
    ttlSeconds > MAX_RELAY_TOKEN_TTL_SECONDS
  ) {
    throw new RangeError(
      `${what}: ttlSeconds must be an integer from 1 to ${MAX_RELAY_TOKEN_TTL_SECONDS}, ` +
        `got ${String(ttlSeconds)}`,
    );
  }
  const issuedAt = options.issuedAt ?? Math.floor(Date.now() / 1000);
  seconds(what, "issuedAt", issuedAt);
  if (notBefore !== undefined) seconds(what, "notBefore", notBefore);
  if (typeof id !== "string" || id === "" || id.length > 256) {
    throw new TypeError(`${what}: id must be a string of 1 to 256 characters`);
  }
  const claims: Record<string, unknown> = {
    sub: subject,
    iat: issuedAt,
    exp: issuedAt + ttlSeconds,
    ...(notBefore !== undefined && { nbf: notBefore }),
    jti: id,
  };
  if (options.policy !== undefined) {
    const checked = checkTokenPolicy(options.policy);
    if (!checked.ok) throw new TypeError(`${what}: ${checked.reason}`);
    claims.policy = checked.policy;
  }
  return await signHs256(claims, await hmacKey(secret));
}

function seconds(what: string, name: string, value: unknown): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `${what}: ${name} must be a whole number of seconds since the epoch, got ${String(value)}`,
    );
  }
}
