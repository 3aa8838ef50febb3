import assert from "node:assert/strict";
import { SessionPool } from "../../../../adapters/subprocess/pool/mod.ts";
import { isDuplexError } from "../../../../src/errors.ts";
import { waitGone } from "../_helpers.ts";
import { delay, EventLog, fakePool, fakeProcess, FakeState } from "./_helpers.ts";

Deno.test("SessionPool hibernates a conversation idle for idleMs and resumes it with its history", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { idleMs: 200 }));
  const first = await pool.acquire("a");
  const turn = await first.send("my name is Ada");
  const sessionId = first.sessionId!;
  assert.match(turn.result.text, /^turn 1 of session .*; earlier: none$/);
  await t.step("hibernated idleMs after the release, its process gone", async () => {
    const released = performance.now();
    pool.release("a");
    const [hibernated] = await log.waitFor("hibernated");
    const after = performance.now() - released;
    assert.ok(after >= 190 && after < 2000, `${after} ms`);
    assert.deepEqual(hibernated, { type: "hibernated", key: "a", sessionId, reason: "idle" });
    assert.ok(await waitGone(first.pid!, 3000));
    assert.deepEqual(pool.peek("a"), { state: "hibernated", sessionId, holds: 0, busy: false });
    const health = pool.health;
    assert.equal(health.live, 0);
    assert.equal(health.hibernated, 1);
    assert.equal(health.hibernations, 1);
    assert.equal(health.evictions, 0);
  });
  await t.step("the next acquire resumes it: same session id, the history seen", async () => {
    const again = await pool.acquire("a");
    const started = log.of("started").at(-1)!;
    assert.equal(started.via, "resumed");
    assert.equal(started.sessionId, sessionId);
    assert.notEqual(again.pid, first.pid);
    const next = await again.send("what is my name?");
    assert.equal(
      next.result.text,
      `turn 2 of session ${sessionId} (pid ${again.pid}); earlier: my name is Ada`,
    );
    assert.equal(again.sessionId, sessionId);
    const resumedWith = (await state.starts()).find((s) => s.pid === again.pid)!;
    assert.ok(resumedWith.args.includes(`--resume=${sessionId}`), String(resumedWith.args));
    assert.equal(pool.health.handouts.resumed, 1);
    pool.release("a");
  });
});

Deno.test("SessionPool does not hibernate a held conversation, nor one whose turn still runs", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { idleMs: 150 }));
  const a = await pool.acquire("a");
  await t.step("held past idleMs", async () => {
    await delay(350);
    assert.equal(log.of("hibernated").length, 0);
    assert.equal(pool.peek("a")?.state, "live");
  });
  await t.step("released with a turn running: hibernated idleMs after the turn ended", async () => {
    const turn = a.send("[[slow:450]]");
    pool.release("a");
    await delay(300);
    assert.equal(log.of("hibernated").length, 0, "its turn runs");
    await turn;
    const ended = performance.now();
    await log.waitFor("hibernated");
    assert.ok(performance.now() - ended < 1000);
    assert.equal(pool.peek("a")?.state, "hibernated");
  });
  await t.step("an acquire cancels the idle timer", async () => {
    await pool.acquire("b");
    pool.release("b");
    await delay(50);
    await pool.acquire("b"); // before idleMs: held again
    await delay(300);
    assert.equal(pool.peek("b")?.state, "live");
    pool.release("b");
  });
});

Deno.test("SessionPool resumes a conversation whose process crashed on the next acquire", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log));
  const a = await pool.acquire("a");
  await a.send("remember 42");
  const sessionId = a.sessionId;
  await assert.rejects(a.send("[[crash]]"), (e) => isDuplexError(e, "process_exited"));
  const [crashed] = await log.waitFor("crashed");
  assert.equal(crashed?.key, "a");
  assert.equal(crashed?.sessionId, sessionId);
  assert.equal(crashed?.exit?.code, 1);
  assert.equal(pool.health.crashes, 1);
  assert.equal(pool.peek("a")?.state, "hibernated");
  const again = await pool.acquire("a"); // still held once: the same holder goes on
  assert.notEqual(again, a);
  assert.equal(log.of("started").at(-1)?.via, "resumed");
  const turn = await again.send("what number?");
  assert.match(
    turn.result.text,
    new RegExp(`^turn 2 of session ${sessionId} .*earlier: remember 42$`),
  );
  pool.release("a");
  pool.release("a");
  assert.equal(pool.peek("a")?.holds, 0);
});

Deno.test("SessionPool.acquire() rejects with not_found and the CLI's stderr; forget() starts over", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(fakePool(state, log, { idleMs: 100 }));
  await pool.withSession("a", (s) => s.send("lost soon"));
  const sessionId = pool.peek("a")!.sessionId!;
  await log.waitFor("hibernated");
  await Deno.remove(`${state.dir}/sessions/${sessionId}.json`); // the transcript is gone
  await t.step("not_found, with what the CLI said", async () => {
    await assert.rejects(pool.acquire("a"), (error: unknown) => {
      assert.ok(isDuplexError(error, "not_found"), String(error));
      assert.ok(error.message.includes(`No conversation found with session ID: ${sessionId}`));
      assert.ok(error.exit?.stderrTail.includes("No conversation found"), error.exit?.stderrTail);
      assert.equal(error.exit?.code, 1);
      return true;
    });
    const [failed] = log.of("start_failed");
    assert.equal(failed?.key, "a");
    assert.equal(pool.health.failures, 1);
    assert.deepEqual(pool.peek("a"), { state: "hibernated", sessionId, holds: 0, busy: false });
  });
  await t.step("forget() of a held key is refused", async () => {
    await pool.acquire("held");
    await assert.rejects(pool.forget("held"), (e) => isDuplexError(e, "invalid_argument"));
    pool.release("held");
    await pool.forget("unknown"); // a no-op
  });
  await t.step("after forget(), the key starts new", async () => {
    await pool.forget("a");
    assert.equal(pool.peek("a"), undefined);
    const turn = await pool.withSession("a", (s) => s.send("hello again"));
    assert.match(turn.result.text, /^turn 1 of session .*earlier: none$/);
    assert.notEqual(turn.result.sessionId, sessionId);
    assert.equal(log.of("started").at(-1)?.via, "cold");
  });
  await t.step("forget() of a live idle one closes its process", async () => {
    const pid = (await pool.acquire("live")).pid!;
    pool.release("live");
    await pool.forget("live");
    assert.equal(pool.peek("live"), undefined);
    assert.ok(await waitGone(pid, 3000));
  });
});

Deno.test("SessionPool.acquire() with resume continues a session another pool started", async (t) => {
  await using state = await FakeState.make();
  const log = new EventLog();
  let sessionId: string;
  {
    await using before = new SessionPool(fakePool(state, log));
    const turn = await before.withSession("a", (s) => s.send("from before the restart"));
    sessionId = turn.result.sessionId!;
  }
  await using pool = new SessionPool(fakePool(state, log));
  await t.step("a known id: resumed, with its history", async () => {
    const turn = await pool.withSession("a", (s) => s.send("after"), { resume: sessionId });
    assert.match(turn.result.text, /earlier: from before the restart$/);
    assert.equal(turn.result.sessionId, sessionId);
    assert.equal(log.of("started").at(-1)?.via, "resumed");
  });
  await t.step("an unknown id: not_found", async () => {
    const unknown = crypto.randomUUID();
    await assert.rejects(
      pool.acquire("b", { resume: unknown }),
      (e) => isDuplexError(e, "not_found") && e.message.includes(unknown),
    );
    assert.equal(pool.peek("b")?.holds ?? 0, 0);
  });
});

Deno.test("SessionPool.acquire() of a resume the CLI fails otherwise is resume_failed, not not_found", async () => {
  await using state = await FakeState.make();
  const log = new EventLog();
  await using pool = new SessionPool(
    fakePool(state, log, { process: fakeProcess(state, { FAKE_POOL_FAIL_START: "1" }) }),
  );
  await assert.rejects(
    pool.acquire("x", { resume: crypto.randomUUID() }),
    (error: unknown) =>
      isDuplexError(error, "resume_failed") && /fake: cannot start/.test(error.message),
  );
});
