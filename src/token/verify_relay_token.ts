// This module is browser compatible.
/**
 * Verification of the relay's scoped tokens: {@linkcode verifyRelayToken},
 * and the verifier the relay keeps (its keys imported once).
 *
 * @module
 */

import { checkHs256, checkSecret, hmacKey } from "./_jwt.ts";
import { checkTokenPolicy } from "./_token_policy.ts";
import { MAX_RELAY_TOKEN_TTL_SECONDS, type RelayTokenPolicy } from "./relay_token.ts";

/**
 * The clock skew allowed when checking `exp`, `nbf` and `iat`, in seconds: a
 * token is still taken this long after it expired, and this long before it
 * becomes valid (the clocks of the minting server and the relay differ).
 */
export const RELAY_TOKEN_CLOCK_SKEW_SECONDS = 30;

/**
 * The longest lifetime (`exp - iat`) a token may have by default, in
 * seconds: what `mintRelayToken` gives at most
 * ({@linkcode MAX_RELAY_TOKEN_TTL_SECONDS}, a day), plus the
 * clock skew. A token signed for longer (ten years, `exp: 1e300`) is
 * refused however it was signed, so that a leaked one does not work forever.
 */
export const DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS: number = MAX_RELAY_TOKEN_TTL_SECONDS +
  RELAY_TOKEN_CLOCK_SKEW_SECONDS;

/** What a verified token says. */
export interface VerifiedRelayToken {
  /** The subject (`sub`): who the token is for. */
  readonly subject: string;
  /** What the holder may do, narrowing the relay's policy (`{}` when the token has none). */
  readonly policy: RelayTokenPolicy;
  /** When it expires (`exp`), in seconds since the epoch. */
  readonly expiresAt: number;
  /** Its id (`jti`), when it has one. */
  readonly id?: string;
}

/** What {@linkcode verifyRelayToken} finds: the token's claims, or why it is refused. */
export type RelayTokenCheck =
  | { readonly ok: true; readonly token: VerifiedRelayToken }
  | { readonly ok: false; readonly reason: string };

/** Options of {@linkcode verifyRelayToken}. */
export interface VerifyRelayTokenOptions {
  /** The secrets a token may be signed with (1 or 2: the current one, then the previous one). */
  readonly secrets: readonly string[];
  /** The time to check against, in milliseconds since the epoch. @default {Date.now()} */
  readonly now?: number;
  /**
   * The longest lifetime (`exp - iat`) taken, in whole seconds (1 or more):
   * a token that lives longer is refused, whatever its `exp`.
   *
   * @default {86430} ({@linkcode DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS})
   */
  readonly maxLifetimeSeconds?: number;
}

/**
 * Verifies a scoped relay token as the relay does: an HS256 JWT (any other
 * `alg`, `none` included, is refused) whose signature matches one of the
 * secrets (checked by WebCrypto, in constant time), whose `exp` has not
 * passed and whose `nbf` (if any) and `iat` (required) have come, each within
 * {@linkcode RELAY_TOKEN_CLOCK_SKEW_SECONDS}, whose lifetime (`exp - iat`)
 * is at most `maxLifetimeSeconds` (by default
 * {@linkcode DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS}: a day and the skew),
 * with a `sub` and a valid `policy` claim (a policy field this version does
 * not know refuses it).
 *
 * @example Verify a token minted for a user
 * ```ts
 * import { mintRelayToken, verifyRelayToken } from "@duplex/claude/token";
 * import assert from "node:assert/strict";
 *
 * const secrets = ["a-secret-of-at-least-32-bytes-0123456789"];
 * const token = await mintRelayToken({ secret: secrets[0]!, subject: "user-42", ttlSeconds: 60 });
 * const check = await verifyRelayToken(token, { secrets });
 * assert.ok(check.ok);
 * assert.equal(check.token.subject, "user-42");
 * const late = await verifyRelayToken(token, { secrets, now: Date.now() + 120_000 });
 * assert.ok(!late.ok && /expired/.test(late.reason));
 * ```
 *
 * @param token The token as presented.
 * @param options The secrets, the time to check against and the longest lifetime.
 * @returns The token's subject and policy, or the reason it is refused.
 * @throws {TypeError} If `secrets` is not an array of one or two strings.
 * @throws {RangeError} If a secret is shorter than 32 bytes, or `maxLifetimeSeconds` is not
 * a whole number of seconds from 1.
 */
export async function verifyRelayToken(
  token: string,
  options: VerifyRelayTokenOptions,
): Promise<RelayTokenCheck> {
  const what = "Cannot verify a relay token";
  const verifier = new RelayTokenVerifier(
    options?.secrets,
    what,
    checkMaxLifetime(options.maxLifetimeSeconds, `${what}: maxLifetimeSeconds`),
  );
  return await verifier.verify(token, options.now);
}

/**
 * Checks a bound on a token's lifetime.
 *
 * @param value The bound given, if any.
 * @param what Where it was given, for the message.
 * @returns It, or {@linkcode DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS}.
 * @throws {RangeError} If it is not a whole number of seconds from 1.
 */
export function checkMaxLifetime(value: unknown, what: string): number {
  if (value === undefined) return DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a whole number of seconds from 1, got ${String(value)}`);
  }
  return value;
}

/** Checks tokens against a fixed set of secrets, their keys imported once. */
export class RelayTokenVerifier {
  readonly #keys: Promise<CryptoKey[]>;
  readonly #maxLifetime: number;

  /**
   * @param secrets One or two secrets (current first).
   * @param what Where they were given, for the messages.
   * @param maxLifetime The longest lifetime (`exp - iat`) taken, in seconds (checked).
   * @throws {TypeError} If `secrets` is not an array of one or two strings.
   * @throws {RangeError} If a secret is shorter than 32 bytes.
   */
  constructor(
    secrets: unknown,
    what: string,
    maxLifetime: number = DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  ) {
    this.#maxLifetime = maxLifetime;
    if (!Array.isArray(secrets) || secrets.length < 1 || secrets.length > 2) {
      throw new TypeError(
        `${what}: secrets must be an array of one or two secrets (the current one, then the ` +
          `previous one while rotating)`,
      );
    }
    const checked = secrets.map((secret, i) => checkSecret(secret, `${what}: secrets[${i}]`));
    this.#keys = Promise.all(checked.map(hmacKey));
  }

  /**
   * Verifies a token.
   *
   * @param token The token as presented.
   * @param now The time to check against, in ms since the epoch.
   * @returns The token's claims, or why it is refused.
   */
  async verify(token: string, now: number = Date.now()): Promise<RelayTokenCheck> {
    if (typeof token !== "string") return refused("the token must be a string");
    const jws = await checkHs256(token, await this.#keys);
    if (!jws.ok) return jws;
    const { sub, exp, nbf, iat, jti, policy } = jws.payload;
    if (typeof sub !== "string" || sub === "" || sub.length > 256) {
      return refused("the token's sub must be a string of 1 to 256 characters");
    }
    if (!isTime(exp)) return refused("the token has no exp (a NumericDate)");
    if (nbf !== undefined && !isTime(nbf)) return refused("the token's nbf is not a NumericDate");
    // Without it the token's lifetime is unknown: a leaked one could be good for ever.
    if (!isTime(iat)) {
      return refused("the token has no iat (a NumericDate): its lifetime is unknown");
    }
    if (jti !== undefined && typeof jti !== "string") {
      return refused("the token's jti is not a string");
    }
    const seconds = now / 1000;
    const skew = RELAY_TOKEN_CLOCK_SKEW_SECONDS;
    if (seconds - skew >= exp) {
      return refused(`the token expired at ${dateOf(exp)} (clock skew allowed: ${skew} s)`);
    }
    if (nbf !== undefined && seconds + skew < nbf) {
      return refused(
        `the token is not valid before ${dateOf(nbf)} (clock skew allowed: ${skew} s)`,
      );
    }
    if (seconds + skew < iat) {
      return refused(`the token was issued in the future, at ${dateOf(iat)}`);
    }
    const lifetime = exp - iat;
    if (lifetime > this.#maxLifetime) {
      return refused(
        `the token's lifetime (exp - iat) is ${lifetime} s, over the maximum of ` +
          `${this.#maxLifetime} s; mint tokens that live at most that long`,
      );
    }
    const scope = policy === undefined
      ? { ok: true as const, policy: {} }
      : checkTokenPolicy(policy);
    if (!scope.ok) return refused(`the token's policy is refused: ${scope.reason}`);
    return {
      ok: true,
      token: {
        subject: sub,
        policy: scope.policy,
        expiresAt: exp,
        ...(jti !== undefined && { id: jti }),
      },
    };
  }
}

function isTime(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function dateOf(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString();
}

function refused(reason: string): RelayTokenCheck {
  return { ok: false, reason };
}
