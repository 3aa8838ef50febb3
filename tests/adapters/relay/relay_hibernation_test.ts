/**
 * Hibernation at the relay: a disconnected session whose grace ended has its
 * process closed, and the same credential resumes it later in a new process
 * started with `--resume` (the CLI's session id the relay gave the first
 * one), with its sequence numbers continued.
 */

import assert from "node:assert/strict";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { HIBERNATED_TAIL_BYTES } from "../../../adapters/relay/_hibernation.ts";
import {
  isGone,
  openSession,
  startRelay,
  TestClient,
  TOKEN,
  userLine,
  waitFor,
  waitGone,
} from "./_client.ts";

const OTHER = "other-token-9876543210";
/** The stand-in CLI first reports its arguments. */
const HELLO = { FAKE_CLAUDE_HELLO: "1" };

function resume(url: string, session: unknown, after: number, token = TOKEN): TestClient {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)]);
  client.opened.then(() => client.send({ t: "hello", v: 1, resume: { session, after } }));
  return client;
}

function helloArgs(client: TestClient): string[] {
  const hello = client.lines().find((line) => line.type === "fake_hello");
  return (hello?.args as string[] | undefined) ?? [];
}

function flagValue(args: string[], flag: string): string | undefined {
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

function results(client: TestClient): unknown[] {
  return client.lines().filter((line) => line.type === "result").map((line) => line.result);
}

/** Whether the stdout received so far ends with a whole line (a long one comes in pieces). */
function whole(client: TestClient): boolean {
  return client.stdout().endsWith("\n");
}

/** Opens a session, runs one turn, acknowledges everything and leaves; waits for its process to go. */
async function hibernated(url: string, relay: { readonly hibernatedCount: number }) {
  const { client, ready } = await openSession(url);
  await client.until("fake_hello", () => helloArgs(client).length > 0);
  client.send({ t: "in", seq: 1, line: userLine("one") });
  await client.until("result one", () => results(client).length === 1);
  const after = client.lastSeq();
  client.send({ t: "ack", seq: after });
  const cliSessionId = flagValue(helloArgs(client), "--session-id");
  await client.close();
  assert.ok(await waitGone(ready.pid as number, 5000), "the process is closed after the grace");
  await waitFor("the hibernation", () => relay.hibernatedCount === 1);
  return { ready, after, cliSessionId };
}

Deno.test("relay hibernation", async (t) => {
  await t.step(
    "the grace ends: the process goes, the same client resumes it with --resume",
    async () => {
      await using env = await startRelay({ graceMs: 200 }, HELLO);
      const { ready, after, cliSessionId } = await hibernated(env.relay.url, env.relay);
      assert.match(cliSessionId ?? "", /^[0-9a-f-]{36}$/, "the relay names the CLI's session");
      assert.equal(env.relay.sessionCount, 0, "no process is kept");
      const health =
        await (await fetch(env.relay.url.replace("ws:", "http:").replace("/v1", "/health")))
          .json();
      assert.deepEqual(health, { ok: true, sessions: 0, hibernated: 1 });

      const again = resume(env.relay.url, ready.session, after);
      await using _ = again;
      const woken = await again.next("ready");
      assert.equal(woken.resumed, true);
      assert.equal(woken.session, ready.session, "the same session token");
      assert.notEqual(woken.pid, ready.pid, "a new process");
      assert.equal(woken.inSeq, 1, "the input numbering continues");
      assert.equal(ready.gone, undefined, "a new session's CLI took nothing before it");
      // A new CLI: the one before took input 1, and its last output the client can get is kept.
      const gone = woken.gone as { inSeq: number; outSeq: number } | undefined;
      assert.equal(gone?.inSeq, 1);
      assert.ok((gone?.outSeq ?? 0) >= after, JSON.stringify(gone));
      await again.until("fake_hello", () => helloArgs(again).length > 0);
      assert.equal(flagValue(helloArgs(again), "--resume"), cliSessionId, "resumed by its id");
      assert.equal(flagValue(helloArgs(again), "--session-id"), undefined);
      assert.ok(again.outputSeqs().every((seq) => seq > after), "output numbering continues");
      again.send({ t: "in", seq: 2, line: userLine("two") });
      await again.until("result two", () => results(again).includes("two"));
      assert.equal(env.relay.hibernatedCount, 0);
      assert.equal(await env.spawns(2), 2);
    },
  );

  await t.step("another credential gets unknown_session; the owner still resumes", async () => {
    await using env = await startRelay({ graceMs: 200, tokens: [TOKEN, OTHER] }, HELLO);
    const { ready, after } = await hibernated(env.relay.url, env.relay);
    const thief = resume(env.relay.url, ready.session, after, OTHER);
    await using _thief = thief;
    assert.equal((await thief.next("error")).kind, "unknown_session");
    assert.equal(env.relay.hibernatedCount, 1, "a stranger's attempt takes nothing");
    assert.equal(await env.spawns(1), 1, "nothing was started for the stranger");
    const owner = resume(env.relay.url, ready.session, after);
    await using _owner = owner;
    assert.equal((await owner.next("ready")).resumed, true);
  });

  await t.step("a resume from before what was kept is resume_gap", async () => {
    await using env = await startRelay({ graceMs: 200 }, HELLO);
    const { ready } = await hibernated(env.relay.url, env.relay);
    const early = resume(env.relay.url, ready.session, 0);
    await using _ = early;
    assert.equal((await early.next("error")).kind, "resume_gap");
  });

  await t.step("the unacknowledged tail is kept and replayed", async () => {
    await using env = await startRelay({ graceMs: 200 });
    const { client, ready } = await openSession(env.relay.url);
    client.send({ t: "in", seq: 1, line: userLine("kept") });
    await client.until("result", () => results(client).length === 1);
    await client.close(); // nothing acknowledged
    assert.ok(await waitGone(ready.pid as number, 5000));
    await waitFor("the hibernation", () => env.relay.hibernatedCount === 1);
    const again = resume(env.relay.url, ready.session, 0);
    await using _ = again;
    assert.equal((await again.next("ready")).resumed, true);
    await again.until("the replayed result", () => results(again).includes("kept"));
  });

  await t.step(
    "a tail over 64 KiB is not kept: only a resume that lacks none of it wakes",
    async () => {
      await using env = await startRelay({ graceMs: 200 });
      const { client, ready } = await openSession(env.relay.url);
      const long = "x".repeat(HIBERNATED_TAIL_BYTES);
      client.send({ t: "in", seq: 1, line: userLine(long) });
      await client.until("the long result", () => whole(client) && results(client).includes(long));
      await client.close(); // nothing acknowledged: more than the bound is unacknowledged
      assert.ok(await waitGone(ready.pid as number, 5000));
      await waitFor("the hibernation", () => env.relay.hibernatedCount === 1);
      const early = resume(env.relay.url, ready.session, 0);
      await using _early = early;
      assert.equal((await early.next("error")).kind, "resume_gap", "the tail was not kept");

      const other = await openSession(env.relay.url);
      other.client.send({ t: "in", seq: 1, line: userLine(long) });
      await other.client.until(
        "the long result",
        () => whole(other.client) && results(other.client).includes(long),
      );
      const seen = other.client.lastSeq();
      await other.client.close();
      assert.ok(await waitGone(other.ready.pid as number, 5000));
      await waitFor("the hibernation", () => env.relay.hibernatedCount === 1);
      const again = resume(env.relay.url, other.ready.session, seen);
      await using _again = again;
      assert.equal((await again.next("ready")).resumed, true, "it had everything");
      assert.ok(again.outputSeqs().every((seq) => seq > seen), "nothing replayed");
    },
  );

  await t.step("a woken session whose client asks for unsent output sleeps again", async () => {
    await using env = await startRelay({ graceMs: 200 }, HELLO);
    const { ready, after } = await hibernated(env.relay.url, env.relay);
    const ahead = resume(env.relay.url, ready.session, after + 50);
    await using _ahead = ahead;
    assert.equal((await ahead.next("error", 10_000)).kind, "protocol");
    // Woken for nobody: it waits for the grace as after a drop, then sleeps (no process kept).
    await waitFor(
      "the next hibernation",
      () => env.relay.sessionCount === 0 && env.relay.hibernatedCount === 1,
    );
    const again = resume(env.relay.url, ready.session, after);
    await using _again = again;
    assert.equal((await again.next("ready", 10_000)).resumed, true, "still resumable");
    assert.equal(await env.spawns(3), 3, "one process for each wake");
  });

  await t.step("maxHibernated drops the oldest", async () => {
    await using env = await startRelay({ graceMs: 200, maxHibernated: 1 }, HELLO);
    const first = await hibernated(env.relay.url, env.relay);
    const second = await hibernated(env.relay.url, env.relay);
    assert.equal(env.relay.hibernatedCount, 1);
    const old = resume(env.relay.url, first.ready.session, first.after);
    await using _old = old;
    assert.equal((await old.next("error")).kind, "unknown_session");
    const kept = resume(env.relay.url, second.ready.session, second.after);
    await using _kept = kept;
    assert.equal((await kept.next("ready")).resumed, true);
  });

  await t.step("without session persistence nothing is hibernated", async () => {
    await using env = await startRelay({ graceMs: 200 }, HELLO, {
      persistSession: false,
    });
    const { client, ready } = await openSession(env.relay.url);
    await client.until("fake_hello", () => helloArgs(client).length > 0);
    assert.equal(flagValue(helloArgs(client), "--session-id"), undefined);
    await client.close();
    assert.ok(await waitGone(ready.pid as number, 5000));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(env.relay.hibernatedCount, 0);
    assert.equal(isGone(ready.pid as number), true);
  });
});
