/** Relay lifecycle: heartbeat, session limit, close, abort. */

import assert from "node:assert/strict";
import { CLOSE } from "../../../src/wire/wire.ts";
import { openSession, startRelay, TestClient, waitGone } from "./_client.ts";

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("relay lifecycle", async (t) => {
  await t.step(
    "heartbeat: a silent client is dropped after 2 × heartbeatMs, session kept",
    async () => {
      await using env = await startRelay({ heartbeatMs: 100 });
      const started = Date.now();
      const { client: silent } = await openSession(env.relay.url);
      await using _silent = silent;
      silent.answersPings = false;
      const { client: lively } = await openSession(env.relay.url);
      await using _lively = lively;
      // The lively client answers every ping (as every test client does).
      let answered = 0;
      lively.socket.addEventListener("message", (event) => {
        if (typeof event.data === "string" && JSON.parse(event.data).t === "ping") answered++;
      });
      await silent.closeCode(3000);
      const waited = Date.now() - started;
      assert.ok(waited >= 200 && waited < 1500, `dropped after ${waited} ms`);
      assert.ok(silent.texts("ping").length >= 1, "the relay pinged");
      await delay(300);
      assert.equal(lively.socket.readyState, WebSocket.OPEN, "a client that answers stays");
      assert.ok(answered >= 3);
      assert.equal(env.relay.sessionCount, 2, "the dropped session waits for a resume");
    },
  );

  await t.step("an exit never acknowledged ends the session after the grace (1000)", async () => {
    await using env = await startRelay({ graceMs: 200 });
    const { client, ready } = await openSession(env.relay.url);
    await using _ = client;
    client.send({ t: "eof" });
    await client.next("exit");
    assert.equal(env.relay.sessionCount, 1, "kept for the acknowledgement");
    assert.equal(await client.closeCode(2000), CLOSE.normal);
    assert.equal(env.relay.sessionCount, 0);
    assert.ok(await waitGone(ready.pid as number, 1000));
  });

  await t.step("maxSessions → busy", async () => {
    await using env = await startRelay({ maxSessions: 1 });
    const { client } = await openSession(env.relay.url);
    await using _ = client;
    const second = new TestClient(env.relay.url);
    await using _second = second;
    await second.opened;
    second.send({ t: "hello", v: 1, spawn: {} });
    assert.equal((await second.next("error")).kind, "busy");
    assert.equal(await second.closeCode(), CLOSE.policy);
    assert.equal(env.relay.sessionCount, 1);
  });

  await t.step("close(): sockets end with 1001, every process is reaped", async () => {
    await using env = await startRelay();
    const { client: a, ready: readyA } = await openSession(env.relay.url);
    await using _a = a;
    const { client: b, ready: readyB } = await openSession(env.relay.url);
    await b.close(); // detached, in its grace
    assert.equal(env.relay.sessionCount, 2);
    const closing = env.relay.close();
    assert.equal(await a.closeCode(), CLOSE.goingAway);
    await closing;
    await env.relay.closed;
    await env.relay.close(); // idempotent
    assert.equal(env.relay.sessionCount, 0);
    assert.ok(await waitGone(readyA.pid as number, 1000));
    assert.ok(await waitGone(readyB.pid as number, 1000));
    await assert.rejects(fetch(`http://127.0.0.1:${env.relay.port}/health`));
  });

  await t.step("aborting the signal closes the relay", async () => {
    const controller = new AbortController();
    await using env = await startRelay({ signal: controller.signal });
    const { client, ready } = await openSession(env.relay.url);
    await using _ = client;
    controller.abort();
    assert.equal(await client.closeCode(), CLOSE.goingAway);
    await env.relay.closed;
    assert.ok(await waitGone(ready.pid as number, 1000));
  });
});
