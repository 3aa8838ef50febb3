// This module is browser compatible.
/**
 * The relay's scoped tokens, for the application server that hands them out
 * and for anything that checks them: {@linkcode mintRelayToken} and
 * {@linkcode verifyRelayToken}, their options and results, and the policy a
 * token narrows the relay's by ({@linkcode RelayTokenPolicy}, the fields of
 * the relay's {@linkcode RelayPolicy} and `cwd`).
 *
 * A scoped token is a standard HS256 JSON Web Token (RFC 7519) signed with a
 * secret the application server shares with the relay
 * (`serveRelay({ secrets })` of `@duplex/claude/relay`). The server mints
 * one per user and hands it to the browser or worker, which passes it as
 * `remote({ token })` (`@duplex/claude/remote`); the secret never leaves the
 * server. Everything here uses only WebCrypto: it runs on a server, in an
 * edge worker (Deno Deploy, Cloudflare Workers) and in a browser, with no
 * permission and without the relay or the subprocess adapter. Any JWT
 * library verifies these tokens, and `verifyRelayToken` takes tokens any JWT
 * library signs with HS256, as the relay does.
 *
 * Through 0.3, `@duplex/claude/remote` and `@duplex/claude/relay` still
 * export these names too (deprecated; they go in 0.4).
 *
 * @example Mint a token for one user, and verify it as the relay does
 * ```ts
 * import { mintRelayToken, verifyRelayToken } from "@duplex/claude/token";
 * import assert from "node:assert/strict";
 *
 * const secret = "a-secret-of-at-least-32-bytes-0123456789";
 * const token = await mintRelayToken({
 *   secret,
 *   subject: "user-42",
 *   ttlSeconds: 300,
 *   policy: { models: ["haiku"], maxTurns: 5 },
 * });
 * const check = await verifyRelayToken(token, { secrets: [secret] });
 * assert.ok(check.ok);
 * assert.equal(check.token.subject, "user-42");
 * assert.deepEqual(check.token.policy, { models: ["haiku"], maxTurns: 5 });
 *
 * const wrong = await verifyRelayToken(token, {
 *   secrets: ["another-secret-of-at-least-32-bytes-0123"],
 * });
 * assert.ok(!wrong.ok);
 * ```
 *
 * @module
 */

export {
  MAX_RELAY_TOKEN_TTL_SECONDS,
  mintRelayToken,
  type MintRelayTokenOptions,
  type RelayTokenPolicy,
} from "./relay_token.ts";
export {
  DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  RELAY_TOKEN_CLOCK_SKEW_SECONDS,
  type RelayTokenCheck,
  type VerifiedRelayToken,
  verifyRelayToken,
  type VerifyRelayTokenOptions,
} from "./verify_relay_token.ts";
export type { RelayPolicy } from "./relay_policy.ts";
