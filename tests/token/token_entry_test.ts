/**
 * The token entry (`@duplex/claude/token`) and the names `@duplex/claude/remote`
 * and `@duplex/claude/relay` still export for it (deprecated): the same values.
 */

import assert from "node:assert/strict";
import * as token from "../../src/token/mod.ts";
import * as remote from "../../adapters/remote/mod.ts";
import * as relay from "../../adapters/relay/mod.ts";
import type * as Types from "../../src/token/mod.ts";

Deno.test("@duplex/claude/remote and /relay export the token entry's values (deprecated)", () => {
  assert.equal(remote.mintRelayToken, token.mintRelayToken);
  assert.equal(remote.MAX_RELAY_TOKEN_TTL_SECONDS, token.MAX_RELAY_TOKEN_TTL_SECONDS);
  assert.equal(relay.mintRelayToken, token.mintRelayToken);
  assert.equal(relay.verifyRelayToken, token.verifyRelayToken);
  assert.equal(relay.MAX_RELAY_TOKEN_TTL_SECONDS, token.MAX_RELAY_TOKEN_TTL_SECONDS);
  assert.equal(
    relay.DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
    token.DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  );
  assert.equal(relay.RELAY_TOKEN_CLOCK_SKEW_SECONDS, token.RELAY_TOKEN_CLOCK_SKEW_SECONDS);
});

Deno.test("the deprecated token types are the token entry's", () => {
  const policy: Types.RelayTokenPolicy = { models: ["haiku"], cwd: "team" };
  const viaRemote: remote.RelayTokenPolicy = policy;
  const viaRelay: relay.RelayTokenPolicy = viaRemote;
  const options: relay.MintRelayTokenOptions = { secret: "s", subject: "a", ttlSeconds: 1 };
  const asToken: Types.MintRelayTokenOptions = options;
  const check: relay.RelayTokenCheck = { ok: false, reason: "r" };
  const asTokenCheck: Types.RelayTokenCheck = check;
  const verify: relay.VerifyRelayTokenOptions = { secrets: [] };
  const asTokenVerify: Types.VerifyRelayTokenOptions = verify;
  const verified: relay.VerifiedRelayToken = { subject: "a", policy, expiresAt: 1 };
  const asTokenVerified: Types.VerifiedRelayToken = verified;
  assert.ok(viaRelay && asToken && asTokenCheck && asTokenVerify && asTokenVerified);
});

Deno.test("a token's policy is the relay's policy and cwd", () => {
  const relayPolicy: Types.RelayPolicy = {
    models: ["sonnet"],
    permissionModes: ["default"],
    maxTurns: 3,
    allowResume: false,
    allowPartialMessages: false,
    exposePid: false,
  };
  const tokenPolicy: Types.RelayTokenPolicy = { ...relayPolicy, cwd: "team" };
  assert.equal(tokenPolicy.cwd, "team");
});

Deno.test("the token entry runs with no permission: mint, then verify", {
  permissions: "none",
}, async () => {
  const secret = "token-entry-secret-0123456789abcdef";
  const minted = await token.mintRelayToken({ secret, subject: "u", ttlSeconds: 60 });
  const check = await token.verifyRelayToken(minted, { secrets: [secret] });
  assert.ok(check.ok);
  assert.equal(check.token.subject, "u");
});
