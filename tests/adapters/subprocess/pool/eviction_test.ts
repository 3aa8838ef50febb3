import assert from "node:assert/strict";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import type { PermissionRequest } from "../../../../src/permissions/permission.ts";
import { EventLog, fakePool, FakeState, until } from "./_helpers.ts";

function evicted(log: EventLog): string[] {
  return log.of("hibernated").filter((e) => e.reason === "evicted").map((e) => e.key);
}

Deno.test("SessionPool evicts the least recently used idle conversation first", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 2 }));
  await pool.withSession("a", (s) => s.send("a1"));
  await pool.withSession("b", (s) => s.send("b1"));
  await pool.withSession("a", (s) => s.send("a2")); // a is used last: b is the oldest
  await pool.withSession("c", (s) => s.send("c1"));
  assert.deepEqual(evicted(log), ["b"]);
  assert.equal(pool.peek("b")?.state, "hibernated");
  assert.equal(pool.peek("a")?.state, "live");
  await pool.withSession("d", (s) => s.send("d1")); // a (used before c) goes next
  assert.deepEqual(evicted(log), ["b", "a"]);
  assert.equal(pool.health.evictions, 2);
});

Deno.test("SessionPool never evicts a held conversation", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 2 }));
  await pool.acquire("a"); // held, and the least recently used
  await pool.withSession("b", (s) => s.send("b1"));
  const c = await pool.acquire("c");
  assert.deepEqual(evicted(log), ["b"]);
  await assert.rejects(pool.acquire("d", { timeoutMs: 300 }), (e) => isDuplexError(e, "timeout"));
  assert.deepEqual(evicted(log), ["b"], "a and c are held");
  assert.ok(c.alive);
  assert.equal(pool.peek("a")?.state, "live");
});

Deno.test("SessionPool never evicts a conversation whose turn runs after its release", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 2 }));
  const a = await pool.acquire("a");
  // Long enough for two cold starts on a loaded machine; interrupted once they are done.
  const turn = a.send("long [[slow:60000]]");
  pool.release("a"); // released with its turn still running; a is the oldest
  await pool.withSession("b", (s) => s.send("b1"));
  assert.equal(pool.peek("a")?.busy, true);
  await pool.withSession("c", (s) => s.send("c1"));
  assert.deepEqual(evicted(log), ["b"]);
  assert.equal(pool.peek("a")?.busy, true, "a's turn still runs: it was never a candidate");
  await a.interrupt();
  assert.deepEqual((await turn).result.errors, ["interrupted"]);
  assert.ok(a.alive);
  await pool.withSession("d", (s) => s.send("d1")); // now idle and the oldest: a goes
  assert.deepEqual(evicted(log), ["b", "a"]);
});

Deno.test("SessionPool never evicts a conversation with a permission pending", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const asked: { key: string; request: PermissionRequest }[] = [];
  await using pool = new SessionPool(fakePool(state, log, {
    maxLive: 2,
    onPermission: (request, { key }) => {
      asked.push({ key, request });
      return { behavior: "defer" };
    },
  }));
  const a = await pool.acquire("a");
  const turn = a.send("may I [[permission]]");
  await until(() => a.pendingPermissions.length === 1, "a's permission request");
  pool.release("a");
  await pool.withSession("b", (s) => s.send("b1"));
  await pool.withSession("c", (s) => s.send("c1"));
  assert.deepEqual(evicted(log), ["b"]);
  assert.equal(pool.peek("a")?.busy, true);
  assert.deepEqual(asked.map((ask) => ask.key), ["a"]);
  await a.respondToPermission(asked[0]!.request.requestId, { behavior: "allow" });
  assert.match((await turn).result.text, /permission: allow$/);
  await pool.withSession("d", (s) => s.send("d1"));
  assert.deepEqual(evicted(log), ["b", "a"]);
});

Deno.test("SessionPool counts a conversation used until its release", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 2 }));
  const a = await pool.acquire("a"); // acquired first, and held the longest
  await pool.withSession("b", (s) => s.send("b1")); // idle since
  await a.send("a1");
  pool.release("a");
  await pool.withSession("c", (s) => s.send("c1"));
  assert.deepEqual(evicted(log), ["b"], "b has been idle longer than a");
});
