import assert from "node:assert/strict";
import { type PoolHealth, SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import type { DuplexSession } from "../../../../src/session/duplex_session.ts";
import { CountingLaunch, EventLog, fakePool, FakeState, until } from "./_helpers.ts";

Deno.test("SessionPool never runs more than maxLive processes, starting and closing ones counted", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const counter = new CountingLaunch();
  const snapshots: PoolHealth[] = [];
  const pool: SessionPool = new SessionPool(fakePool(state, log, {
    maxLive: 2,
    launch: counter.launch,
    onEvent: (event) => {
      log.listener(event);
      snapshots.push(pool.health);
    },
  }));
  try {
    const keys = ["a", "b", "c", "d", "e"];
    for (const round of [0, 1]) {
      const turns = await Promise.all(
        keys.map((key) => pool.withSession(key, (s) => s.send(`${key}${round} [[slow:20]]`))),
      );
      for (const [i, turn] of turns.entries()) {
        // Every conversation kept its history across its evictions.
        const earlier = round === 0 ? "none" : `${keys[i]}0 [[slow:20]]`;
        assert.match(
          turn.result.text,
          new RegExp(`earlier: ${earlier.replace(/[[\]]/g, "\\$&")}$`),
        );
      }
    }
    assert.ok(counter.max <= 2, `${counter.max} processes at once`);
    assert.equal(counter.launched, 10);
    for (const health of snapshots) {
      assert.ok(health.live + health.closing <= 2, JSON.stringify(health));
    }
    let running = 0;
    for (const event of log.events) {
      if (event.type === "started") running++;
      if (event.type === "hibernated" || event.type === "crashed") running--;
      assert.ok(running <= 2, `${running} live after ${log.types}`);
    }
    const health = pool.health;
    assert.equal(log.of("started").length, 10);
    assert.equal(health.hibernations, 10 - health.live);
    assert.equal(health.evictions, health.hibernations);
    assert.equal(health.live + health.hibernated, 5);
  } finally {
    await pool.close();
  }
  await state.assertAllGone();
});

Deno.test("SessionPool.acquire() serves waiting acquires in arrival order, before newcomers", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1 }));
  await pool.acquire("a");
  const order: string[] = [];
  function take(key: string): Promise<void> {
    return pool.acquire(key).then(() => {
      order.push(key);
      pool.release(key);
    });
  }
  const waits = ["b", "c", "d"].map(take);
  await log.waitFor("waiting", 3);
  assert.deepEqual(log.of("waiting").map((e) => [e.key, e.position]), [
    ["b", 1],
    ["c", 2],
    ["d", 3],
  ]);
  assert.equal(pool.health.waiting, 3);
  pool.release("a");
  const newcomer = take("e"); // arrives after the three: served after them
  await Promise.all([...waits, newcomer]);
  assert.deepEqual(order, ["b", "c", "d", "e"]);
  assert.equal(pool.health.waiting, 0);
});

Deno.test("SessionPool.acquire() rejects with pool_exhausted at once beyond maxWaiting", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1, maxWaiting: 1 }));
  await pool.acquire("a");
  const waiting = pool.acquire("b", { timeoutMs: 5000 });
  await log.waitFor("waiting");
  await t.step("the next one is refused at once, and leaves nothing behind", async () => {
    const began = performance.now();
    await assert.rejects(pool.acquire("c"), (error: unknown) => {
      assert.ok(isDuplexError(error, "pool_exhausted"), String(error));
      assert.match(error.message, /maxWaiting/);
      return true;
    });
    assert.ok(performance.now() - began < 200, `${performance.now() - began} ms`);
    assert.equal(pool.health.exhausted, 1);
    assert.equal(pool.health.waiting, 1);
    assert.equal(pool.peek("c"), undefined);
    assert.equal(pool.health.hibernated, 0);
  });
  await t.step("the waiting one is served once room is made", async () => {
    pool.release("a");
    const b = await waiting;
    assert.ok(b.alive);
    assert.equal(pool.peek("b")?.holds, 1);
    pool.release("b");
  });
});

Deno.test("SessionPool.acquire() honours its signal and timeout and leaves no hold behind", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1, idleMs: 300 }));
  const a = await pool.acquire("a");

  await t.step("a signal that aborts while waiting rejects with its reason", async () => {
    const controller = new AbortController();
    const reason = new Error("the caller gave up");
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(pool.acquire("b", { signal: controller.signal }), (e) => e === reason);
    assert.equal(pool.health.waiting, 0);
    assert.equal(pool.peek("b"), undefined);
  });
  await t.step("an aborted signal rejects at once", async () => {
    const reason = new Error("before");
    await assert.rejects(
      pool.acquire("b", { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
    assert.equal(pool.peek("b"), undefined);
  });
  await t.step("timeoutMs rejects with a timeout error", async () => {
    const began = performance.now();
    await assert.rejects(pool.acquire("b", { timeoutMs: 80 }), (error: unknown) => {
      assert.ok(isDuplexError(error, "timeout"), String(error));
      return true;
    });
    const took = performance.now() - began;
    assert.ok(took >= 75 && took < 1000, `${took} ms`);
    assert.equal(pool.health.waiting, 0);
    assert.equal(pool.peek("b"), undefined);
  });
  await t.step("a timeout of the pool's acquireTimeoutMs applies too", async () => {
    await using other = new SessionPool(
      fakePool(state, new EventLog(), { maxLive: 1, acquireTimeoutMs: 150 }),
    );
    await other.acquire("y", { timeoutMs: 30_000 }); // a start on a loaded machine may take longer
    await assert.rejects(other.acquire("x"), (error: unknown) => isDuplexError(error, "timeout"));
    assert.equal(other.peek("x"), undefined);
  });
  await t.step("the held conversation was never disturbed", async () => {
    assert.equal(pool.peek("a")?.holds, 1);
    assert.ok(a.alive);
    assert.equal((await a.send("still here")).result.text.startsWith("turn 1 "), true);
  });
  await t.step("a signal that aborts during the start leaves the started one unheld", async () => {
    pool.release("a");
    await pool.forget("a"); // its slot is free once this resolves: "s" starts at once
    // The CLI answers its initialize 500 ms late, so the abort lands during the start
    // however fast or loaded the machine is (a 20 ms timer raced a fast start).
    const slow = `${state.dir}/.fake-slow-start`;
    await Deno.writeTextFile(slow, "500");
    const controller = new AbortController();
    const acquiring = pool.acquire("s", { signal: controller.signal });
    await until(() => pool.peek("s")?.state === "starting", "s starting");
    controller.abort(new Error("stop"));
    await assert.rejects(acquiring, /stop/);
    assert.equal(pool.peek("s")?.state, "starting");
    await until(() => pool.peek("s")?.state === "live", "s started");
    await Deno.remove(slow);
    assert.equal(pool.peek("s")?.holds, 0);
    const s: DuplexSession = await pool.acquire("s");
    assert.equal(log.of("started").filter((e) => e.key === "s").length, 1);
    assert.ok(s.alive);
    pool.release("s");
  });
  await t.step("bad arguments are refused before anything waits", async () => {
    await assert.rejects(pool.acquire(""), TypeError);
    await assert.rejects(pool.acquire("k", { timeoutMs: 0 }), RangeError);
    await assert.rejects(pool.acquire("k", { timeoutMs: -1 }), RangeError);
    assert.equal(pool.peek("k"), undefined);
  });
});

Deno.test("SessionPool.acquire() of one key at once starts one process; holds add up", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1, maxWaiting: 0 }));
  await t.step("two acquires of a new key share its start", async () => {
    const [x, y] = await Promise.all([pool.acquire("a"), pool.acquire("a")]);
    assert.equal(x, y);
    assert.equal(log.of("started").length, 1);
    assert.equal(pool.peek("a")?.holds, 2);
  });
  await t.step("a held key is served at the limit, without waiting", async () => {
    const again = await pool.acquire("a");
    assert.equal(pool.peek("a")?.holds, 3);
    assert.ok(again.alive);
    for (let i = 0; i < 3; i++) pool.release("a");
  });
  await t.step("an acquire that evicts waits for the close even with maxWaiting 0", async () => {
    const b = await pool.acquire("b");
    assert.deepEqual(log.of("hibernated").map((e) => e.key), ["a"]);
    await assert.rejects(pool.acquire("c"), (e) => isDuplexError(e, "pool_exhausted"));
    assert.ok(b.alive);
  });
  await t.step("withSession() releases when its function throws", async () => {
    pool.release("b");
    await assert.rejects(
      pool.withSession("b", () => {
        throw new Error("inside");
      }),
      /inside/,
    );
    assert.equal(pool.peek("b")?.holds, 0);
  });
});

Deno.test("SessionPool serves a waiting acquire when a live conversation crashes", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { maxLive: 1 }));
  const a = await pool.acquire("a");
  const waiting = pool.acquire("b");
  await log.waitFor("waiting");
  await assert.rejects(a.send("[[crash]]"));
  const b = await waiting;
  assert.ok(b.alive);
  assert.equal(log.of("crashed")[0]?.key, "a");
  assert.equal(pool.peek("a")?.holds, 1, "its holder still holds it");
});
