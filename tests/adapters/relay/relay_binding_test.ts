/**
 * Defect 7 of issue 11: every relay session is bound to the credential that
 * created it. A resume by any other credential is answered exactly like a
 * resume of an unknown session, and never touches the owner's connection.
 */

import assert from "node:assert/strict";
import { bearerProtocol, CLOSE, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { openSession, startRelay, TestClient, TOKEN, userLine } from "./_client.ts";

const OTHER = "other-token-9876543210";

/** What a refused resume looked like to the client. */
interface Answer {
  readonly errors: Record<string, unknown>[];
  readonly code: number;
  readonly reason: string;
  readonly readies: number;
}

async function resumeAs(
  url: string,
  token: string,
  session: unknown,
  after: number,
): Promise<Answer> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)]);
  await using _ = client;
  await client.opened;
  client.send({ t: "hello", v: 1, resume: { session, after } });
  const code = await client.closeCode();
  const event = await client.closed;
  return {
    errors: client.texts("error"),
    code,
    reason: event.reason,
    readies: client.texts("ready").length,
  };
}

function results(client: TestClient): unknown[] {
  return client.lines().filter((line) => line.type === "result").map((line) => line.result);
}

Deno.test("a relay session is bound to the static token that created it", async (t) => {
  await using env = await startRelay({ tokens: [TOKEN, OTHER] });
  const url = env.relay.url;
  const { client: owner, ready } = await openSession(url);
  await using _owner = owner;
  owner.send({ t: "in", seq: 1, line: userLine("mine") });
  await owner.until("the owner's result", () => results(owner).length === 1);
  const unknown = await resumeAs(url, OTHER, "no-such-session-token", 0);

  await t.step("an unknown session: unknown_session, 4004", () => {
    assert.equal(unknown.errors.length, 1);
    assert.equal(unknown.errors[0]!.kind, "unknown_session");
    assert.equal(unknown.code, CLOSE.cannotResume);
    assert.equal(unknown.readies, 0);
  });

  await t.step("another token's resume is answered exactly like an unknown session", async () => {
    for (const after of [0, owner.lastSeq(), 10_000]) {
      const answer = await resumeAs(url, OTHER, ready.session, after);
      assert.deepEqual(answer, unknown, `resume after ${after}`);
    }
  });

  await t.step("the owner's socket was not evicted and its session goes on", async () => {
    assert.equal(owner.socket.readyState, WebSocket.OPEN);
    owner.send({ t: "in", seq: 2, line: userLine("still mine") });
    await owner.until("the second result", () => results(owner).length === 2);
    assert.deepEqual(results(owner), ["mine", "still mine"]);
    assert.equal(env.relay.sessionCount, 1);
  });

  await t.step("no timing difference worth measuring between the two answers", async () => {
    const time = async (session: unknown): Promise<number> => {
      const started = performance.now();
      await resumeAs(url, OTHER, session, 0);
      return performance.now() - started;
    };
    const strangers: number[] = [];
    const unknowns: number[] = [];
    for (let i = 0; i < 20; i++) {
      strangers.push(await time(ready.session));
      unknowns.push(await time(`no-such-${i}`));
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
    const gap = Math.abs(median(strangers) - median(unknowns));
    assert.ok(
      gap < Math.max(3, 0.5 * median(unknowns)),
      `medians ${median(strangers).toFixed(2)} ms and ${median(unknowns).toFixed(2)} ms`,
    );
    assert.equal(owner.socket.readyState, WebSocket.OPEN);
  });

  await t.step("the same token resumes it (a reconnect), replacing the old socket", async () => {
    const again = new TestClient(url);
    await using _ = again;
    await again.opened;
    again.send({ t: "hello", v: 1, resume: { session: ready.session, after: owner.lastSeq() } });
    assert.equal((await again.next("ready")).resumed, true);
    assert.equal(await owner.closeCode(), CLOSE.replaced);
    assert.equal(await env.spawns(1), 1, "one CLI served it all");
  });
});
