import assert from "node:assert/strict";
import { subprocess, type SubprocessOptions } from "../../../../adapters/subprocess/mod.ts";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import type { TransportFactory } from "../../../../src/transport/transport.ts";
import { waitGone } from "../_helpers.ts";
import { EventLog, fakePool, fakeProcess, FakeState, initOf } from "./_helpers.ts";

Deno.test("SessionPool hands a new conversation a warm spare, then sets its model", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { spares: 1 }));
  const [ready] = await log.waitFor("spare_ready");
  assert.equal(ready?.kind, "warm");
  const [spare] = await state.starts();
  assert.equal(pool.health.spares, 1);
  await t.step("the spare serves the first acquire, and is replaced", async () => {
    const a = await pool.acquire("a");
    assert.equal(log.of("started").at(-1)?.via, "spare");
    assert.equal(a.pid, spare!.pid);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal((await state.starts()).length, 1, "no replacement during the first turn's wait");
    const turn = await a.send("hello");
    assert.equal(initOf(turn).cwd, state.dir);
    assert.equal(initOf(turn).model, "fake-model");
    await log.waitFor("spare_ready", 2);
    assert.equal(pool.health.spares, 1);
    assert.equal(pool.health.handouts.spare, 1);
    pool.release("a");
  });
  await t.step("a model and a permission mode are set after the hand-out", async () => {
    const b = await pool.acquire("b", { model: "other-model", permissionMode: "plan" });
    assert.equal(log.of("started").at(-1)?.via, "spare");
    const init = initOf(await b.send("which model?"));
    assert.equal(init.model, "other-model");
    assert.equal(init.permissionMode, "plan");
    pool.release("b");
  });
  await t.step(
    "a spare that cannot take the model is reported, closed, and the start goes cold",
    async () => {
      await log.waitFor("spare_ready", 3);
      const before = pool.health.handoutFailures;
      await pool.acquire("bad", { model: "unknown-model" });
      assert.equal(log.of("started").at(-1)?.via, "cold", "the conversation still starts");
      pool.release("bad");
      const failed = log.of("handout_failed").at(-1);
      assert.equal(failed?.kind, "warm");
      assert.equal(failed?.key, "bad");
      assert.match(String(failed?.error?.message), /invalid_model/);
      assert.equal(pool.health.handoutFailures, before + 1);
    },
  );
  await t.step("a conversation in another folder does not take it", async () => {
    await log.waitFor("spare_ready", 4);
    const c = await pool.acquire("c", { cwd: state.other });
    assert.equal(log.of("started").at(-1)?.via, "cold");
    assert.equal(initOf(await c.send("where?")).cwd, state.other);
    assert.equal(pool.health.handouts.spare, 2);
    assert.equal(pool.health.spares, 1);
    pool.release("c");
  });
});

Deno.test("SessionPool claims a parked spare for a conversation's folder", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { parkedSpares: 1 }));
  const [ready] = await log.waitFor("spare_ready");
  assert.equal(ready?.kind, "parked");
  const [parked] = await state.starts();
  assert.equal(parked?.cwd, await Deno.realPath(state.parkDir));
  assert.ok(parked?.args.includes("--await-claim"), String(parked?.args));
  assert.equal(pool.health.parked, 1);
  await t.step("claimed for another folder: the turn runs there", async () => {
    const a = await pool.acquire("a", { cwd: state.other, model: "claimed-model" });
    assert.equal(log.of("started").at(-1)?.via, "parked");
    assert.equal(a.pid, parked!.pid);
    const claimedId = a.sessionId;
    assert.ok(claimedId, "the claim names the session id");
    const turn = await a.send("where am I?");
    assert.equal(initOf(turn).cwd, state.other);
    assert.equal(initOf(turn).model, "claimed-model");
    assert.equal(turn.result.sessionId, claimedId);
    assert.equal(pool.health.handouts.parked, 1);
    pool.release("a");
  });
  await t.step("claimed for the pool's own folder when no warm spare is kept", async () => {
    await log.waitFor("spare_ready", 2);
    const turn = await pool.withSession("b", (s) => s.send("and me?"));
    assert.equal(log.of("started").at(-1)?.via, "parked");
    assert.equal(initOf(turn).cwd, state.dir);
  });
});

Deno.test("SessionPool starts cold when a claim is refused, and reports it", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { parkedSpares: 1 }));
  const settled = `${state.other}/settled`;
  await Deno.mkdir(`${settled}/.claude`, { recursive: true });
  await Deno.writeTextFile(`${settled}/.claude/settings.json`, '{"model":"project-model"}');
  await t.step("project settings a claim cannot apply", async () => {
    await log.waitFor("spare_ready");
    const [parked] = await state.starts();
    const a = await pool.acquire("a", { cwd: settled });
    const [refused] = log.of("claim_refused");
    assert.equal(refused?.key, "a");
    assert.equal(refused?.reason, "project_settings_not_claimable");
    assert.match(refused!.message, /project_settings_not_claimable: settings\.json/);
    assert.equal(log.of("started").at(-1)?.via, "cold");
    assert.equal(initOf(await a.send("hi")).cwd, settled);
    assert.equal(pool.health.claimRefusals, 1);
    assert.ok(await waitGone(parked!.pid, 3000), "the refused spare is closed");
    pool.release("a");
  });
  await t.step("a folder that does not exist", async () => {
    await log.waitFor("spare_ready", 2);
    const missing = `${state.other}/missing`;
    await assert.rejects(pool.acquire("b", { cwd: missing }), (error: unknown) => {
      assert.ok(error instanceof Error);
      return true;
    });
    assert.equal(log.of("claim_refused").at(-1)?.reason, "cwd_not_found");
    assert.equal(log.of("start_failed").at(-1)?.key, "b");
    assert.equal(pool.peek("b"), undefined);
  });
});

Deno.test("SessionPool replaces a spare that dies on the shelf and never hands it out", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const process = fakeProcess(state, {
    FAKE_POOL_DIE_AFTER_MS: "250",
    FAKE_POOL_FAULT_STARTS: "1",
  });
  await using pool = new SessionPool(fakePool(state, log, { spares: 1, process }));
  const [died] = await log.waitFor("spare_died");
  assert.equal(died?.kind, "warm");
  assert.equal(died?.exit.code, 3);
  assert.equal(pool.health.spareFailures, 1);
  await log.waitFor("spare_ready", 2);
  const [dead, replacement] = await state.starts();
  assert.ok(await waitGone(dead!.pid, 3000));
  const a = await pool.acquire("a");
  assert.equal(log.of("started").at(-1)?.via, "spare");
  assert.equal(a.pid, replacement!.pid);
  assert.match((await a.send("alive?")).result.text, /^turn 1 /);
  pool.release("a");
});

Deno.test("SessionPool backs off after spares fail to start", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  const process = fakeProcess(state, { FAKE_POOL_FAIL_START: "1" });
  await using pool = new SessionPool(fakePool(state, log, { spares: 1, process }));
  const failed = await log.waitFor("spare_failed", 3, 10_000);
  assert.deepEqual(failed.map((e) => e.retryInMs), [500, 1000, 2000]);
  const starts = await state.starts();
  assert.equal(starts.length, 3, "no start during a backoff");
  assert.equal(pool.health.spareFailures, 3);
  assert.equal(pool.health.spares, 0);
  // A conversation's own start is not held back, and says why it failed.
  await assert.rejects(pool.acquire("a"), (error: unknown) => {
    assert.ok(isDuplexError(error), String(error));
    assert.ok(error.exit?.stderrTail.includes("fake: cannot start"), error.message);
    return true;
  });
});

Deno.test("SessionPool starts at most prewarmConcurrency spares at once", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  let starting = 0;
  let most = 0;
  function launch(options: SubprocessOptions): TransportFactory {
    const open = subprocess(options);
    return (init) => {
      starting++;
      most = Math.max(most, starting);
      return open(init);
    };
  }
  await using pool = new SessionPool(fakePool(state, log, {
    spares: 3,
    parkedSpares: 2,
    prewarmConcurrency: 2,
    launch,
    onEvent: (event) => {
      if (event.type === "spare_ready" || event.type === "spare_failed") starting--;
      log.listener(event);
    },
  }));
  const ready = await log.waitFor("spare_ready", 5, 10_000);
  assert.deepEqual(ready.map((e) => e.kind).sort(), ["parked", "parked", "warm", "warm", "warm"]);
  assert.equal(most, 2);
  assert.equal(pool.health.spares, 3);
  assert.equal(pool.health.parked, 2);
});
