/*
 * Queued prompts: sends written while a turn runs, as the CLI 2.1.332 runs
 * them (command_lifecycle queued / started / completed / cancelled; a result
 * naming the lines it ran). The real CLI does the same in tests/e2e/queue_e2e_test.ts.
 */
import assert from "node:assert/strict";
import { DuplexError, DuplexSession, isDuplexError } from "../../mod.ts";
import {
  assistantTextFrame,
  commandLifecycleFrame,
  controlSuccess,
  resultFrame,
} from "../../src/testing/frames.ts";
import type { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { ScriptedCli as ScriptedCliClass } from "../../src/testing/scripted_cli.ts";
import { LOST_TERMINAL_REASON, lostTurnsLine } from "../../src/wire/wire.ts";
import { eventsUntil, scripted, tick, wrap } from "./_helpers.ts";

/** Waits for the user line with `uuid` (or the next one) and returns its frame. */
function userLine(cli: ScriptedCli, text: string): Promise<Record<string, unknown>> {
  return cli.nextWrite((f) =>
    f.type === "user" &&
    JSON.stringify((f.message as { content: unknown }).content).includes(text)
  );
}

function finish(cli: ScriptedCli, uuids: string[], text: string): void {
  cli.emit(
    ...uuids.map((uuid) => commandLifecycleFrame(uuid, "started")),
    assistantTextFrame(text),
    { ...resultFrame({ text }), user_message_uuid: uuids.at(-1), user_message_uuids: uuids },
    ...uuids.map((uuid) => commandLifecycleFrame(uuid, "completed")),
  );
}

Deno.test("send({ queue: true }) writes at once; each send resolves with the turn that ran it", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const events = session.subscribe({ capacity: 1024 });
  const first = session.send("first", { queue: true, uuid: "u1" });
  await userLine(cli, "first");
  const second = session.send("second", { queue: true, uuid: "u2" });
  const third = session.send("third", { queue: true, uuid: "u3" });
  await userLine(cli, "third"); // both written while the first runs
  assert.equal(session.busy, true);
  cli.emit(commandLifecycleFrame("u2", "queued"), commandLifecycleFrame("u3", "queued"));
  finish(cli, ["u1"], "one");
  const one = await first;
  assert.equal(one.result.text, "one");
  assert.equal(one.uuid, "u1");
  // The CLI batches lines queued together into one turn: both get that turn's result.
  finish(cli, ["u2", "u3"], "two and three");
  const [two, three] = await Promise.all([second, third]);
  assert.equal(two.result.text, "two and three");
  assert.equal(three.result, two.result);
  assert.deepEqual([two.uuid, three.uuid], ["u2", "u3"]);
  assert.ok(two.events.some((e) => e.type === "assistant"), "the batch's events are its turns'");
  assert.ok(!one.events.some((e) => e.type === "assistant" && JSON.stringify(e).includes("three")));
  const seen = await eventsUntil(
    events,
    (e) => e.type === "result" && e.result === "two and three",
  );
  const ui = seen.flatMap((e) =>
    e.type === "turn_queued"
      ? [`queued ${e.uuid} ${e.position}`]
      : e.type === "turn_started"
      ? [`started ${e.uuid}`]
      : []
  );
  assert.deepEqual(ui, ["started u1", "queued u2 1", "queued u3 2", "started u2", "started u3"]);
  assert.equal(session.busy, false);
});

Deno.test("without the queue a send while busy still rejects turn_in_flight; the session option queues", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { uuid: "u1" });
  await userLine(cli, "first");
  await assert.rejects(session.send("again"), (e) => isDuplexError(e, "turn_in_flight"));
  finish(cli, ["u1"], "one");
  await first;
  const queued = await scripted({ echo: false }, { queue: true });
  await using __ = queued.session;
  const a = queued.session.send("a", { uuid: "a" });
  const b = queued.session.send("b", { uuid: "b" });
  await userLine(queued.cli, "b");
  finish(queued.cli, ["a"], "A");
  finish(queued.cli, ["b"], "B");
  assert.deepEqual([(await a).result.text, (await b).result.text], ["A", "B"]);
});

Deno.test("priority and shouldQuery travel on the user line; bad values are TypeErrors", async (t) => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  for (const priority of ["now", "next", "later"] as const) {
    await t.step(`priority: ${priority}`, async () => {
      const sent = session.send(`p ${priority}`, { queue: true, priority });
      const line = await userLine(cli, `p ${priority}`);
      assert.equal(line.priority, priority);
      finish(cli, [String(line.uuid)], "ok");
      await sent;
    });
  }
  await t.step("shouldQuery: false", async () => {
    const sent = session.send("context only", { shouldQuery: false });
    const line = await userLine(cli, "context only");
    assert.equal(line.shouldQuery, false);
    assert.equal("priority" in line, false);
    cli.emit({ ...resultFrame({ text: "" }), user_message_uuids: [line.uuid] });
    assert.equal((await sent).result.text, "");
  });
  await t.step("invalid values", async () => {
    // deno-lint-ignore no-explicit-any
    await assert.rejects(session.send("x", { priority: "soon" as any }), TypeError);
    // deno-lint-ignore no-explicit-any
    await assert.rejects(session.send("x", { shouldQuery: "no" as any }), TypeError);
    assert.equal(session.busy, false);
  });
});

Deno.test("verbatimPrompts and send({ verbatim }) mark the line client_composed", async (t) => {
  await t.step("the session option marks every line; verbatim: false opts one out", async () => {
    const { cli, session } = await scripted({ echo: true }, { verbatimPrompts: true });
    await using _ = session;
    const sent = session.send("/cost");
    assert.equal((await userLine(cli, "/cost")).client_composed, true);
    await sent;
    const plain = session.send("@notes.md", { verbatim: false });
    assert.equal("client_composed" in await userLine(cli, "@notes.md"), false);
    await plain;
  });
  await t.step("off by default; verbatim: true marks one line", async () => {
    const { cli, session } = await scripted({ echo: true });
    await using _ = session;
    const plain = session.send("/cost");
    assert.equal("client_composed" in await userLine(cli, "/cost"), false);
    await plain;
    const sent = session.send("/help", { verbatim: true });
    assert.equal((await userLine(cli, "/help")).client_composed, true);
    await sent;
  });
  await t.step("a value that is not a boolean is a TypeError", async () => {
    const { cli, session } = await scripted({ echo: true });
    await using _ = session;
    // deno-lint-ignore no-explicit-any
    await assert.rejects(session.send("x", { verbatim: "yes" as any }), TypeError);
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      DuplexSession.start({ transport: cli.transport, verbatimPrompts: 1 as any }),
      /verbatimPrompts must be a boolean/,
    );
  });
});

Deno.test("a queued send's signal withdraws its line before it runs (cancel_async_message)", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  await userLine(cli, "first");
  const controller = new AbortController();
  const reason = new Error("changed my mind");
  const second = session.send("second", { queue: true, uuid: "u2", signal: controller.signal });
  await userLine(cli, "second");
  controller.abort(reason);
  const cancel = await cli.nextWrite("control_request:cancel_async_message");
  assert.deepEqual((cancel.request as Record<string, unknown>).message_uuid, "u2");
  assert.equal(
    cli.received.some((f) => JSON.stringify(f).includes('"subtype":"interrupt"')),
    false,
    "the running turn is not interrupted",
  );
  cli.emit(
    controlSuccess(String(cancel.request_id), { cancelled: true, message_uuid: "u2" }),
    commandLifecycleFrame("u2", "cancelled"),
  );
  await assert.rejects(second, (e) => e === reason);
  finish(cli, ["u1"], "one");
  assert.equal((await first).result.text, "one");
  assert.equal(session.busy, false);
});

Deno.test("a queued send aborted once it started interrupts its turn, as a running one", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  await userLine(cli, "first");
  const controller = new AbortController();
  const second = session.send("second", { queue: true, uuid: "u2", signal: controller.signal });
  await userLine(cli, "second");
  finish(cli, ["u1"], "one");
  await first;
  cli.emit(commandLifecycleFrame("u2", "started"));
  await tick();
  controller.abort(new Error("stop"));
  const interrupt = await cli.nextWrite("control_request:interrupt");
  cli.emit(controlSuccess(String(interrupt.request_id), { still_queued: [] }), {
    ...resultFrame({ subtype: "error_during_execution" }),
    user_message_uuids: ["u2"],
  });
  await assert.rejects(second, (e) => e instanceof Error && e.message === "stop");
});

Deno.test("interrupt({ cancelQueued: true }) reports the cancelled lines and rejects their sends", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  await userLine(cli, "first");
  const second = session.send("second", { queue: true, uuid: "u2" });
  const third = session.send("third", { queue: true, uuid: "u3" });
  await userLine(cli, "third");
  const receipt = session.interrupt({ cancelQueued: true });
  const request = await cli.nextWrite("control_request:interrupt");
  assert.equal((request.request as Record<string, unknown>).cancel_queued, true);
  cli.emit(
    controlSuccess(String(request.request_id), { still_queued: [], cancelled: ["u2", "u3"] }),
  );
  const { cancelled, stillQueued, turnWasRunning } = await receipt;
  assert.deepEqual(cancelled, ["u2", "u3"]);
  assert.deepEqual(stillQueued, []);
  assert.equal(turnWasRunning, true);
  for (const sent of [second, third]) {
    await assert.rejects(sent, (e) => e instanceof DuplexError && e.kind === "aborted");
  }
  cli.emit({ ...resultFrame({ subtype: "error_during_execution" }), user_message_uuids: ["u1"] });
  assert.equal((await first).result.isError, true, "the interrupted turn resolves with its result");
});

Deno.test("with a CLI that sends no lifecycle frames, queued turns settle in order", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const sends = ["a", "b", "c"].map((text) => session.send(text, { queue: true }));
  await userLine(cli, "c");
  for (const text of ["A", "B", "C"]) cli.emit(resultFrame({ text })); // no uuids at all
  const turns = await Promise.all(sends);
  assert.deepEqual(turns.map((turn) => turn.result.text), ["A", "B", "C"]);
});

Deno.test("a turn the CLI started itself (no uuids, from a CLI that names lines) settles no send", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { uuid: "u1" });
  await userLine(cli, "first");
  finish(cli, ["u1"], "one");
  await first;
  const second = session.send("second", { uuid: "u2" });
  await userLine(cli, "second");
  // A background task's notification: the CLI runs a turn of its own, whose result names no line.
  cli.emit(resultFrame({ text: "task notification" }));
  finish(cli, ["u2"], "two");
  assert.equal((await second).result.text, "two");
});

Deno.test("with a CLI that names no lines, lines an interrupt cancelled leave its result to the running turn", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  const second = session.send("second", { queue: true, uuid: "u2" });
  await userLine(cli, "second");
  const receipt = session.interrupt({ cancelQueued: true });
  const request = await cli.nextWrite("control_request:interrupt");
  cli.emit(controlSuccess(String(request.request_id), { still_queued: [], cancelled: ["u2"] }));
  assert.deepEqual((await receipt).cancelled, ["u2"]);
  await assert.rejects(second, (e) => isDuplexError(e, "aborted"));
  cli.emit(resultFrame({ subtype: "error_during_execution" })); // no uuids, as before
  const settled = await Promise.race([first.then(() => "settled"), tick(50).then(() => "hung")]);
  assert.equal(settled, "settled", "the receipt is no lifecycle frame of the CLI's");
  assert.equal((await first).result.isError, true);
});

Deno.test("the transport is told the last line each result answers (what a remote resume names)", async () => {
  const cli = new ScriptedCliClass({ echo: false });
  const told: string[] = [];
  const session = await DuplexSession.start({
    transport: async (context) =>
      wrap(await cli.transport(context), { answered: (uuid) => void told.push(uuid) }),
  });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  const second = session.send("second", { queue: true, uuid: "u2" });
  const third = session.send("third", { queue: true, uuid: "u3" });
  await userLine(cli, "third");
  finish(cli, ["u1"], "one");
  await first;
  assert.deepEqual(told, ["u1"]);
  finish(cli, ["u2", "u3"], "two and three"); // one turn ran both: each is told, in order
  await Promise.all([second, third]);
  assert.deepEqual(told, ["u1", "u2", "u3"]);
  cli.emit(resultFrame({ text: "task notification" })); // a result that names no line
  await tick(20);
  assert.deepEqual(told, ["u1", "u2", "u3"], "a result naming no line tells nothing");
});

Deno.test("a lost-turns result ends the turns it names that are still pending, in order", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("first", { queue: true, uuid: "u1" });
  const second = session.send("second", { queue: true, uuid: "u2" });
  await userLine(cli, "second");
  finish(cli, ["u1"], "one"); // u1's result came before its CLI went
  cli.emitRaw(lostTurnsLine(["u1", "u2"]));
  assert.equal((await first).result.text, "one", "a settled turn keeps its result");
  const lost = await second;
  assert.equal(lost.result.isError, true);
  assert.equal(lost.result.terminalReason, LOST_TERMINAL_REASON);
  assert.match(lost.result.errors.join(" "), /send the turn again/);
  assert.equal(lost.result.sessionId, undefined, "no CLI session is named");
  assert.equal(session.busy, false);
  const third = session.send("third", { uuid: "u3" });
  await userLine(cli, "third");
  finish(cli, ["u3"], "three");
  assert.equal((await third).result.text, "three", "the session goes on");
});
