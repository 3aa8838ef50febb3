// This module is browser compatible.
/**
 * The token names `@duplex/claude/remote` and `@duplex/claude/relay` still
 * export, each deprecated: they are `@duplex/claude/token`'s now (the same
 * values and types), and go from those two entries in 0.4.
 *
 * @module
 */

import * as token from "./mod.ts";

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export const MAX_RELAY_TOKEN_TTL_SECONDS: typeof token.MAX_RELAY_TOKEN_TTL_SECONDS =
  token.MAX_RELAY_TOKEN_TTL_SECONDS;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export const mintRelayToken: typeof token.mintRelayToken = token.mintRelayToken;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export type MintRelayTokenOptions = token.MintRelayTokenOptions;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export type RelayTokenPolicy = token.RelayTokenPolicy;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export const DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS:
  typeof token.DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS =
    token.DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export const RELAY_TOKEN_CLOCK_SKEW_SECONDS: typeof token.RELAY_TOKEN_CLOCK_SKEW_SECONDS =
  token.RELAY_TOKEN_CLOCK_SKEW_SECONDS;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export type RelayTokenCheck = token.RelayTokenCheck;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export type VerifiedRelayToken = token.VerifiedRelayToken;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export const verifyRelayToken: typeof token.verifyRelayToken = token.verifyRelayToken;

/**
 * @deprecated Import it from `@duplex/claude/token`; this re-export goes in 0.4.
 */
export type VerifyRelayTokenOptions = token.VerifyRelayTokenOptions;
