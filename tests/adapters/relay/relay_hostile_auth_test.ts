/**
 * The hostile-client suite, part 1: credentials and origins. Every attempt
 * is refused before any WebSocket, with HTTP 401 (a credential) or 403 (an
 * origin) and its reason in the body, so that no frame of such a client is
 * ever read (see part 3, memory); no `claude` is started: the stand-in CLI
 * logs each start. The same URL, asked over plain HTTP with the token in an
 * `Authorization` header, says the same: a client whose handshake failed
 * (a browser sees only a close 1006) reads why there.
 */

import assert from "node:assert/strict";
import { SignJWT, UnsecuredJWT } from "npm:jose@6.2.18";
import { mintRelayToken } from "../../../adapters/relay/mod.ts";
import { CLOSE } from "../../../src/wire/wire.ts";
import { refusalOf, startRelay, TestClient, TOKEN } from "./_client.ts";
import { type RefusedUpgrade, refusedUpgrade } from "./_upgrade.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";

const SECRET = "hostile-suite-secret-0123456789abcdef";
const STRANGER = "a-secret-the-relay-never-heard-of-0123";
const APP = "https://app.example.com";
const now = (): number => Math.floor(Date.now() / 1000);

function encodePart(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

function unauthorized(seen: RefusedUpgrade, why: RegExp): void {
  assert.equal(seen.kind, "unauthorized");
  assert.equal(seen.status, 401);
  assert.match(seen.headers.get("www-authenticate") ?? "", /^Bearer realm=/);
  assert.match(seen.message, /^Cannot connect to the relay: /);
  assert.match(seen.message, why);
}

Deno.test("hostile clients: bad credentials are refused, nothing spawned", async (t) => {
  await using env = await startRelay({ secrets: [SECRET], allowedOrigins: [APP] });
  const url = env.relay.url;
  const mint = (options: Record<string, unknown> = {}) =>
    mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 60, ...options });
  const key = new TextEncoder().encode(SECRET);
  const good = await mint();
  const [header, body, signature] = good.split(".") as [string, string, string];
  const claims = JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/")));

  const cases: [string, string | null, RegExp][] = [
    ["no token", null, /no bearer token/],
    ["a wrong static token", "not-the-token", /bearer token is wrong/],
    ["a static token's prefix", TOKEN.slice(0, -1), /bearer token is wrong/],
    [
      "a JWT signed with another secret",
      await mintRelayToken({
        secret: STRANGER,
        subject: "alice",
        ttlSeconds: 60,
      }),
      /signature matches none/,
    ],
    ["an expired JWT", await mint({ issuedAt: now() - 3600 }), /expired at/],
    [
      "a JWT not yet valid",
      await mint({ notBefore: now() + 3600, ttlSeconds: 7200 }),
      /not valid before/,
    ],
    [
      "a JWT whose subject was changed",
      `${header}.${encodePart({ ...claims, sub: "mallory" })}.${signature}`,
      /signature matches none/,
    ],
    [
      "a JWT whose expiry was pushed",
      `${header}.${encodePart({ ...claims, exp: claims.exp + 86_400 })}.${signature}`,
      /signature matches none/,
    ],
    [
      "a JWT whose policy was widened",
      `${header}.${
        encodePart({ ...claims, policy: { permissionModes: ["bypassPermissions"] } })
      }.${signature}`,
      /signature matches none/,
    ],
    ["a JWT with its signature cut", `${header}.${body}.`, /signature is not base64url/],
    [
      "an alg:none JWT",
      new UnsecuredJWT({ sub: "alice", exp: now() + 60 }).encode(),
      /alg is "none"/,
    ],
    [
      "alg:none over a real payload",
      `${encodePart({ alg: "none", typ: "JWT" })}.${body}.`,
      /alg is "none"/,
    ],
    [
      "an HS512 JWT",
      await new SignJWT({ sub: "alice", exp: now() + 60 }).setIssuedAt()
        .setProtectedHeader({ alg: "HS512" }).sign(key),
      /alg is "HS512"; the relay takes only HS256/,
    ],
    [
      "a JWT without exp",
      await new SignJWT({ sub: "alice" }).setIssuedAt().setProtectedHeader({ alg: "HS256" })
        .sign(key),
      /no exp/,
    ],
    [
      "a JWT without sub",
      await new SignJWT({ exp: now() + 60 }).setIssuedAt().setProtectedHeader({ alg: "HS256" })
        .sign(key),
      /sub must be/,
    ],
    [
      "a JWT with an unknown policy field",
      await new SignJWT({
        sub: "alice",
        exp: now() + 60,
        policy: { extraArgs: ["--dangerously-skip-permissions"] },
      }).setIssuedAt().setProtectedHeader({ alg: "HS256" }).sign(key),
      /policy field "extraArgs" is not known/,
    ],
    // Signed with the relay's own secret (a leaked one, or another issuer's code), but
    // good for ever: refused by its lifetime (issue 21, finding 8).
    [
      "a JWT living ten years",
      await new SignJWT({ sub: "alice", iat: now(), exp: now() + 10 * 365 * 86_400 })
        .setProtectedHeader({ alg: "HS256" }).sign(key),
      /lifetime \(exp - iat\) is 315360000 s, over the maximum of 86430 s/,
    ],
    [
      "a JWT with exp 1e300",
      await new SignJWT({ sub: "alice", iat: now(), exp: 1e300 })
        .setProtectedHeader({ alg: "HS256" }).sign(key),
      /lifetime \(exp - iat\) is 1e\+300 s, over the maximum/,
    ],
    [
      "a JWT without iat",
      await new SignJWT({ sub: "alice", exp: now() + 60 }).setProtectedHeader({ alg: "HS256" })
        .sign(key),
      /no iat .*its lifetime is unknown/,
    ],
    ["an over-long token", `${"a".repeat(9000)}.${body}.${signature}`, /longer than 8192/],
  ];
  for (const [name, token, why] of cases) {
    await t.step(`${name} → unauthorized, HTTP 401, the reason`, async () => {
      unauthorized(await refusedUpgrade(url, { token }), why);
      assert.equal(env.relay.sessionCount, 0);
    });
  }

  await t.step("a wrong Authorization header → unauthorized", async () => {
    const seen = await refusedUpgrade(url, {
      token: null,
      headers: { authorization: "Bearer nope" },
    });
    unauthorized(seen, /bearer token is wrong/);
  });

  await t.step("a WebSocket with a bad token never opens: not a frame is exchanged", async () => {
    const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol("nope")]);
    await using _ = client;
    await assert.rejects(client.opened, /WebSocket error/);
    await client.closed;
    assert.deepEqual(client.received, []);
  });

  await t.step("a resume with a bad token cannot even be sent: refused before", async () => {
    // The relay answers the upgrade request itself: no hello, and so no lookup, can follow.
    unauthorized(await refusedUpgrade(url, { token: "nope" }), /bearer token is wrong/);
  });

  await t.step("the same URL over plain HTTP says why (what remote() asks)", async () => {
    const http = url.replace(/^ws/, "http");
    const asked = (headers: Record<string, string>) => fetch(http, { headers });
    const wrong = await asked({ authorization: "Bearer nope" });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get("access-control-allow-origin"), "*");
    const body = await wrong.json();
    assert.equal(body.t, "error");
    assert.equal(body.kind, "unauthorized");
    assert.match(body.message, /bearer token is wrong/);
    const origin = await asked({ authorization: `Bearer ${good}`, origin: "https://evil.example" });
    assert.equal(origin.status, 403);
    assert.equal((await origin.json()).kind, "not_permitted");
    const fine = await asked({ authorization: `Bearer ${good}`, origin: APP });
    assert.equal(fine.status, 426, "good credentials: only the upgrade is missing");
    await fine.body?.cancel();
    const preflight = await fetch(http, {
      method: "OPTIONS",
      headers: {
        origin: "https://elsewhere.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "authorization",
      },
    });
    assert.equal(preflight.status, 204, "a browser may ask from another origin");
    assert.equal(preflight.headers.get("access-control-allow-headers"), "authorization");
    await preflight.body?.cancel();
  });

  for (
    const origin of [
      "https://evil.example",
      "https://app.example.com.evil.example",
      "http://app.example.com",
      "https://app.example.com:8443",
      "null",
    ]
  ) {
    await t.step(`Origin ${origin} → not_permitted, HTTP 403, even with a good token`, async () => {
      const seen = await refusedUpgrade(url, { token: good, headers: { origin } });
      assert.equal(seen.kind, "not_permitted");
      assert.equal(seen.status, 403);
      assert.match(
        seen.message,
        new RegExp(`origin ${origin.replaceAll(".", "\\.")} is not in its allowedOrigins`),
      );
    });
  }

  await t.step("nothing was spawned by any of them", async () => {
    assert.equal(await env.spawns(0), 0);
    assert.equal(env.relay.sessionCount, 0);
  });

  await t.step("positive controls: a listed origin, no origin, a static token", async () => {
    for (
      const [token, headers] of [[good, { origin: APP }], [good, undefined], [
        TOKEN,
        undefined,
      ]] as const
    ) {
      const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)], headers);
      await using _ = client;
      await client.opened;
      client.send({ t: "hello", v: 1, spawn: {} });
      assert.equal((await client.next("ready")).resumed, false);
    }
    assert.equal(await env.spawns(3), 3);
  });
});

Deno.test("hostile clients: maxTokenLifetimeSeconds bounds what a scoped token may live", async () => {
  await using env = await startRelay({ secrets: [SECRET], maxTokenLifetimeSeconds: 600 });
  const url = env.relay.url;
  const hour = await mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 3600 });
  const seen = await refusedUpgrade(url, { token: hour });
  unauthorized(seen, /lifetime \(exp - iat\) is 3600 s, over the maximum of 600 s/);
  const short = await mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 600 });
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(short)]);
  await using _ = client;
  await client.opened;
  client.send({ t: "hello", v: 1, spawn: {} });
  assert.equal((await client.next("ready")).resumed, false, "at the bound: taken");
  assert.equal(await env.spawns(1), 1);
});

Deno.test("hostile clients: another subject cannot resume, or even see, a session", async () => {
  await using env = await startRelay({ secrets: [SECRET] });
  const url = env.relay.url;
  const alice = await mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 60 });
  const bob = await mintRelayToken({ secret: SECRET, subject: "bob", ttlSeconds: 60 });
  const owner = new TestClient(url, [SUBPROTOCOL, bearerProtocol(alice)]);
  await using _ = owner;
  await owner.opened;
  owner.send({ t: "hello", v: 1, spawn: {} });
  const ready = await owner.next("ready");
  const resume = (session: unknown, after: number) => (client: TestClient) =>
    client.send({ t: "hello", v: 1, resume: { session, after } });
  const unknown = await refusalOf(url, { token: bob, send: resume("no-such-session", 0) });
  assert.equal(unknown.kind, "unknown_session");
  assert.equal(unknown.code, CLOSE.cannotResume);
  for (const token of [bob, TOKEN]) {
    for (const after of [0, 99]) {
      const seen = await refusalOf(url, { token, send: resume(ready.session, after) });
      assert.deepEqual(seen, unknown, `as ${token === TOKEN ? "the static token" : "bob"}`);
    }
  }
  assert.equal(owner.socket.readyState, WebSocket.OPEN, "the owner was not evicted");
  assert.equal(await env.spawns(1), 1, "only alice's session was spawned");
});
