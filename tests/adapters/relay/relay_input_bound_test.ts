/**
 * Defect 8 of issue 11: the bytes a client sent that the relay has not yet
 * written to the CLI are bounded (`maxPendingInputBytes`). A flood is refused
 * with a clear close reason; an honest client, which waits for input
 * acknowledgements, never meets the bound.
 */

import assert from "node:assert/strict";
import { remote } from "../../../adapters/remote/mod.ts";
import { CLOSE } from "../../../src/wire/wire.ts";
import { openSession, startRelay, TestClient, TOKEN } from "./_client.ts";

const LIMIT = 256 * 1024;
/** A 4 KB line the stand-in CLI echoes back as a `fake_echo` frame. */
const LINE = JSON.stringify({ type: "note", pad: "x".repeat(4000) });

async function refusedFlood(client: TestClient, from: number): Promise<void> {
  // Up to 2000 lines of 4 KB (8 MB) at a CLI that reads none of them, never waiting for an
  // acknowledgement; the client stops once it reads the refusal.
  for (let seq = from; seq < from + 2000; seq++) {
    if (client.texts("error").length > 0 || client.socket.readyState !== WebSocket.OPEN) break;
    client.send({ t: "in", seq, line: LINE });
    if (seq % 16 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(await client.closeCode(10_000), CLOSE.tooBig);
  const event = await client.closed;
  assert.match(event.reason, /maxPendingInputBytes/);
  const errors = client.texts("error");
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.kind, "too_large");
  assert.match(String(errors[0]!.message), /maxPendingInputBytes 262144/);
}

Deno.test("relay input bound: a client flooding a busy CLI is refused", async (t) => {
  await using env = await startRelay({ maxPendingInputBytes: LIMIT }, { RELAY_TEST_STALL: "1" });

  await t.step("after ready: too_large, close 1009 naming maxPendingInputBytes", async () => {
    const { client } = await openSession(env.relay.url);
    await using _ = client;
    await refusedFlood(client, 1);
    assert.ok(
      client.texts("ack").length < LIMIT / LINE.length,
      "never more acknowledged than the pipe and the bound hold",
    );
  });

  await t.step("a burst sent with the hello, before any acknowledgement", async () => {
    // The hello and 100 lines (400 KB) at once: whether they arrive before the session is
    // ready (held by the connection, see frame_bounds_test.ts) or after, the bound holds.
    const client = new TestClient(env.relay.url);
    await using _ = client;
    await client.opened;
    client.send({ t: "hello", v: 1, spawn: {} });
    for (let seq = 1; seq <= 100; seq++) client.send({ t: "in", seq, line: LINE });
    assert.equal(await client.closeCode(), CLOSE.tooBig);
    assert.equal(client.texts("error")[0]?.kind, "too_large");
    assert.match((await client.closed).reason, /maxPendingInputBytes 262144/);
  });

  await t.step("the relay still serves others; each CLI started once", async () => {
    assert.equal(await env.spawns(2), 2);
    const { client } = await openSession(env.relay.url);
    await using _ = client;
    assert.equal(await env.spawns(3), 3);
  });
});

Deno.test("relay input bound: the remote client streaming many lines never meets it", async (t) => {
  // The bound is 16 lines' worth; the client sends up to 600 of them.
  await using env = await startRelay({ maxPendingInputBytes: 64 * 1024 });
  for (const [inFlight, count] of [[1, 200], [8, 600]] as const) {
    await t.step(
      `${count} lines, ${inFlight} write(s) in flight: every line applied once`,
      async () => {
        const transport = await remote({ url: env.relay.url, token: TOKEN, reconnect: false })({
          signal: new AbortController().signal,
        });
        await using _ = transport;
        let echoed = 0;
        const reading = (async () => {
          const decoder = new TextDecoder();
          let text = "";
          for await (const chunk of transport.readable) {
            text += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
            const lines = text.split("\n");
            text = lines.pop()!;
            echoed += lines.filter((line) => line.includes('"fake_echo"')).length;
            if (echoed === count) return;
          }
        })();
        const writing = new Set<Promise<void>>();
        for (let i = 0; i < count; i++) {
          if (writing.size >= inFlight) await Promise.race(writing);
          const write = transport.write(LINE).then(() => void writing.delete(write));
          writing.add(write);
        }
        await Promise.all(writing);
        await reading;
        assert.equal(echoed, count);
        const exit = await transport.close();
        assert.equal(exit.code, 0, `ended normally: ${JSON.stringify(exit)}`);
      },
    );
  }
  assert.equal(await env.spawns(2), 2);
});
