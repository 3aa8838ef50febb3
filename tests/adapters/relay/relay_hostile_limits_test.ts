/**
 * Hostile tenants of one relay (issue 21, finding 7): per-owner caps. Bob
 * cannot take every live slot, and Bob's churn of hibernated sessions drops
 * his own oldest, never Alice's; a relay of one owner keeps the whole.
 */

import assert from "node:assert/strict";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { type RelayOptions, serveRelay } from "../../../adapters/relay/mod.ts";
import { makeTestDir, startRelay, TestClient, TOKEN, userLine, waitFor } from "./_client.ts";

const ALICE = "alice-static-token-0123456789";
const BOB = "bob-static-token-9876543210ab";

/** Connects as `token` and sends a hello; waits for its ready or error. */
async function hello(
  url: string,
  token: string,
  message: Record<string, unknown> = { spawn: {} },
): Promise<TestClient> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)]);
  await client.opened;
  client.send({ t: "hello", v: 1, ...message });
  await client.until(
    "ready or error",
    () => client.texts("ready").length > 0 || client.texts("error").length > 0,
    10_000,
  );
  return client;
}

function ready(client: TestClient): Record<string, unknown> | undefined {
  return client.texts("ready")[0];
}

/** A turn, everything acknowledged, then the connection dropped (the session waits). */
async function leave(client: TestClient): Promise<{ session: string; after: number }> {
  client.send({ t: "in", seq: 1, line: userLine("one") });
  await client.until("result", () => client.lines().some((line) => line.type === "result"));
  const after = client.lastSeq();
  client.send({ t: "ack", seq: after });
  await client.close();
  return { session: ready(client)!.session as string, after };
}

Deno.test("per-owner caps: one tenant cannot starve the others", async (t) => {
  await t.step("Bob cannot take every live slot (a quarter of maxSessions)", async () => {
    await using env = await startRelay({ tokens: [ALICE, BOB], maxSessions: 4 });
    const url = env.relay.url;
    const bobs: TestClient[] = [];
    try {
      for (let i = 0; i < 4; i++) bobs.push(await hello(url, BOB));
      assert.equal(bobs.filter(ready).length, 1, "one of four: his share");
      for (const refused of bobs.slice(1)) {
        const error = refused.texts("error")[0]!;
        assert.equal(error.kind, "busy");
        assert.match(String(error.message), /maxSessionsPerOwner/);
        assert.match(String(error.message), /holds 1 already/);
      }
      const alice = await hello(url, ALICE);
      bobs.push(alice);
      assert.ok(ready(alice), JSON.stringify(alice.texts("error")));
      assert.equal(env.relay.sessionCount, 2);
      // A slot freed is his again.
      const first = bobs.find(ready)!;
      first.send({ t: "close" });
      const exit = await first.next("exit");
      first.send({ t: "ack", seq: exit.seq });
      await waitFor("Bob's session's end", () => env.relay.sessionCount === 1);
      const again = await hello(url, BOB);
      bobs.push(again);
      assert.ok(ready(again), JSON.stringify(again.texts("error")));
    } finally {
      for (const client of bobs) await client.close();
    }
  });

  await t.step("a wake beyond the owner's share is busy, and the session stays", async () => {
    await using env = await startRelay({ tokens: [ALICE, BOB], maxSessions: 4, graceMs: 200 });
    const url = env.relay.url;
    const slept = await leave(await hello(url, BOB));
    await waitFor("the hibernation", () => env.relay.hibernatedCount === 1);
    const live = await hello(url, BOB);
    await using _live = live;
    assert.ok(ready(live));
    const wake = await hello(url, BOB, { resume: slept });
    await using _wake = wake;
    assert.equal(wake.texts("error")[0]?.kind, "busy");
    assert.equal(env.relay.hibernatedCount, 1, "still hibernated");
  });

  await t.step("Bob's churn drops his own hibernated sessions, never Alice's", async () => {
    await using env = await startRelay({ tokens: [ALICE, BOB], graceMs: 200, maxHibernated: 4 });
    const { relay } = env;
    const alices = await leave(await hello(relay.url, ALICE));
    await waitFor("Alice's hibernation", () => relay.sessionCount === 0);
    assert.equal(relay.hibernatedCount, 1);
    // Bob hibernates five, four at once (his live share of 16) and one more.
    const bobs: { session: string; after: number }[] = [];
    for (const batch of [4, 1]) {
      const clients = await Promise.all(Array.from({ length: batch }, () => hello(relay.url, BOB)));
      assert.ok(clients.every(ready), "Bob's sessions start");
      bobs.push(...await Promise.all(clients.map(leave)));
      await waitFor("Bob's hibernations", () => relay.sessionCount === 0);
    }
    const alice = await hello(relay.url, ALICE, { resume: alices });
    await using _alice = alice;
    assert.equal(ready(alice)?.resumed, true, `Alice's: ${JSON.stringify(alice.texts("error"))}`);
    assert.equal(relay.hibernatedCount, 1, "Bob's share of one left");
    for (const dropped of bobs.slice(0, 4)) {
      const bob = await hello(relay.url, BOB, { resume: dropped });
      await using _ = bob;
      assert.equal(bob.texts("error")[0]?.kind, "unknown_session", "his own oldest went");
    }
    const newest = await hello(relay.url, BOB, { resume: bobs[4]! });
    await using _newest = newest;
    assert.equal(ready(newest)?.resumed, true, "his newest is kept");
  });

  await t.step("with one static token and no secrets the one owner gets the whole", async () => {
    await using env = await startRelay({ maxSessions: 3 });
    const clients = await Promise.all([0, 1, 2, 3].map(() => hello(env.relay.url, TOKEN)));
    try {
      assert.equal(clients.filter(ready).length, 3);
      const error = clients.flatMap((client) => client.texts("error"))[0]!;
      assert.match(String(error.message), /the relay runs its maximum of 3/);
    } finally {
      for (const client of clients) await client.close();
    }
  });
});

Deno.test("serveRelay() checks maxSessionsPerOwner and maxHibernatedPerOwner", async () => {
  const workspace = await makeTestDir();
  try {
    for (const name of ["maxSessionsPerOwner", "maxHibernatedPerOwner"]) {
      for (const value of [0, -1, 1.5, Number.NaN]) {
        assert.throws(
          () => serveRelay({ tokens: [TOKEN], workspace, [name]: value } as RelayOptions),
          (error: Error) => error.name === "DuplexError" && error.message.includes(name),
          `${name}: ${value}`,
        );
      }
      assert.throws(
        () => serveRelay({ tokens: [TOKEN], workspace, [name]: "2" } as RelayOptions),
        TypeError,
      );
    }
    await using relay = serveRelay({
      tokens: [ALICE, BOB],
      workspace,
      maxSessions: 2,
      maxSessionsPerOwner: 2,
      maxHibernatedPerOwner: 5,
    } as RelayOptions);
    assert.equal(relay.sessionCount, 0);
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
