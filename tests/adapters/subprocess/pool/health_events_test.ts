import assert from "node:assert/strict";
import {
  type AcquireOptions,
  type PoolEvent,
  SessionPool,
  type SessionPoolOptions,
} from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import type { DuplexSession } from "../../../../src/session/duplex_session.ts";
import { EventLog, fakePool, fakeProcess, FakeState, until } from "./_helpers.ts";

Deno.test("SessionPool's onPermission is told which conversation asks", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const asked: { key: string; session: DuplexSession; tool: string }[] = [];
  await using pool = new SessionPool(fakePool(state, log, {
    onPermission: (request, { key, session }) => {
      asked.push({ key, session, tool: request.toolName });
      return key === "a" ? { behavior: "allow" } : { behavior: "deny", message: "not b" };
    },
  }));
  const a = await pool.acquire("a");
  const b = await pool.acquire("b");
  const [ta, tb] = await Promise.all([a.send("[[permission]]"), b.send("[[permission]]")]);
  assert.match(ta.result.text, /permission: allow$/);
  assert.match(tb.result.text, /permission: deny$/);
  assert.deepEqual(asked.map((ask) => ask.key).sort(), ["a", "b"]);
  assert.equal(asked.find((ask) => ask.key === "a")?.session, a);
  assert.equal(asked.find((ask) => ask.key === "b")?.session, b);
  assert.deepEqual(asked.map((ask) => ask.tool), ["Bash", "Bash"]);
});

Deno.test("SessionPool.health counts conversations, hand-outs and acquire waits", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1 }));
  const empty = pool.health;
  assert.deepEqual(empty.acquireWait, { count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  assert.deepEqual([empty.live, empty.hibernated, empty.waiting], [0, 0, 0]);
  const waits: number[] = [];
  async function timed(key: string): Promise<DuplexSession> {
    const began = performance.now();
    const session = await pool.acquire(key);
    waits.push(performance.now() - began);
    return session;
  }
  const a = await timed("a");
  const turn = a.send("[[slow:300]]");
  await until(() => pool.health.busy === 1, "a busy");
  assert.deepEqual([pool.health.live, pool.health.starting], [1, 0]);
  pool.release("a");
  await turn;
  await timed("b"); // evicts a
  const waiting = timed("a");
  await until(() => pool.health.waiting === 1, "a waiting");
  pool.release("b");
  await waiting; // evicts b, resumes a
  pool.release("a");
  const health = pool.health;
  assert.deepEqual(health.handouts, { spare: 0, parked: 0, cold: 2, resumed: 1 });
  assert.deepEqual(
    [health.live, health.starting, health.busy, health.hibernated, health.waiting],
    [1, 0, 0, 1, 0],
  );
  assert.deepEqual([health.hibernations, health.evictions, health.crashes], [2, 2, 0]);
  assert.deepEqual([health.failures, health.exhausted, health.spareFailures], [0, 0, 0]);
  assert.equal(health.acquireWait.count, 3);
  const most = Math.max(...waits);
  assert.ok(health.acquireWait.maxMs > 0 && health.acquireWait.maxMs <= most + 1);
  assert.ok(health.acquireWait.maxMs >= most - 50, JSON.stringify(health.acquireWait));
  assert.ok(health.acquireWait.p50Ms <= health.acquireWait.p99Ms);
  assert.ok(health.acquireWait.p99Ms <= health.acquireWait.maxMs);
});

Deno.test("SessionPool.subscribe() delivers the pool's events and ends at close", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const pool = new SessionPool(fakePool(state, log, { idleMs: 100 }));
  const seen: PoolEvent[] = [];
  const reading = (async () => {
    for await (const event of pool.subscribe()) seen.push(event);
  })();
  const lagging = pool.subscribe({ capacity: 1 });
  await pool.withSession("a", (s) => s.send("hi"));
  await log.waitFor("hibernated");
  await pool.close();
  await reading;
  assert.deepEqual(seen.map((e) => e.type), ["started", "hibernated", "closed"]);
  assert.deepEqual(seen, log.events);
  const late: PoolEvent[] = [];
  for await (const event of lagging) late.push(event);
  assert.deepEqual(late.map((e) => e.type), ["lagged", "closed"]);
});

Deno.test("SessionPool works on when an onEvent listener throws", async () => {
  await using state = await FakeState.make();
  let calls = 0;
  await using pool = new SessionPool({
    ...fakePool(state, new EventLog(), { idleMs: 100 }),
    onEvent: () => {
      calls++;
      throw new Error("a broken listener");
    },
  });
  const first = await pool.withSession("a", (s) => s.send("one"));
  await until(() => pool.peek("a")?.state === "hibernated", "hibernated");
  const second = await pool.withSession("a", (s) => s.send("two"));
  assert.match(second.result.text, /earlier: one$/);
  assert.equal(second.result.sessionId, first.result.sessionId);
  assert.equal(calls, 3); // started, hibernated, started
});

Deno.test("SessionPool.release() of an unknown key, or one not held, is a no-op", async () => {
  await using state = await FakeState.make();
  await using pool = new SessionPool(fakePool(state, new EventLog()));
  pool.release("nobody");
  assert.equal(pool.peek("nobody"), undefined);
  await pool.acquire("a");
  pool.release("a");
  pool.release("a");
  assert.equal(pool.peek("a")?.holds, 0);
  const again = await pool.acquire("a");
  assert.equal(pool.peek("a")?.holds, 1);
  assert.ok(again.alive);
  pool.release("a");
});

Deno.test("new SessionPool() checks its options before starting anything", async (t) => {
  await using state = await FakeState.make();
  const process = fakeProcess(state);
  function make(options: Record<string, unknown>): SessionPool {
    return new SessionPool(
      { process, spares: 1, launch: state.launch, ...options } as SessionPoolOptions,
    );
  }
  await t.step("counts out of range: RangeError", () => {
    const bad: [string, unknown][] = [
      ["maxLive", 0],
      ["maxLive", -1],
      ["maxLive", 1.5],
      ["maxLive", NaN],
      ["maxLive", Infinity],
      ["maxLive", "2"],
      ["maxWaiting", -1],
      ["spares", -1],
      ["spares", 0.5],
      ["parkedSpares", -2],
      ["prewarmConcurrency", 0],
    ];
    for (const [name, value] of bad) {
      assert.throws(() => make({ [name]: value }), RangeError, `${name}: ${String(value)}`);
    }
  });
  await t.step("durations out of range: RangeError", async () => {
    for (const name of ["idleMs", "acquireTimeoutMs", "startTimeoutMs"]) {
      for (const value of [0, -5, NaN, 2 ** 31, "100"]) {
        assert.throws(() => make({ [name]: value }), RangeError, `${name}: ${String(value)}`);
      }
    }
    await make({ idleMs: Infinity, spares: 0 }).close();
  });
  await t.step("wrong types: TypeError", () => {
    assert.throws(() => new SessionPool(null as unknown as SessionPoolOptions), TypeError);
    assert.throws(() => make({ process: { ...process, awaitClaim: true } }), TypeError);
    for (const name of ["onEvent", "onPermission", "launch"]) {
      assert.throws(() => make({ [name]: "yes" }), TypeError, name);
    }
    assert.throws(() => make({ parkDir: 42 }), TypeError);
    assert.throws(() => make({ parkDir: "" }), TypeError);
  });
  await t.step("a process option the CLI would refuse: invalid_argument", () => {
    assert.throws(
      () => make({ process: { ...process, permissionMode: "everything" } }),
      (error: unknown) => isDuplexError(error, "invalid_argument"),
    );
  });
  await t.step("nothing was spawned", async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(state.spawned, [], "no process launched (known at spawn)");
    assert.deepEqual(await state.starts(), []);
  });
});

Deno.test("SessionPool.acquire() refuses bad conversation options without spending a spare", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { parkedSpares: 1 }));
  await log.waitFor("spare_ready");
  for (const options of [{ cwd: 5 }, { cwd: "" }, { model: 7 }, { additionalDirectories: "x" }]) {
    await assert.rejects(
      pool.acquire("k", options as unknown as AcquireOptions),
      TypeError,
      JSON.stringify(options),
    );
  }
  assert.equal(pool.peek("k"), undefined);
  assert.equal(log.of("spare_ready").length, 1, "the parked spare was not used");
  assert.equal((await state.starts()).length, 1);
});
