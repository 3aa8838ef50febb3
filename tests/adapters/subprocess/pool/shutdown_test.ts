import assert from "node:assert/strict";
import { type PoolEvent, SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import { delay, EventLog, fakePool, fakeProcess, FakeState, until } from "./_helpers.ts";

/** A folder whose processes (and claims) take `ms` to get ready. */
async function slowFolder(state: FakeState, ms: number): Promise<string> {
  const folder = `${state.other}/slow`;
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(`${folder}/.fake-slow-start`, String(ms));
  return folder;
}

function isClosed(error: unknown): boolean {
  return isDuplexError(error, "closed");
}

Deno.test("SessionPool.close() rejects acquires and ends every process of every kind", async (t) => {
  await using state = await FakeState.make();
  const slow = await slowFolder(state, 8000);
  const log = new EventLog();
  // The pool's own park folder is made in the temporary folder: keep it in the test's.
  const tmp = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", state.other);
  const { parkDir: _given, ...options } = fakePool(state, log, {
    spares: 1,
    parkedSpares: 1,
    maxLive: 3,
  });
  const pool = new SessionPool(options);
  const events: PoolEvent[] = [];
  const subscription = pool.subscribe();
  const reading = (async () => {
    for await (const event of subscription) events.push(event);
  })();
  try {
    await log.waitFor("spare_ready", 2); // the park folder is made by then
  } finally {
    if (tmp === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", tmp);
  }
  const parkDir = (await state.starts()).find((s) => s.args.includes("--await-claim"))!.cwd;
  assert.ok(parkDir.startsWith(state.other), parkDir);
  const a = await pool.acquire("a");
  const b = await pool.acquire("b");
  // Spares are replaced once a new conversation's first turn has ended.
  await a.send("first");
  await b.send("first");
  await until(() => pool.health.spares + pool.health.parked >= 1, "a replacement spare");
  const starting = pool.acquire("c", { cwd: slow }).catch((error) => error);
  await until(() => pool.peek("c")?.state === "starting", "c starting");
  const waiting = pool.acquire("d").catch((error) => error);
  await log.waitFor("waiting");

  const began = performance.now();
  const closing = pool.close();
  await t.step("waiting, starting and later acquires reject with closed", async () => {
    assert.ok(isClosed(await waiting), String(await waiting));
    assert.ok(isClosed(await starting), String(await starting));
    await assert.rejects(pool.acquire("e"), isClosed);
    await assert.rejects(pool.acquire("a"), isClosed);
  });
  await t.step("close() is prompt, and idempotent", async () => {
    assert.equal(pool.close(), closing);
    await closing;
    const took = performance.now() - began;
    assert.ok(took < 4000, `close took ${took} ms (a start was still waiting for the CLI)`);
    await pool.close();
  });
  await t.step("no process survives, and the pool's park folder is gone", async () => {
    assert.ok(!a.alive && !b.alive);
    assert.ok((await state.starts()).length >= 4, "spares, parked, live, starting");
    await state.assertAllGone();
    await assert.rejects(Deno.stat(parkDir), Deno.errors.NotFound);
    const health = pool.health;
    assert.deepEqual([health.live, health.spares, health.parked, health.waiting], [0, 0, 0, 0]);
  });
  await t.step("subscribers see the closed event, then the end", async () => {
    await reading;
    assert.equal(events.at(-1)?.type, "closed");
    assert.equal(log.of("closed").length, 1);
  });
});

Deno.test("SessionPool.close() during the spares' start is prompt and leaves no process", async () => {
  await using state = await FakeState.make();
  const slow = await slowFolder(state, 8000);
  const log = new EventLog();
  const pool = new SessionPool(
    fakePool(state, log, {
      spares: 2,
      prewarmConcurrency: 2,
      process: fakeProcess(state, {}, { cwd: slow }),
    }),
  );
  await until(async () => (await state.starts()).length === 2, "both spares spawned");
  await delay(100); // their initialize is pending
  const began = performance.now();
  await pool.close();
  assert.ok(performance.now() - began < 4000);
  assert.equal(log.of("spare_ready").length, 0);
  await state.assertAllGone();
});

Deno.test("SessionPool closes everything at the end of an await using block", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  let pid: number | undefined;
  {
    await using pool = new SessionPool(fakePool(state, log, { spares: 1 }));
    const session = await pool.acquire("a");
    pid = session.pid;
    await session.send("hi");
    await log.waitFor("spare_ready", 2);
  }
  assert.equal(log.of("closed").length, 1);
  assert.ok((await state.starts()).some((s) => s.pid === pid));
  await state.assertAllGone();
});

Deno.test("SessionPool closes a start slower than startTimeoutMs and rejects with timeout", async () => {
  await using state = await FakeState.make();
  const slow = await slowFolder(state, 8000);
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { startTimeoutMs: 300 }));
  const began = performance.now();
  await assert.rejects(pool.acquire("a", { cwd: slow }), (e) => isDuplexError(e, "timeout"));
  assert.ok(performance.now() - began < 3000);
  assert.equal(log.of("start_failed").length, 1);
  assert.equal(pool.health.failures, 1);
  await state.assertAllGone();
  assert.equal(pool.peek("a"), undefined);
});
