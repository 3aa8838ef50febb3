/** The relay's session traffic: round trip, acks, stderr, input dedup and gaps, exit. */

import assert from "node:assert/strict";
import { CLOSE } from "../../../src/wire/wire.ts";
import { openSession, startRelay, TestClient, userLine, waitGone } from "./_client.ts";

function results(client: TestClient): unknown[] {
  return client.lines().filter((line) => line.type === "result").map((line) => line.result);
}

Deno.test("relay session traffic", async (t) => {
  await using env = await startRelay();
  const url = env.relay.url;

  await t.step("hello → ready → in → stdout result → ack; close → exit → ack → 1000", async () => {
    const { client, ready } = await openSession(url);
    await using _ = client;
    assert.equal(ready.resumed, false);
    assert.equal(ready.inSeq, 0);
    assert.equal(ready.graceMs, 30_000);
    assert.equal(typeof ready.pid, "number");
    assert.match(String(ready.session), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(env.relay.sessionCount, 1);

    client.send({ t: "in", seq: 1, line: userLine("hello relay") });
    await client.until("the result", () => results(client).length === 1);
    assert.deepEqual(results(client), ["hello relay"]);
    await client.until("the ack", () => client.texts("ack").length === 1);
    assert.deepEqual(client.texts("ack"), [{ t: "ack", seq: 1 }]);
    // Output sequence numbers start at 1 and have no holes.
    const seqs = client.outputSeqs();
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
    client.send({ t: "ack", seq: client.lastSeq() });

    client.send({ t: "close" });
    const exit = await client.next("exit");
    assert.equal(exit.seq, client.lastSeq());
    assert.equal((exit.exit as { requested: boolean }).requested, true);
    client.send({ t: "ack", seq: exit.seq });
    assert.equal(await client.closeCode(), CLOSE.normal);
    assert.equal(env.relay.sessionCount, 0);
    assert.ok(await waitGone(ready.pid as number, 5000), "the CLI was reaped");
  });

  await t.step("stderr lines arrive as err messages on the output sequence", async () => {
    const { client } = await openSession(url);
    await using _ = client;
    client.send({
      t: "in",
      seq: 1,
      line: JSON.stringify({ type: "fake", action: "stderr", lines: 3 }),
    });
    await client.until("3 err lines", () => client.texts("err").length === 3);
    assert.deepEqual(client.texts("err").map((m) => m.line), [
      "stderr line 0",
      "stderr line 1",
      "stderr line 2",
    ]);
    const seqs = client.outputSeqs();
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
  });

  await t.step("a resent input is acknowledged again but written once", async () => {
    const { client } = await openSession(url);
    await using _ = client;
    client.send({ t: "in", seq: 1, line: userLine("a") });
    await client.until("ack 1", () => client.texts("ack").length === 1);
    client.send({ t: "in", seq: 1, line: userLine("a") });
    await client.until("re-ack 1", () => client.texts("ack").length === 2);
    client.send({ t: "in", seq: 2, line: userLine("b") });
    await client.until("result b", () => results(client).includes("b"));
    assert.deepEqual(results(client), ["a", "b"]);
    assert.deepEqual(client.texts("ack").map((m) => m.seq), [1, 1, 2]);
  });

  await t.step("an input gap is a protocol error", async () => {
    const { client } = await openSession(url);
    await using _ = client;
    client.send({ t: "in", seq: 1, line: userLine("a") });
    client.send({ t: "in", seq: 3, line: userLine("c") });
    assert.equal(await client.closeCode(), CLOSE.protocol);
    assert.equal(client.texts("error")[0]?.kind, "protocol");
  });

  await t.step("ping → pong; malformed, binary and unknown messages → protocol close", async () => {
    {
      const { client } = await openSession(url);
      await using _ = client;
      client.send({ t: "ping", at: 42 });
      assert.deepEqual(await client.next("pong"), { t: "pong", at: 42 });
      client.socket.send("not json");
      assert.equal(await client.closeCode(), CLOSE.protocol);
    }
    {
      const { client } = await openSession(url);
      await using _ = client;
      client.socket.send(new Uint8Array([1, 2, 3]));
      assert.equal(await client.closeCode(), CLOSE.protocol);
    }
    {
      const { client } = await openSession(url);
      await using _ = client;
      client.send({ t: "bogus" });
      assert.equal(await client.closeCode(), CLOSE.protocol);
    }
    {
      const client = new TestClient(url);
      await using _ = client;
      await client.opened;
      client.send({ t: "ping", at: 1 });
      assert.equal(await client.closeCode(), CLOSE.protocol, "the first message must be a hello");
    }
    {
      const { client } = await openSession(url);
      await using _ = client;
      client.send({ t: "ack", seq: 999 });
      assert.equal(await client.closeCode(), CLOSE.protocol, "an ack beyond the output");
    }
  });

  await t.step("eof lets the CLI exit by itself; the exit is reported", async () => {
    const { client, ready } = await openSession(url);
    await using _ = client;
    client.send({ t: "in", seq: 1, line: userLine("last") });
    client.send({ t: "eof" });
    const exit = await client.next("exit");
    assert.deepEqual(results(client), ["last"]);
    assert.equal((exit.exit as { code: number }).code, 0);
    assert.equal((exit.exit as { requested: boolean }).requested, false);
    client.send({ t: "ack", seq: exit.seq });
    assert.equal(await client.closeCode(), CLOSE.normal);
    assert.ok(await waitGone(ready.pid as number, 5000));
  });

  await t.step("a spawn failure is reported as spawn_failed", async () => {
    await using bad = await startRelay({}, {}, { binary: "/nonexistent/claude-relay-test" });
    const client = new TestClient(bad.relay.url);
    await using _ = client;
    await client.opened;
    client.send({ t: "hello", v: 1, spawn: {} });
    const error = await client.next("error");
    assert.equal(error.kind, "spawn_failed");
    assert.equal(await client.closeCode(), 1011);
    assert.equal(bad.relay.sessionCount, 0);
  });

  // Sessions of the steps above whose sockets closed are still in their grace.
  await env.relay.close();
  assert.equal(env.relay.sessionCount, 0);
});
