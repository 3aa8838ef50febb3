/**
 * `remote({ url: [a, b, …] })`: several relays, tried in order on connect;
 * each reconnect tries the relay the session was on first, then the
 * others; a refusal is an answer, not a reason to try the next relay.
 */

import assert from "node:assert/strict";
import { remote } from "../../../adapters/remote/mod.ts";
import { checkOptions } from "../../../adapters/remote/remote_options.ts";
import { tryOrder } from "../../../adapters/remote/_reconnect.ts";
import type { Transport } from "../../../src/transport/transport.ts";
import { FakeRelay, handshake, rejection, TOKEN, within } from "./_fake_relay.ts";

/** A ws:// URL nobody listens on. */
function deadUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return `ws://127.0.0.1:${port}/v1`;
}

function open(urls: string[], signal = new AbortController().signal): Promise<Transport> {
  return remote({
    url: urls,
    token: TOKEN,
    connectTimeoutMs: 2_000,
    reconnect: { attempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
    closeTimeoutMs: 500,
  })({ signal });
}

async function closeAll(...relays: FakeRelay[]): Promise<void> {
  await Promise.all(relays.map((relay) => relay.close()));
}

Deno.test({
  name: "checkOptions() takes one URL or a non-empty list of them",
  permissions: "none",
  fn() {
    const one = checkOptions({ url: "ws://a/v1", token: "t" });
    assert.deepEqual(one.urls, ["ws://a/v1"]);
    assert.equal(one.url, "ws://a/v1");
    const many = checkOptions({ url: ["ws://a/v1", "wss://b/v1", "ws://a/v1"], token: "t" });
    assert.deepEqual(many.urls, ["ws://a/v1", "wss://b/v1"], "in order, once each");
    assert.equal(many.url, "ws://a/v1");
    assert.throws(() => checkOptions({ url: [], token: "t" }), TypeError);
    assert.throws(
      () => checkOptions({ url: ["ws://a/v1", "http://b/v1"], token: "t" }),
      /url must be a ws:\/\/ or wss:\/\/ URL, got "http:\/\/b\/v1"/,
    );
    assert.throws(() => checkOptions({ url: [1 as unknown as string], token: "t" }), TypeError);
  },
});

Deno.test({
  name: "tryOrder() puts the current relay first, then the others as given",
  permissions: "none",
  fn() {
    assert.deepEqual(tryOrder(["a", "b", "c"]), ["a", "b", "c"]);
    assert.deepEqual(tryOrder(["a", "b", "c"], "b"), ["b", "a", "c"]);
    assert.deepEqual(tryOrder(["a", "b", "c"], "z"), ["a", "b", "c"]);
  },
});

Deno.test("remote() connects to the first relay that answers", async () => {
  const b = new FakeRelay();
  const c = new FakeRelay();
  try {
    const opening = open([deadUrl(), b.url, c.url]);
    await handshake(await within(b.accept(), "b's connection"));
    const transport = await within(opening, "the transport");
    assert.match(transport.info.description ?? "", new RegExp(b.url.replace(/[/.]/g, "\\$&")));
    assert.equal(c.connections.length, 0, "c is not tried once b answered");
    await transport.close();
  } finally {
    await closeAll(b, c);
  }
});

Deno.test("remote() takes a relay's refusal as the answer: the next relay is not tried", async () => {
  const a = new FakeRelay();
  const b = new FakeRelay();
  try {
    const opening = open([a.url, b.url]);
    const connection = await within(a.accept(), "a's connection");
    await connection.next("hello");
    connection.send({ t: "error", kind: "unauthorized", message: "wrong token" });
    connection.close(1008);
    const error = await rejection(opening) as { kind?: string; message?: string };
    assert.equal(error.kind, "unauthorized");
    assert.match(error.message ?? "", new RegExp(a.url.replace(/[/.]/g, "\\$&")));
    assert.equal(b.connections.length, 0);
  } finally {
    await closeAll(a, b);
  }
});

Deno.test("remote() fails with the last relay's failure when none answers", async () => {
  const error = await rejection(open([deadUrl(), deadUrl()])) as { kind?: string };
  assert.equal(error.kind, "closed");
});

Deno.test("remote() reconnects to the relay it was on first, then to the others", async (t) => {
  const a = new FakeRelay();
  const b = new FakeRelay();
  try {
    const opening = open([a.url, b.url]);
    const first = await within(a.accept(), "a's connection");
    await handshake(first, "s-9");
    const transport = await within(opening, "the transport");

    await t.step("a drop: back to a, though b is there", async () => {
      first.close(4000);
      const again = await within(a.accept(), "a's second connection");
      const hello = await handshake(again, "s-9");
      assert.deepEqual(hello.resume, { session: "s-9", after: 0, applied: 0 });
      assert.equal(b.connections.length, 0);
    });

    await t.step("a goes away: the session moves to b, and stays there", async () => {
      await a.close();
      const moved = await within(b.accept(), "b's connection");
      const hello = await handshake(moved, "s-9");
      assert.deepEqual(hello.resume, { session: "s-9", after: 0, applied: 0 });
      moved.output(1, '{"type":"x"}\n');
      moved.close(4000);
      const back = await within(b.accept(), "b's second connection");
      assert.deepEqual((await handshake(back, "s-9")).resume, {
        session: "s-9",
        after: 1,
        applied: 0,
      });
    });
    await transport.close();
  } finally {
    await closeAll(a, b);
  }
});
