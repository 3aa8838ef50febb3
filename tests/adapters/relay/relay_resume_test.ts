/** Resuming relay sessions: replay without loss or duplicates, refusals, grace expiry. */

import assert from "node:assert/strict";
import { CLOSE } from "../../../src/wire/wire.ts";
import { isGone, openSession, startRelay, TestClient, userLine, waitGone } from "./_client.ts";

/** Makes the stand-in CLI write 200 stderr lines (more than a 2000-byte buffer holds); waits for them. */
async function stderrFlood(client: TestClient): Promise<void> {
  client.send({
    t: "in",
    seq: 1,
    line: JSON.stringify({ type: "fake", action: "stderr", lines: 200 }),
  });
  await client.until("all err lines", () => client.texts("err").length === 200);
}

function resultsOf(clients: TestClient[]): unknown[] {
  return clients.flatMap((client) =>
    client.lines().filter((line) => line.type === "result").map((line) => line.result)
  );
}

async function resume(url: string, session: unknown, after: number): Promise<TestClient> {
  const client = new TestClient(url);
  await client.opened;
  client.send({ t: "hello", v: 1, resume: { session, after } });
  return client;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("relay resume", async (t) => {
  await t.step("output produced while disconnected arrives once, in order", async () => {
    await using env = await startRelay();
    const { client: first, ready } = await openSession(env.relay.url);
    first.send({ t: "in", seq: 1, line: userLine("one") });
    await first.until("result one", () => resultsOf([first]).length === 1);
    // Two more inputs, then the connection drops before their output comes back.
    first.send({
      t: "in",
      seq: 2,
      line: JSON.stringify({ type: "fake", action: "stderr", lines: 300 }),
    });
    first.send({ t: "in", seq: 3, line: userLine("three") });
    await first.close();
    const after = first.lastSeq();
    await delay(300);
    assert.equal(env.relay.sessionCount, 1, "the session waits for a resume");

    const second = await resume(env.relay.url, ready.session, after);
    await using _ = second;
    const again = await second.next("ready");
    assert.equal(again.resumed, true);
    assert.equal(again.session, ready.session);
    assert.equal(again.pid, ready.pid);
    assert.equal(again.inSeq, 3, "both inputs were applied while disconnected");
    // The client re-sends what was not acknowledged: the relay must not apply it again.
    second.send({ t: "in", seq: 3, line: userLine("three") });
    await second.until(
      "all output",
      () =>
        second.texts("err").length + first.texts("err").length === 300 &&
        resultsOf([first, second]).length === 2,
    );
    assert.ok(second.outputSeqs().length > 0, "output came while disconnected");
    const seqs = [...first.outputSeqs(), ...second.outputSeqs()];
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "no output lost or repeated");
    assert.deepEqual(resultsOf([first, second]), ["one", "three"]);
    const lines = [...first.texts("err"), ...second.texts("err")].map((m) => m.line);
    assert.deepEqual(lines, Array.from({ length: 300 }, (_, i) => `stderr line ${i}`));
    // Input after the resume continues the sequence.
    second.send({ t: "in", seq: 4, line: userLine("four") });
    await second.until("result four", () => resultsOf([second]).includes("four"));
    assert.deepEqual(resultsOf([first, second]), ["one", "three", "four"]);
  });

  await t.step("a newer connection replaces the attached one (4000)", async () => {
    await using env = await startRelay();
    const { client: first, ready } = await openSession(env.relay.url);
    await using _first = first;
    first.send({ t: "in", seq: 1, line: userLine("x") });
    await first.until("result", () => resultsOf([first]).length === 1);
    const second = await resume(env.relay.url, ready.session, first.lastSeq());
    await using _second = second;
    assert.equal((await second.next("ready")).resumed, true);
    assert.equal(await first.closeCode(), CLOSE.replaced);
    second.send({ t: "in", seq: 2, line: userLine("y") });
    await second.until("result y", () => resultsOf([second]).includes("y"));
    assert.deepEqual(resultsOf([second]), ["y"], "nothing replayed that the client had");
  });

  await t.step("an unknown session → unknown_session, 4004", async () => {
    await using env = await startRelay();
    const client = await resume(env.relay.url, "no-such-session", 0);
    await using _ = client;
    assert.equal((await client.next("error")).kind, "unknown_session");
    assert.equal(await client.closeCode(), CLOSE.cannotResume);
  });

  await t.step("allowResume false refuses resumes and ends sessions on disconnect", async () => {
    await using env = await startRelay({ policy: { allowResume: false } });
    const { client, ready } = await openSession(env.relay.url);
    await client.close();
    assert.ok(await waitGone(ready.pid as number, 5000));
    const again = await resume(env.relay.url, ready.session, 0);
    await using _ = again;
    assert.equal((await again.next("error")).kind, "unknown_session");
    assert.equal(await again.closeCode(), CLOSE.cannotResume);
  });

  await t.step("output dropped from the buffer → resume_gap, 4004, process reaped", async () => {
    await using env = await startRelay({ bufferBytes: 2000 });
    const { client, ready } = await openSession(env.relay.url);
    await stderrFlood(client);
    await client.close();
    const again = await resume(env.relay.url, ready.session, 0);
    await using _ = again;
    assert.equal((await again.next("error")).kind, "resume_gap");
    assert.equal(await again.closeCode(), CLOSE.cannotResume);
    assert.ok(await waitGone(ready.pid as number, 5000), "the process was closed");
    assert.equal(env.relay.sessionCount, 0);
  });

  await t.step("acknowledged output is not needed: resume after it works", async () => {
    await using env = await startRelay({ bufferBytes: 2000 });
    const { client, ready } = await openSession(env.relay.url);
    await stderrFlood(client);
    const last = client.lastSeq();
    client.send({ t: "ack", seq: last });
    await delay(50);
    await client.close();
    const again = await resume(env.relay.url, ready.session, last);
    await using _ = again;
    assert.equal((await again.next("ready")).resumed, true);
    assert.deepEqual(again.outputSeqs(), []);
  });

  await t.step(
    "without hibernation, grace expiry reaps the process and forgets the session",
    async () => {
      await using env = await startRelay({ graceMs: 200, maxHibernated: 0 });
      const { client, ready } = await openSession(env.relay.url);
      const pid = ready.pid as number;
      await client.close();
      await delay(50);
      assert.equal(isGone(pid), false, "kept during the grace");
      assert.ok(await waitGone(pid, 5000), "reaped after the grace");
      assert.equal(env.relay.sessionCount, 0);
      const again = await resume(env.relay.url, ready.session, 0);
      await using _ = again;
      assert.equal((await again.next("error")).kind, "unknown_session");
    },
  );

  await t.step("a resume that claims output never sent is a protocol error", async () => {
    await using env = await startRelay();
    const { client, ready } = await openSession(env.relay.url);
    await client.close();
    const again = await resume(env.relay.url, ready.session, 50);
    await using _ = again;
    assert.equal(await again.closeCode(), CLOSE.protocol);
  });
});

Deno.test("relay flow control: stdout waits for acknowledgements, nothing is dropped", async () => {
  // 3 MB of stdout through a 256 KiB window: without acks the relay stops reading the CLI.
  await using env = await startRelay({ bufferBytes: 262_144 }, {
    FAKE_CLAUDE_FINAL_STDOUT_BYTES: "3000000",
    FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
  });
  const { client } = await openSession(env.relay.url);
  await delay(500);
  const stalled = client.stdout().length;
  assert.ok(stalled > 0 && stalled <= 262_144, `sent ${stalled} bytes without any ack`);
  // Acknowledge as we go: the rest flows, and the exit follows all of it.
  let acked = 0;
  await client.until("the exit", () => {
    const last = client.lastSeq();
    if (last > acked) {
      acked = last;
      client.send({ t: "ack", seq: last });
    }
    return client.texts("exit").length === 1;
  }, 20_000);
  const line = client.lines().find((frame) => frame.type === "fake_final");
  assert.equal((line?.data as string | undefined)?.length, 3_000_000, "every byte, once");
  assert.deepEqual(
    client.outputSeqs(),
    client.outputSeqs().map((_, i) => i + 1),
    "no gap, no repeat",
  );
});
