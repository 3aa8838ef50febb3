/** The relay's HTTP surface and authentication; option checks. */

import assert from "node:assert/strict";
import { bearerProtocol, CLOSE, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { DuplexError } from "../../../src/errors.ts";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { makeTestDir, openSession, startRelay, TestClient, TOKEN } from "./_client.ts";
import { refusedUpgrade } from "./_upgrade.ts";

Deno.test("relay HTTP and authentication", async (t) => {
  await using env = await startRelay({ tokens: ["other-token", TOKEN] });
  const { relay } = env;
  const http = `http://127.0.0.1:${relay.port}`;

  await t.step("url and port", () => {
    assert.equal(relay.url, `ws://127.0.0.1:${relay.port}/v1`);
    assert.ok(relay.port > 0);
  });

  await t.step("GET /health → 200 { ok, sessions, hibernated }; other paths → 404", async () => {
    const health = await fetch(`${http}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true, sessions: 0, hibernated: 0 });
    const missing = await fetch(`${http}/nope`);
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    const plain = await fetch(`${http}/v1`);
    assert.equal(plain.status, 401, "/v1 without an upgrade, and without a token");
    assert.equal((await plain.json()).kind, "unauthorized");
    const asked = await fetch(`${http}/v1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(asked.status, 426, "/v1 without an upgrade, with a good token");
    await asked.body?.cancel();
  });

  for (
    const [name, protocols] of [
      ["missing token", [SUBPROTOCOL]],
      ["wrong token", [SUBPROTOCOL, bearerProtocol("wrong")]],
      ["token prefix", [SUBPROTOCOL, bearerProtocol(TOKEN.slice(0, -1))]],
      ["malformed bearer", [SUBPROTOCOL, "duplex-claude.bearer.!!!"]],
    ] as const
  ) {
    await t.step(
      `${name} → unauthorized, HTTP 401 before the upgrade, nothing spawned`,
      async () => {
        const client = new TestClient(relay.url, [...protocols]);
        await using _ = client;
        await assert.rejects(client.opened, "the handshake fails");
        assert.equal(client.texts("ready").length, 0);
        const seen = await refusedUpgrade(relay.url, { protocols });
        assert.equal(seen.status, 401);
        assert.equal(seen.kind, "unauthorized");
        assert.equal(relay.sessionCount, 0);
      },
    );
  }

  await t.step("the second of several tokens is accepted", async () => {
    const { client, ready } = await openSession(relay.url);
    await using _ = client;
    assert.equal(typeof ready.session, "string");
    const health = await fetch(`${http}/health`);
    assert.deepEqual(await health.json(), { ok: true, sessions: 1, hibernated: 0 });
  });

  await t.step("an Authorization header is accepted too", async () => {
    const client = new TestClient(relay.url, [SUBPROTOCOL]);
    await using _ = client;
    await assert.rejects(client.opened, "a header-less client is refused");
    assert.equal((await refusedUpgrade(relay.url, { token: null })).status, 401);
    const withHeader = new TestClient(relay.url, [SUBPROTOCOL], {
      authorization: `Bearer ${TOKEN}`,
    });
    await using _header = withHeader;
    await withHeader.opened;
    withHeader.send({ t: "hello", v: 1 });
    assert.equal((await withHeader.next("ready")).resumed, false);
    const wrong = new TestClient(relay.url, [SUBPROTOCOL], { authorization: "Bearer nope" });
    await using _wrong = wrong;
    await assert.rejects(wrong.opened);
    const seen = await refusedUpgrade(relay.url, {
      token: null,
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(seen.kind, "unauthorized");
    assert.match(seen.message, /bearer token is wrong/);
  });

  await t.step("no duplex-claude.v1 subprotocol → upgrade refused", async () => {
    const client = new TestClient(relay.url, [bearerProtocol(TOKEN)]);
    await using _ = client;
    await assert.rejects(client.opened);
    assert.equal(relay.sessionCount, 2);
  });

  await t.step("no hello in time → protocol close", async () => {
    await using quick = await startRelay({ helloTimeoutMs: 100 });
    const client = new TestClient(quick.relay.url);
    await using _ = client;
    await client.opened;
    assert.equal(await client.closeCode(), CLOSE.protocol);
    assert.equal(client.texts("error")[0]?.kind, "protocol");
  });
});

Deno.test("serveRelay checks its options before listening", async () => {
  const workspace = await makeTestDir();
  try {
    const base = { tokens: ["t"], workspace };
    const invalid = (options: object, pattern: RegExp) =>
      assert.throws(
        () => serveRelay({ ...base, ...options }),
        (error: unknown) =>
          (error instanceof DuplexError && error.kind === "invalid_argument" ||
            error instanceof TypeError || error instanceof RangeError) &&
          pattern.test((error as Error).message),
      );
    invalid({ tokens: [] }, /tokens/);
    invalid({ tokens: [""] }, /tokens/);
    invalid({ tokens: "t" }, /tokens/);
    invalid({ workspace: `${workspace}/missing` }, /workspace/);
    invalid({ workspace: undefined }, /workspace/);
    invalid({ port: -1 }, /port/);
    invalid({ port: 1.5 }, /port/);
    invalid({ graceMs: -1 }, /graceMs/);
    invalid({ heartbeatMs: 0 }, /heartbeatMs/);
    invalid({ heartbeatMs: 2 ** 31 }, /heartbeatMs/);
    invalid({ helloTimeoutMs: Number.NaN }, /helloTimeoutMs/);
    invalid({ graceMs: 2 ** 31 }, /graceMs/);
    invalid({ bufferBytes: 0 }, /bufferBytes/);
    invalid({ maxSessions: 0 }, /maxSessions/);
    invalid({ policy: { maxTurns: 0 } }, /maxTurns/);
    invalid({ policy: { models: "sonnet" } }, /models/);
    invalid({ cli: { hostSignal: "nope" } }, /hostSignal/);
    invalid({ cli: { maxTurns: -1 } }, /maxTurns/);
    for (const bad of [0, -5, 1.5, Infinity, Number.NaN, "600"]) {
      invalid(
        { secrets: ["s".repeat(32)], maxTokenLifetimeSeconds: bad },
        /maxTokenLifetimeSeconds must be a whole number of seconds from 1/,
      );
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("serveRelay takes Infinity for a duration: no timer, and ready says graceMs null", async () => {
  await using env = await startRelay({
    graceMs: Infinity,
    heartbeatMs: Infinity,
    helloTimeoutMs: Infinity,
  });
  const { client, ready } = await openSession(env.relay.url);
  await using _ = client;
  assert.equal(ready.graceMs, null);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(client.texts("ping"), [], "no heartbeat");
});
