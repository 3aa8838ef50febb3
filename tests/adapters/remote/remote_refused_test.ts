/**
 * remote() and a relay that refuses before the upgrade. The relay answers a
 * bad token or origin with HTTP 401 / 403 and the reason in the body (it
 * never upgrades an anonymous client); a WebSocket cannot read that answer
 * (a browser sees a close 1006), so the client asks the same URL once over
 * plain HTTP, the token in an `Authorization` header. It then fails with a
 * typed error (`unauthorized`, `not_permitted`) naming the relay's reason,
 * tries no other relay and does not reconnect; anything but 401 / 403 is a
 * connection failure as before (retried, the next relay tried).
 */

import assert from "node:assert/strict";
import { remote } from "../../../adapters/remote/mod.ts";
import { mintRelayToken } from "../../../adapters/relay/mod.ts";
import { type DuplexError, isDuplexError } from "../../../src/errors.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import { startRelay, TOKEN as RELAY_TOKEN } from "../relay/_client.ts";
import { FakeRelay, handshake, rejection, TOKEN, within } from "./_fake_relay.ts";

const PERMISSIONS: Deno.PermissionOptions = { net: ["127.0.0.1"] };
const SECRET = "remote-refused-secret-0123456789abcd";

/** A relay's refusal before the upgrade, as the relay words it. */
function refusing(status: number, kind: string, message: string): (request: Request) => Response {
  return () =>
    new Response(JSON.stringify({ t: "error", kind, message }) + "\n", {
      status,
      headers: { "content-type": "application/json" },
    });
}

function open(urls: string | string[], options: Record<string, unknown> = {}) {
  return remote({
    url: urls,
    token: TOKEN,
    connectTimeoutMs: 3_000,
    closeTimeoutMs: 200,
    reconnect: { attempts: 4, initialDelayMs: 10, maxDelayMs: 20 },
    ...options,
  })({ signal: new AbortController().signal });
}

Deno.test("remote() reads a refusal before the upgrade: a typed error, no retry", {
  permissions: PERMISSIONS,
}, async (t) => {
  for (
    const [status, kind] of [[401, "unauthorized"], [403, "not_permitted"]] as const
  ) {
    await t.step(
      `HTTP ${status} → ${kind}, the relay's reason, the next relay not tried`,
      async () => {
        const a = new FakeRelay({
          answer: refusing(status, kind, "Cannot connect: told by the test"),
        });
        const b = new FakeRelay();
        try {
          const error = await rejection(open([a.url, b.url]), "the refusal");
          assert.ok(isDuplexError(error, kind), String(error));
          assert.match(
            (error as DuplexError).message,
            new RegExp(
              `^Cannot start a session on the relay at ${a.url.replace(/[/.]/g, "\\$&")}: ` +
                `${kind}: Cannot connect: told by the test$`,
            ),
          );
          assert.deepEqual(a.requests.map((seen) => [seen.method, seen.upgrade]), [
            ["GET", true],
            ["GET", false],
          ], "one upgrade, then one plain request asking why");
          assert.equal(a.requests[1]!.authorization, `Bearer ${TOKEN}`);
          assert.equal(b.requests.length, 0, "a refusal is an answer: b is not tried");
        } finally {
          await a.close();
          await b.close();
        }
      },
    );
  }

  await t.step(
    "a 401 without the relay's body (a proxy's): unauthorized all the same",
    async () => {
      const relay = new FakeRelay({ answer: () => new Response("no\n", { status: 401 }) });
      try {
        const error = await rejection(open(relay.url));
        assert.ok(isDuplexError(error, "unauthorized"), String(error));
        assert.match((error as Error).message, /answered HTTP 401: no$/);
      } finally {
        await relay.close();
      }
    },
  );

  await t.step("another status (502) is a failed connection: the next relay answers", async () => {
    const down = new FakeRelay({ answer: () => new Response("bad gateway\n", { status: 502 }) });
    const up = new FakeRelay();
    try {
      const opening = open([down.url, up.url]);
      await handshake(await within(up.accept(), "the second relay's connection"));
      const transport = await within(opening, "the transport");
      assert.match(transport.info.description ?? "", /via the relay at/);
      await transport.close();
    } finally {
      await down.close();
      await up.close();
    }
  });
});

Deno.test("remote() stops reconnecting when the relay refuses the resume before the upgrade", {
  permissions: PERMISSIONS,
}, async () => {
  let refuse = false;
  const relay = new FakeRelay({
    answer: (request) =>
      refuse
        ? refusing(401, "unauthorized", `the token expired (${request.method})`)(request)
        : undefined,
  });
  try {
    const opening = open(relay.url);
    const first = await within(relay.accept(), "the connection");
    await handshake(first);
    const transport = await within(opening, "the transport");
    const before = relay.requests.length;
    refuse = true; // the token expires; the connection then drops
    first.close(4000);
    const exit = await within(transport.closed, "the end of the transport", 5_000);
    assert.match(exit.reason ?? "", /cannot resume the session: unauthorized: the token expired/);
    assert.deepEqual(
      relay.requests.slice(before).map((seen) => seen.upgrade),
      [true, false],
      "one attempt (its upgrade, then the question), though 4 were allowed",
    );
  } finally {
    await relay.close();
  }
});

Deno.test("remote() against the real relay: a bad token is a typed error", async (t) => {
  await using env = await startRelay({ secrets: [SECRET] });
  const url = env.relay.url;

  await t.step("a wrong static token → unauthorized, with the relay's words", async () => {
    const error = await rejection(
      DuplexSession.start({ transport: remote({ url, token: "not-the-token" }) }),
    );
    assert.ok(isDuplexError(error, "unauthorized"), String(error));
    assert.match(
      (error as Error).message,
      /unauthorized: Cannot connect to the relay: the bearer token is wrong/,
    );
  });

  await t.step("an expired scoped token → unauthorized, saying it expired", async () => {
    const token = await mintRelayToken({
      secret: SECRET,
      subject: "alice",
      ttlSeconds: 60,
      issuedAt: Math.floor(Date.now() / 1000) - 3600,
    });
    const error = await rejection(DuplexSession.start({ transport: remote({ url, token }) }));
    assert.ok(isDuplexError(error, "unauthorized"), String(error));
    assert.match((error as Error).message, /the token expired at/);
  });

  await t.step("a good token still runs a turn", async () => {
    await using session = await DuplexSession.start({
      transport: remote({ url, token: RELAY_TOKEN, reconnect: false }),
    });
    assert.equal((await session.send("still here")).result.text, "still here");
  });
});
