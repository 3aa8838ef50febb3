/**
 * Scoped relay tokens: what `mintRelayToken` signs, what `verifyRelayToken`
 * refuses and why, and interoperability with another JWT implementation
 * (`jose`, a dev-only dependency of this test).
 */

import assert from "node:assert/strict";
import { decodeProtectedHeader, jwtVerify, SignJWT, UnsecuredJWT } from "npm:jose@6.2.18";
import {
  DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  MAX_RELAY_TOKEN_TTL_SECONDS,
  mintRelayToken,
  RELAY_TOKEN_CLOCK_SKEW_SECONDS,
  verifyRelayToken,
} from "../../src/token/mod.ts";

const SECRET = "relay-test-secret-0123456789abcdef";
const PREVIOUS = "relay-previous-secret-0123456789abcd";
const NONE = { permissions: "none" } as const;
const now = (): number => Math.floor(Date.now() / 1000);

function part(token: string, index: number): Record<string, unknown> {
  const text = token.split(".")[index]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(text), (c) => c.charCodeAt(0))));
}

function encodePart(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

async function refusal(
  token: string,
  secrets = [SECRET],
  at?: number,
  maxLifetimeSeconds?: number,
): Promise<string> {
  const check = await verifyRelayToken(token, {
    secrets,
    ...(at !== undefined && { now: at }),
    ...(maxLifetimeSeconds !== undefined && { maxLifetimeSeconds }),
  });
  assert.ok(!check.ok, `refused: ${token.slice(0, 60)}`);
  return check.reason;
}

Deno.test("mintRelayToken() signs a standard HS256 JWT", NONE, async (t) => {
  await t.step("header, claims and policy", async () => {
    const token = await mintRelayToken({
      secret: SECRET,
      subject: "alice",
      ttlSeconds: 120,
      policy: { models: ["haiku"], maxTurns: 3, cwd: "alice", exposePid: false },
      notBefore: 1_700_000_000,
    });
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]{43}$/);
    assert.deepEqual(part(token, 0), { alg: "HS256", typ: "JWT" });
    const claims = part(token, 1);
    assert.equal(claims.sub, "alice");
    assert.ok(Math.abs((claims.iat as number) - now()) <= 2);
    assert.equal(claims.exp, (claims.iat as number) + 120);
    assert.equal(claims.nbf, 1_700_000_000);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(claims.policy, {
      models: ["haiku"],
      exposePid: false,
      maxTurns: 3,
      cwd: "alice",
    });
    assert.notEqual(
      claims.jti,
      part(await mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 1 }), 1).jti,
    );
  });

  await t.step("bad options are refused with a clear error", async () => {
    const base = { secret: SECRET, subject: "a", ttlSeconds: 60 };
    const cases: [Record<string, unknown>, ErrorConstructor, RegExp][] = [
      [{ secret: "short" }, RangeError, /at least 32 bytes/],
      [{ secret: 42 }, TypeError, /secret must be a string/],
      [{ subject: "" }, TypeError, /subject/],
      [{ subject: "x".repeat(257) }, TypeError, /subject/],
      [{ ttlSeconds: 0 }, RangeError, /ttlSeconds/],
      [{ ttlSeconds: 1.5 }, RangeError, /ttlSeconds/],
      [{ ttlSeconds: 86_401 }, RangeError, /ttlSeconds/],
      [{ notBefore: -1 }, RangeError, /notBefore/],
      [{ issuedAt: "now" }, RangeError, /issuedAt/],
      [{ id: "" }, TypeError, /id/],
      [{ policy: { models: "haiku" } }, TypeError, /models/],
      [{ policy: { maxTurns: 0 } }, TypeError, /maxTurns/],
      [{ policy: { cwd: "/etc" } }, TypeError, /cwd/],
      [{ policy: { allowResume: "no" } }, TypeError, /allowResume/],
      [{ policy: { extraArgs: ["--x"] } }, TypeError, /"extraArgs" is not known/],
    ];
    for (const [change, type, message] of cases) {
      await assert.rejects(
        mintRelayToken({ ...base, ...change } as never),
        (error: unknown) => error instanceof type && message.test((error as Error).message),
        JSON.stringify(change),
      );
    }
  });
});

Deno.test(
  "verifyRelayToken() accepts good tokens and says why it refuses others",
  NONE,
  async (t) => {
    const mint = (options: Record<string, unknown> = {}) =>
      mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 60, ...options });

    await t.step("a fresh token: its subject, policy, expiry and id", async () => {
      const token = await mint({ policy: { permissionModes: ["plan"] }, id: "t-1" });
      const check = await verifyRelayToken(token, { secrets: [SECRET] });
      assert.ok(check.ok);
      assert.equal(check.token.subject, "alice");
      assert.deepEqual(check.token.policy, { permissionModes: ["plan"] });
      assert.equal(check.token.id, "t-1");
      assert.equal(check.token.expiresAt, part(token, 1).exp);
      const bare = await verifyRelayToken(await mint(), { secrets: [SECRET] });
      assert.ok(bare.ok && Object.keys(bare.token.policy).length === 0);
    });

    await t.step("rotation: either of two secrets; the previous alone no more", async () => {
      const old = await mintRelayToken({ secret: PREVIOUS, subject: "bob", ttlSeconds: 60 });
      assert.ok((await verifyRelayToken(old, { secrets: [SECRET, PREVIOUS] })).ok);
      assert.match(await refusal(old, [SECRET]), /signature matches none/);
    });

    await t.step("expiry and not-before, within the clock skew", async () => {
      const skew = RELAY_TOKEN_CLOCK_SKEW_SECONDS;
      assert.equal(skew, 30);
      const token = await mint({ issuedAt: now() - 100, ttlSeconds: 60 }); // expired 40 s ago
      assert.match(await refusal(token), /expired at .*clock skew allowed: 30 s/);
      const barely = await mint({ issuedAt: now() - 70, ttlSeconds: 60 }); // expired 10 s ago
      assert.ok((await verifyRelayToken(barely, { secrets: [SECRET] })).ok, "within the skew");
      const later = await mint({ notBefore: now() + 300, ttlSeconds: 600 });
      assert.match(await refusal(later), /not valid before/);
      assert.ok(
        (await verifyRelayToken(later, { secrets: [SECRET], now: Date.now() + 290_000 })).ok,
      );
      const soon = await mint({ notBefore: now() + 10 });
      assert.ok((await verifyRelayToken(soon, { secrets: [SECRET] })).ok, "within the skew");
      assert.match(await refusal(await mint({ issuedAt: now() + 600 })), /issued in the future/);
    });

    await t.step("alg none, another alg, a bad typ, crit: refused by name", async () => {
      const claims = { sub: "alice", exp: now() + 60 };
      const unsecured = new UnsecuredJWT(claims).encode();
      assert.match(await refusal(unsecured), /alg is "none"; the relay takes only HS256/);
      const key = new TextEncoder().encode(SECRET);
      const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: "HS512" }).sign(key);
      assert.match(await refusal(hs512), /alg is "HS512"/);
      const typ = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
        .sign(key);
      assert.match(await refusal(typ), /typ is "at\+jwt"/);
      const good = await mint();
      const [, body, signature] = good.split(".");
      const crit = `${encodePart({ alg: "HS256", crit: ["exp"], exp: 1 })}.${body}.${signature}`;
      assert.match(await refusal(crit), /crit/);
      const noneHeader = `${encodePart({ alg: "none" })}.${body}.`;
      assert.match(await refusal(noneHeader), /alg is "none"/);
    });

    await t.step(
      "tampered payload, header or signature: the signature does not match",
      async () => {
        const token = await mint();
        const [header, body, signature] = token.split(".") as [string, string, string];
        const claims = part(token, 1);
        const forged = `${header}.${encodePart({ ...claims, sub: "mallory" })}.${signature}`;
        assert.match(await refusal(forged), /signature matches none/);
        const widened = `${header}.${
          encodePart({ ...claims, exp: claims.exp as number + 1e6 })
        }.${signature}`;
        assert.match(await refusal(widened), /signature matches none/);
        const flipped = signature.startsWith("A")
          ? `B${signature.slice(1)}`
          : `A${signature.slice(1)}`;
        assert.match(await refusal(`${header}.${body}.${flipped}`), /signature matches none/);
        const wrongKey = await mintRelayToken({
          secret: PREVIOUS,
          subject: "alice",
          ttlSeconds: 60,
        });
        assert.match(await refusal(wrongKey), /signature matches none/);
      },
    );

    await t.step("malformed tokens and claims", async () => {
      assert.match(await refusal("not-a-jwt"), /not a JWT/);
      assert.match(await refusal("a.b.c.d"), /not a JWT/);
      assert.match(await refusal("!!.e30.x"), /header is not/);
      assert.match(await refusal(`${"a".repeat(9000)}.b.c`), /longer than 8192/);
      const key = new TextEncoder().encode(SECRET);
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(key);
      assert.match(await refusal(await sign({ exp: now() + 60 })), /sub must be/);
      assert.match(await refusal(await sign({ sub: "a" })), /no exp/);
      assert.match(await refusal(await sign({ sub: "a", exp: "tomorrow" })), /no exp/);
      assert.match(await refusal(await sign({ sub: "a", exp: now() + 60, nbf: "x" })), /nbf/);
      const iat = now();
      assert.match(
        await refusal(await sign({ sub: "a", iat, exp: iat + 60, policy: { bypass: true } })),
        /policy is refused: the policy field "bypass" is not known/,
      );
      assert.match(
        await refusal(await sign({ sub: "a", iat, exp: iat + 60, policy: { maxTurns: -1 } })),
        /maxTurns/,
      );
    });

    await t.step("its own options are checked", async () => {
      const token = await mint();
      for (const bad of [0, -1, 1.5, Number.NaN, Infinity, "60"]) {
        await assert.rejects(
          verifyRelayToken(token, { secrets: [SECRET], maxLifetimeSeconds: bad as number }),
          (error: unknown) =>
            (error instanceof RangeError || error instanceof TypeError) &&
            /maxLifetimeSeconds must be a whole number of seconds from 1/.test(error.message),
          String(bad),
        );
      }
      await assert.rejects(verifyRelayToken(token, { secrets: [] }), TypeError);
      await assert.rejects(
        verifyRelayToken(token, { secrets: [SECRET, SECRET, SECRET] }),
        TypeError,
      );
      await assert.rejects(verifyRelayToken(token, { secrets: ["short"] }), RangeError);
    });
  },
);

Deno.test(
  "verifyRelayToken() bounds a token's lifetime (exp - iat) and requires iat",
  NONE,
  async (t) => {
    const key = new TextEncoder().encode(SECRET);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: "alice", ...claims }).setProtectedHeader({ alg: "HS256" }).sign(key);
    const max = DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS;

    await t.step("the default: the mint cap (a day) plus the clock skew", () => {
      assert.equal(max, MAX_RELAY_TOKEN_TTL_SECONDS + RELAY_TOKEN_CLOCK_SKEW_SECONDS);
      assert.equal(max, 86_430);
    });

    await t.step(
      "a token signed with the secret but living ten years is refused, with why",
      async () => {
        const iat = now();
        const reason = await refusal(await sign({ iat, exp: iat + 10 * 365 * 86_400 }));
        assert.match(reason, /lifetime \(exp - iat\) is 315360000 s, over the maximum of 86430 s/);
      },
    );

    await t.step("an exp of 1e300 is refused the same way", async () => {
      const reason = await refusal(await sign({ iat: now(), exp: 1e300 }));
      assert.match(reason, /lifetime \(exp - iat\) is 1e\+300 s, over the maximum of 86430 s/);
    });

    await t.step("up to the maximum is taken; one second more is not", async () => {
      const iat = now();
      assert.ok(
        (await verifyRelayToken(await sign({ iat, exp: iat + max }), { secrets: [SECRET] }))
          .ok,
      );
      assert.match(await refusal(await sign({ iat, exp: iat + max + 1 })), /over the maximum/);
      const day = await mintRelayToken({ secret: SECRET, subject: "a", ttlSeconds: 86_400 });
      assert.ok((await verifyRelayToken(day, { secrets: [SECRET] })).ok, "the longest mint");
    });

    await t.step("a token without iat is refused: its lifetime cannot be known", async () => {
      assert.match(await refusal(await sign({ exp: now() + 60 })), /the token has no iat/);
      assert.match(
        await refusal(await sign({ iat: "yesterday", exp: now() + 60 })),
        /the token has no iat/,
      );
    });

    await t.step("maxLifetimeSeconds sets another maximum", async () => {
      const iat = now();
      const hour = await sign({ iat, exp: iat + 3600 });
      const options = { secrets: [SECRET], maxLifetimeSeconds: 3600 };
      assert.ok((await verifyRelayToken(hour, options)).ok);
      const longer = await sign({ iat, exp: iat + 3601 });
      assert.match(
        await refusal(longer, [SECRET], undefined, 3600),
        /is 3601 s, over the maximum of 3600 s/,
      );
      const week = await sign({ iat, exp: iat + 7 * 86_400 });
      assert.ok(
        (await verifyRelayToken(week, { secrets: [SECRET], maxLifetimeSeconds: 7 * 86_400 }))
          .ok,
        "raised for another issuer's week-long tokens",
      );
    });
  },
);

Deno.test("relay tokens interoperate with another JWT implementation (jose)", NONE, async (t) => {
  const key = new TextEncoder().encode(SECRET);

  await t.step("a token jose signs verifies here, its policy read", async () => {
    const token = await new SignJWT({ policy: { models: ["haiku"], allowResume: false } })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject("carol")
      .setIssuedAt()
      .setNotBefore("0s")
      .setExpirationTime("5m")
      .setJti("jose-1")
      .sign(key);
    const check = await verifyRelayToken(token, { secrets: [PREVIOUS, SECRET] });
    assert.ok(check.ok, check.ok ? "" : check.reason);
    assert.equal(check.token.subject, "carol");
    assert.equal(check.token.id, "jose-1");
    assert.deepEqual(check.token.policy, { models: ["haiku"], allowResume: false });
  });

  await t.step("a token minted here verifies in jose, with every claim", async () => {
    const token = await mintRelayToken({
      secret: SECRET,
      subject: "dave",
      ttlSeconds: 90,
      policy: { maxTurns: 2 },
      notBefore: now() - 5,
    });
    const { payload, protectedHeader } = await jwtVerify(token, key, {
      algorithms: ["HS256"],
      typ: "JWT",
      subject: "dave",
      requiredClaims: ["iat", "exp", "nbf", "jti"],
    });
    assert.deepEqual(protectedHeader, { alg: "HS256", typ: "JWT" });
    assert.deepEqual(decodeProtectedHeader(token), protectedHeader);
    assert.equal(payload.exp! - payload.iat!, 90);
    assert.deepEqual(payload.policy, { maxTurns: 2 });
    await assert.rejects(jwtVerify(token, new TextEncoder().encode(PREVIOUS)), /signature/);
  });
});
