/*
 * A hook with onFailure: "block" protects a turn only on a CLI that honours
 * it, and the CLI says so in its initialize reply. Until that reply came, no
 * user line may reach the CLI; when the reply does not confirm, none ever
 * may: every send is refused and the session ends.
 */
import assert from "node:assert/strict";
import { DuplexSession, type HooksOptions, isDuplexError } from "../../mod.ts";
import { controlError, controlSuccess } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";

const BLOCKING: HooksOptions = {
  PreToolUse: [{ matcher: "Bash", run: () => ({}), onFailure: "block" }],
  PostToolUse: [{ run: () => ({}), onFailure: "block" }],
  Stop: [{ run: () => ({}), onFailure: "continue" }],
};

/** A CLI that echoes turns, answers `probe`, and leaves initialize to the test. */
function heldCli(): ScriptedCli {
  return new ScriptedCli({ echo: true })
    .on("control_request:initialize", () => {})
    .on("control_request:probe", (f) => [controlSuccess(String(f.request_id), {})]);
}

/**
 * Everything the session wrote up to now reached the CLI: a control request
 * written after it was answered (the transport writes in order).
 */
async function flushWrites(session: DuplexSession): Promise<void> {
  await session.request("probe", {}, { timeoutMs: 3000 });
}

function userTexts(cli: ScriptedCli): string[] {
  return cli.received.filter((f) => f.type === "user").map((f) => {
    const content = (f.message as { content: { text?: string }[] }).content;
    return content.map((block) => block.text ?? "").join("");
  });
}

/** Starts a session with blocking hooks; returns it with the initialize request's id. */
async function startHeld(
  cli: ScriptedCli,
  options: { controlTimeoutMs?: number } = {},
): Promise<{ session: DuplexSession; initId: string }> {
  const session = await DuplexSession.start({
    transport: cli.transport,
    hooks: BLOCKING,
    ...options,
  });
  const init = await cli.nextWrite("control_request:initialize", { timeoutMs: 3000 });
  return { session, initId: String(init.request_id) };
}

function isRefusal(error: unknown): boolean {
  return isDuplexError(error, "unsupported") &&
    /PreToolUse/.test(error.message) && /PostToolUse/.test(error.message) &&
    !/Stop/.test(error.message) && /hook_on_failure_supported/.test(error.message);
}

Deno.test('sends made before the initialize reply wait for it when a hook asks for onFailure: "block"', async () => {
  const cli = heldCli();
  const { session, initId } = await startHeld(cli);
  await using _ = session;
  const first = session.send("one", { queue: true });
  const second = session.send("two", { queue: true });
  for (const pending of [first, second]) pending.catch(() => {}); // awaited below
  await flushWrites(session);
  assert.deepEqual(userTexts(cli), [], "no user line before the reply");
  assert.equal(session.busy, false, "no turn started before the reply");
  cli.emit(controlSuccess(initId, { hook_on_failure_supported: true, hooks_applied: true }));
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.result.isError, false);
  assert.equal(b.result.isError, false);
  assert.deepEqual(userTexts(cli), ["one", "two"], "written after the reply, in order");
});

Deno.test("a CLI whose initialize reply does not confirm onFailure support never gets a user line", async (t) => {
  const replies: [string, Record<string, unknown>, RegExp][] = [
    ["no hook_on_failure_supported", { commands: [] }, /lacks hook_on_failure_supported/],
    ["hook_on_failure_supported: false", { hook_on_failure_supported: false }, /lacks/],
    [
      "hooks_applied: false",
      { hook_on_failure_supported: true, hooks_applied: false },
      /hooks_applied/,
    ],
  ];
  for (const [name, reply, what] of replies) {
    await t.step(name, async () => {
      const cli = heldCli();
      const { session, initId } = await startHeld(cli);
      await using _ = session;
      const before = [
        session.send("before one", { queue: true }),
        session.send("before two", { queue: true }),
      ];
      for (const send of before) send.catch(() => {});
      await flushWrites(session);
      cli.emit(controlSuccess(initId, reply));
      for (const send of before) {
        await assert.rejects(send, (e) => isRefusal(e) && what.test((e as Error).message));
      }
      await assert.rejects(session.initialized, isRefusal);
      for (const text of ["after one", "after two", "after three"]) {
        await assert.rejects(session.send(text), isRefusal);
        await assert.rejects(session.send(text, { queue: true }), isRefusal);
      }
      const status = await session.waitForExit({ timeoutMs: 5000 });
      assert.equal(status.state, "failed", "the session ended");
      assert.ok(status.state === "failed" && isRefusal(status.error));
      await assert.rejects(session.send("after the end"), isRefusal);
      assert.deepEqual(userTexts(cli), [], "no user line ever reached the CLI");
    });
  }
});

Deno.test("a blocking hook's session that cannot initialize (error reply, timeout) runs no turn", async (t) => {
  await t.step("an error reply", async () => {
    const cli = heldCli();
    const { session, initId } = await startHeld(cli);
    await using _ = session;
    const before = session.send("before");
    before.catch(() => {});
    await flushWrites(session);
    cli.emit(controlError(initId, "initialize failed"));
    const refused = (e: unknown): boolean =>
      isDuplexError(e, "control_failed") && /onFailure: "block"/.test((e as Error).message) &&
      /PreToolUse/.test((e as Error).message);
    await assert.rejects(before, refused);
    await assert.rejects(session.send("after"), refused);
    await assert.rejects(session.send("again"), refused);
    assert.equal((await session.waitForExit({ timeoutMs: 5000 })).state, "failed");
    assert.deepEqual(userTexts(cli), []);
  });
  await t.step("no reply within controlTimeoutMs", async () => {
    const cli = heldCli();
    const { session } = await startHeld(cli, { controlTimeoutMs: 300 });
    await using _ = session;
    const before = session.send("before");
    before.catch(() => {});
    const refused = (e: unknown): boolean =>
      isDuplexError(e, "timeout") && /onFailure: "block"/.test((e as Error).message);
    await assert.rejects(before, refused);
    await assert.rejects(session.send("after"), refused);
    assert.equal((await session.waitForExit({ timeoutMs: 5000 })).state, "failed");
    assert.deepEqual(userTexts(cli), []);
  });
});

Deno.test("an interrupt made while sends are held goes after their lines", async () => {
  const cli = heldCli().on(
    "control_request:interrupt",
    (f) => [controlSuccess(String(f.request_id), {})],
  );
  const { session, initId } = await startHeld(cli);
  await using _ = session;
  const turn = session.send("first");
  const interrupt = session.interrupt();
  for (const pending of [turn, interrupt]) pending.catch(() => {}); // awaited below
  await flushWrites(session);
  assert.equal(cli.received.some((f) => f.type === "user"), false);
  assert.equal(
    cli.received.some((f) => (f.request as { subtype?: string })?.subtype === "interrupt"),
    false,
    "the interrupt waits too",
  );
  cli.emit(controlSuccess(initId, { hook_on_failure_supported: true }));
  await interrupt;
  await turn;
  const order = cli.received.flatMap((f) =>
    f.type === "user"
      ? ["user"]
      : (f.request as { subtype?: string })?.subtype === "interrupt"
      ? ["interrupt"]
      : []
  );
  assert.deepEqual(order, ["user", "interrupt"]);
});

Deno.test("a held send aborted before the initialize reply is never written", async () => {
  const cli = heldCli();
  const { session, initId } = await startHeld(cli);
  await using _ = session;
  const controller = new AbortController();
  const aborted = session.send("withdrawn", { signal: controller.signal });
  const reason = new Error("changed my mind");
  controller.abort(reason);
  await assert.rejects(aborted, (e) => e === reason);
  cli.emit(controlSuccess(initId, { hook_on_failure_supported: true }));
  assert.equal((await session.send("kept")).result.text, "Echo: kept");
  assert.deepEqual(userTexts(cli), ["kept"]);
});

Deno.test("a CLI that confirms onFailure support runs the turns of a blocking hook's session", async () => {
  const cli = heldCli();
  const { session, initId } = await startHeld(cli);
  await using _ = session;
  const early = session.send("early");
  cli.emit(controlSuccess(initId, { hook_on_failure_supported: true, hooks_applied: true }));
  assert.equal((await early).result.text, "Echo: early");
  assert.ok((await session.initialized) !== undefined);
  assert.equal((await session.send("later")).result.text, "Echo: later");
  assert.equal((await session.send("last")).result.text, "Echo: last");
  assert.deepEqual(userTexts(cli), ["early", "later", "last"]);
});

Deno.test("without a blocking hook the first send does not wait for the initialize reply", async (t) => {
  const cases: [string, HooksOptions | undefined][] = [
    ["hooks that continue", { PreToolUse: [{ run: () => ({}), onFailure: "continue" }] }],
    ["hooks without onFailure", { Stop: [{ run: () => ({}) }] }],
    ["no hooks", undefined],
  ];
  for (const [name, hooks] of cases) {
    await t.step(name, async () => {
      const cli = heldCli();
      await using session = await DuplexSession.start({
        transport: cli.transport,
        initialize: true,
        ...(hooks ? { hooks } : {}),
      });
      const init = await cli.nextWrite("control_request:initialize", { timeoutMs: 3000 });
      const turn = session.send("now");
      await flushWrites(session);
      assert.deepEqual(userTexts(cli), ["now"], "written before the reply");
      assert.equal((await turn).result.text, "Echo: now");
      cli.emit(controlSuccess(String(init.request_id), {}));
      await session.initialized;
    });
  }
});
