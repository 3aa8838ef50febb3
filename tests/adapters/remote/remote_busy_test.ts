/**
 * A busy relay, or a proxy in front of it, is a reason to try elsewhere and
 * later, not an answer: HTTP 429 / 503 before the upgrade (a proxy's
 * per-source rate, the relay's handshakes full or its shutdown) and the
 * relay's own `busy` refusal pass a start or a reconnection on to the next
 * relay, then again after the `Retry-After` asked for.
 */

import assert from "node:assert/strict";
import { remote, type RemoteOptions } from "../../../adapters/remote/mod.ts";
import { backoffMs } from "../../../adapters/remote/_reconnect.ts";
import {
  MAX_RETRY_AFTER_MS,
  retryAfterMs,
  worthAsking,
} from "../../../adapters/remote/_refusal_probe.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import type { Transport } from "../../../src/transport/transport.ts";
import { Refusal } from "../../../src/wire/wire.ts";
import { startRelay, TOKEN as RELAY_TOKEN } from "../relay/_client.ts";
import { FakeRelay, handshake, rejection, TOKEN, within } from "./_fake_relay.ts";

/** HAProxy's answer to a source over its request rate (no `Retry-After`, an HTML page). */
function tooMany(): Response {
  return new Response("<html><body><h1>429 Too Many Requests</h1></body></html>\n", {
    status: 429,
    headers: { "content-type": "text/html" },
  });
}

/** The relay's answer while its handshakes are full. */
function handshakesFull(retryAfter: string): Response {
  return new Response(
    "Cannot accept the connection: 1 connections are still in their handshake\n",
    {
      status: 503,
      headers: { "retry-after": retryAfter },
    },
  );
}

function open(
  urls: string[],
  reconnect: NonNullable<RemoteOptions["reconnect"]> = {
    attempts: 3,
    initialDelayMs: 10,
    maxDelayMs: 50,
  },
): Promise<Transport> {
  return remote({
    url: urls,
    token: TOKEN,
    connectTimeoutMs: 2_000,
    reconnect,
    closeTimeoutMs: 500,
  })(
    { signal: new AbortController().signal },
  );
}

Deno.test({
  name:
    "retryAfterMs() reads delay seconds and HTTP dates, bounded; worthAsking() skips other statuses",
  permissions: "none",
  fn() {
    assert.equal(retryAfterMs(null), undefined);
    assert.equal(retryAfterMs("1"), 1_000);
    assert.equal(retryAfterMs(" 0 "), 0);
    assert.equal(retryAfterMs("86400"), MAX_RETRY_AFTER_MS, "a day is cut to the bound");
    const now = Date.parse("2026-12-03T10:00:00Z");
    assert.equal(retryAfterMs("Thu, 03 Dec 2026 10:00:05 GMT", now), 5_000);
    assert.equal(retryAfterMs("Thu, 03 Dec 2026 09:00:00 GMT", now), 0, "a date past is now");
    assert.equal(retryAfterMs("soon"), undefined);
    assert.equal(retryAfterMs("-3"), undefined);

    assert.equal(worthAsking(undefined), true, "a browser's 1006 tells nothing: ask");
    assert.equal(
      worthAsking("NetworkError: failed to connect to WebSocket: connection refused"),
      true,
    );
    for (const status of [401, 403, 429, 503]) {
      assert.equal(
        worthAsking(`failed to connect to WebSocket: Invalid status code: ${status}`),
        true,
      );
    }
    for (const status of [400, 404, 502]) {
      assert.equal(
        worthAsking(`failed to connect to WebSocket: Invalid status code: ${status}`),
        false,
      );
    }
  },
});

Deno.test({
  name:
    "backoffMs() jitters within the lower half of the exponential delay, never below Retry-After",
  permissions: "none",
  fn() {
    const delays = { initialDelayMs: 100, maxDelayMs: 1_000 };
    assert.equal(backoffMs(delays, 0, undefined, 0), 100);
    assert.equal(backoffMs(delays, 0, undefined, 0.999_999), 50.00005);
    assert.equal(backoffMs(delays, 3, undefined, 0), 800);
    assert.equal(backoffMs(delays, 10, undefined, 0), 1_000, "capped");
    assert.equal(backoffMs(delays, 10, undefined, 0.5), 750);
    assert.equal(backoffMs(delays, 0, 1_000, 0), 1_000, "a relay's Retry-After is a floor");
    assert.equal(backoffMs({ initialDelayMs: 0, maxDelayMs: 0 }, 5, undefined, 0.3), 0);
    for (let i = 0; i < 1_000; i++) {
      const ms = backoffMs(delays, 2);
      assert.ok(ms > 200 && ms <= 400, `${ms} in (200, 400]`);
    }
  },
});

Deno.test("a start refused with HTTP 429 by a proxy goes on to the next relay", async () => {
  const a = new FakeRelay({ answer: tooMany });
  const b = new FakeRelay();
  try {
    const opening = open([a.url, b.url]);
    await handshake(await within(b.accept(), "b's connection"));
    const transport = await within(opening, "the transport");
    assert.match(transport.info.description ?? "", new RegExp(b.url.replace(/[/.]/g, "\\$&")));
    assert.deepEqual(
      a.requests.map((r) => `${r.method} ${r.upgrade ? "upgrade" : "plain"}`),
      ["GET upgrade", "GET plain"],
      "a's upgrade, then one plain GET asking why, then nothing more",
    );
    await transport.close();
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

Deno.test("a start on a lone relay whose handshakes are full waits its Retry-After, then lands", async () => {
  const refusedAt: number[] = [];
  let upgrades = 0;
  const relay = new FakeRelay({
    answer(request) {
      const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
      if (upgrade) upgrades++;
      if (upgrades > 1) return undefined; // the second upgrade is taken
      if (upgrade) refusedAt.push(performance.now());
      return handshakesFull("1");
    },
  });
  try {
    const opening = open([relay.url]);
    const connection = await within(relay.accept(), "the connection after the wait", 5_000);
    const landedAt = performance.now();
    await handshake(connection);
    const transport = await within(opening, "the transport");
    assert.equal(refusedAt.length, 1);
    const waited = landedAt - refusedAt[0]!;
    assert.ok(waited >= 950, `waited ${waited.toFixed(0)} ms for a Retry-After of 1 s`);
    await transport.close();
  } finally {
    await relay.close();
  }
});

Deno.test("a start every relay keeps refusing as busy fails after the attempts, naming busy", async () => {
  // The relay's own refusal after the upgrade: its session limit.
  const a = new FakeRelay();
  const b = new FakeRelay({ answer: tooMany });
  const refuse = (async () => {
    for (let i = 0; i < 3; i++) {
      const connection = await a.accept();
      await connection.next("hello");
      connection.send({ t: "error", kind: "busy", message: "the relay runs its maximum of 1" });
      connection.close(1013);
    }
  })();
  try {
    const error = await rejection(
      open([a.url, b.url], { attempts: 2, initialDelayMs: 10, maxDelayMs: 20 }),
      "the busy start",
    ) as { kind?: string; message?: string; cause?: unknown };
    await within(refuse, "three refusals by a");
    assert.equal(error.kind, "closed");
    assert.ok(error.cause instanceof Refusal && error.cause.kind === "busy", String(error.cause));
    assert.match(error.message ?? "", /busy: the relay runs its maximum of 1/);
    assert.equal(a.connections.length, 3, "the first try and two more");
    assert.equal(b.requests.filter((r) => r.upgrade).length, 3, "b tried each time after a");
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

Deno.test("a status that is no refusal (404) is not asked about", async () => {
  const relay = new FakeRelay({ answer: () => new Response("no\n", { status: 404 }) });
  try {
    const error = await rejection(open([relay.url], false)) as { kind?: string };
    assert.equal(error.kind, "closed");
    assert.deepEqual(relay.requests.map((r) => r.upgrade), [true], "no plain GET followed");
  } finally {
    await relay.close();
  }
});

Deno.test("a reconnection that meets a busy relay keeps trying and resumes", async () => {
  let busyLeft = 0;
  const relay = new FakeRelay({
    answer() {
      if (busyLeft === 0) return undefined;
      busyLeft--;
      return tooMany();
    },
  });
  try {
    const opening = open([relay.url], { attempts: 6, initialDelayMs: 10, maxDelayMs: 40 });
    const first = await within(relay.accept(), "the connection");
    await handshake(first, "s-4");
    const transport = await within(opening, "the transport");
    busyLeft = 4; // two attempts' upgrades and probes
    first.close(4000);
    const again = await within(relay.accept(), "the connection after the busy ones", 5_000);
    const hello = await handshake(again, "s-4");
    assert.deepEqual(hello.resume, { session: "s-4", after: 0, applied: 0 });
    assert.equal(busyLeft, 0);
    assert.equal(relay.requests.filter((r) => r.upgrade).length, 4, "first, two refused, resumed");
    await transport.close();
  } finally {
    await relay.close();
  }
});

Deno.test("over the real relay: a start beyond maxSessions waits and lands once a session ends", async () => {
  await using setup = await startRelay({ maxSessions: 1 });
  const transport = (reconnect: NonNullable<RemoteOptions["reconnect"]>) =>
    remote({ url: setup.relay.url, token: RELAY_TOKEN, reconnect });
  const first = await DuplexSession.start({ transport: transport(false) });
  try {
    const turn = await first.send("hold the only place");
    assert.equal(turn.result.text, "hold the only place");

    // With no attempts, busy is the answer at once.
    await assert.rejects(
      DuplexSession.start({ transport: transport(false) }),
      (error: unknown) =>
        error instanceof Error && "kind" in error && error.kind === "closed" &&
        error.cause instanceof Refusal && error.cause.kind === "busy",
    );

    // With attempts, the start waits for the place.
    const waiting = DuplexSession.start({
      transport: transport({ attempts: 40, initialDelayMs: 50, maxDelayMs: 100 }),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.close();
    await using second = await within(waiting, "the second start once the first ended", 8_000);
    assert.equal((await second.send("now mine")).result.text, "now mine");
  } finally {
    await first.close();
  }
});
