/**
 * The relay's `/health` with `health: { tokens }` / `{ access: "token" }`:
 * a bare 401 without a token that reads it, today's body with one; open by
 * default. And the shipped HAProxy configuration's check sending the
 * health token (`DUPLEX_PROXY_HEALTH_TOKEN`).
 */

import assert from "node:assert/strict";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { mintRelayToken } from "../../../src/token/mod.ts";
import { haproxyStatus, startHaproxy } from "../../e2e/_failover_harness.ts";
import { makeTestDir, startRelay, TOKEN } from "./_client.ts";

const HEALTH_TOKEN = "health-only-token-0123456789";
const SECRET = "a-secret-of-at-least-32-bytes-0123456789";

function healthUrl(relayUrl: string): string {
  return relayUrl.replace(/^ws/, "http").replace("/v1", "/health");
}

async function ask(
  url: string,
  token?: string,
): Promise<{ status: number; body: string; headers: Headers }> {
  const headers: Record<string, string> = token === undefined
    ? {}
    : { authorization: `Bearer ${token}` };
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

const TODAY = { ok: true, sessions: 0, hibernated: 0 };

Deno.test("/health is open by default, and ignores a token", async () => {
  await using setup = await startRelay();
  const url = healthUrl(setup.relay.url);
  for (const token of [undefined, "anything", ""]) {
    const answer = await ask(url, token);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), TODAY);
  }
});

Deno.test("/health with health.tokens: 401 without a token that reads it, the health with one", async (t) => {
  await using setup = await startRelay({
    tokens: [TOKEN],
    secrets: [SECRET],
    health: { tokens: [HEALTH_TOKEN] },
  });
  const url = healthUrl(setup.relay.url);

  await t.step("no token, a wrong one, a malformed header: a bare 401", async () => {
    const wrong = await mintRelayToken({
      secret: "another-secret-of-at-least-32-bytes-0123",
      subject: "u",
      ttlSeconds: 60,
    });
    for (const token of [undefined, "wrong-token", `${HEALTH_TOKEN}x`, wrong]) {
      const answer = await ask(url, token);
      assert.equal(answer.status, 401, `token ${token}`);
      assert.equal(answer.body, "Unauthorized\n");
      assert.equal(answer.headers.get("www-authenticate"), 'Bearer realm="health"');
      assert.doesNotMatch(answer.body, /session|ok|relay|hibernat/i);
    }
    const basic = await fetch(url, { headers: { authorization: `Basic ${btoa("a:b")}` } });
    assert.equal(basic.status, 401);
    await basic.body?.cancel();
  });

  await t.step("the health token, a static token, a scoped token: today's body", async () => {
    const scoped = await mintRelayToken({ secret: SECRET, subject: "u", ttlSeconds: 60 });
    for (const token of [HEALTH_TOKEN, TOKEN, scoped]) {
      const answer = await ask(url, token);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), TODAY);
    }
  });

  await t.step("a health token opens no session", async () => {
    const answer = await ask(setup.relay.url.replace(/^ws/, "http"), HEALTH_TOKEN);
    assert.equal(answer.status, 401);
  });

  await t.step("an Origin header does not change the answer", async () => {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${HEALTH_TOKEN}`, origin: "https://elsewhere.example" },
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
});

Deno.test("/health with access token and no health tokens takes the relay's tokens", async () => {
  await using setup = await startRelay({ health: { access: "token" } });
  const url = healthUrl(setup.relay.url);
  assert.equal((await ask(url)).status, 401);
  assert.equal((await ask(url, HEALTH_TOKEN)).status, 401);
  assert.equal((await ask(url, TOKEN)).status, 200);
});

Deno.test("serveRelay() checks its health option", async () => {
  const workspace = await makeTestDir();
  try {
    const bad: unknown[] = [
      "token",
      { access: "everyone" },
      { tokens: "x" },
      { tokens: [""] },
      { tokens: [7] },
      { access: "open", tokens: [HEALTH_TOKEN] },
    ];
    for (const health of bad) {
      assert.throws(
        () => serveRelay({ tokens: [TOKEN], workspace, health: health as never }),
        TypeError,
        JSON.stringify(health),
      );
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("the shipped HAProxy configuration checks a token-guarded /health with DUPLEX_PROXY_HEALTH_TOKEN", async (t) => {
  const haproxy = haproxyStatus();
  if (!haproxy.available) {
    // deno-lint-ignore no-console
    console.error(`IGNORED: ${haproxy.reason}`);
    return;
  }
  await using setup = await startRelay({ health: { tokens: [HEALTH_TOKEN] } });
  const port = Number(new URL(setup.relay.url).port);
  const dir = await makeTestDir();
  const through = async (balancerPort: number, expected: number): Promise<number> => {
    // HAProxy's answer once its checks (every 200 ms, fall 1, rise 1) settled: the relay's
    // 200, or 503 once a check failed and it has no relay left.
    const deadline = Date.now() + 3000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await ask(`http://127.0.0.1:${balancerPort}/health`, HEALTH_TOKEN)).status;
      if (status === expected) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return status;
  };
  try {
    await t.step("with the health token, the relay is up behind the proxy", async () => {
      Deno.env.set("DUPLEX_PROXY_HEALTH_TOKEN", HEALTH_TOKEN);
      try {
        await using balancer = await startHaproxy([port], dir);
        // HAProxy takes a server for up until a check fails: after five checks it still is.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        assert.equal(await through(balancer.port, 200), 200);
        assert.equal((await ask(`http://127.0.0.1:${balancer.port}/health`)).status, 401);
      } finally {
        Deno.env.delete("DUPLEX_PROXY_HEALTH_TOKEN");
      }
    });
    await t.step("without it, the check fails and the proxy has no relay (503)", async () => {
      await using balancer = await startHaproxy([port], dir);
      assert.equal(await through(balancer.port, 503), 503);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
