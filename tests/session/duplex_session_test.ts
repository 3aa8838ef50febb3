import assert from "node:assert/strict";
import { DuplexError, DuplexSession, isDuplexError, type SessionEvent } from "../../mod.ts";
import {
  assistantTextFrame,
  initFrame,
  resultFrame,
  streamTextDeltaFrames,
} from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { countListeners, eventsUntil, scripted, tick } from "./_helpers.ts";

Deno.test("DuplexSession.send() runs two turns on one transport", async () => {
  const { cli, session } = await scripted({ echo: true, sessionId: "s-1" });
  await using _ = session;
  assert.equal(session.sessionId, undefined, "no session id before the first turn");
  const first = await session.send("first turn");
  assert.equal(first.result.text, "Echo: first turn");
  assert.equal(first.result.isError, false);
  assert.equal(session.sessionId, "s-1");
  const types = first.events.map((e) => e.type);
  assert.ok(types.includes("system") && types.includes("assistant"));
  assert.equal(types.at(-1), "result", "the turn's events end with its result");
  const second = await session.send([{ type: "text", text: "second turn" }]);
  assert.equal(second.result.text, "Echo: second turn");
  assert.ok(second.result.totalCostUsd > first.result.totalCostUsd, "cumulative cost grows");
  assert.ok(
    Math.abs(second.result.costUsd - first.result.costUsd) < 1e-9,
    "per-turn cost is derived",
  );
  assert.equal(cli.opened, 1, "one process for both turns");
  const lines = cli.received.filter((f) => f.type === "user");
  assert.equal(lines.length, 2);
  assert.deepEqual((lines[0]!.message as Record<string, unknown>).content, [
    { type: "text", text: "first turn" },
  ]);
  assert.equal(lines[0]!.uuid, first.uuid);
  assert.notEqual(first.uuid, second.uuid);
});

Deno.test("DuplexSession.send() rejects turn_in_flight while a turn runs", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const first = session.send("slow");
  await assert.rejects(session.send("second"), (e) => isDuplexError(e, "turn_in_flight"));
  assert.equal(session.busy, true);
  const line = await cli.nextWrite("user");
  cli.emit(initFrame(), resultFrame({ text: "done", userMessageUuid: String(line.uuid) }));
  assert.equal((await first).result.text, "done");
  assert.equal(session.busy, false);
  assert.equal(
    (await cli.nextWrite("user", { timeoutMs: 50 }).catch((e) => e)).kind,
    "timeout",
    "the refused send wrote nothing",
  );
});

Deno.test("DuplexSession.send() validates its content", async (t) => {
  const { session } = await scripted();
  await using _ = session;
  for (
    const [name, content] of [["empty text", ""], ["empty blocks", []], ["a number", 5], [
      "a block without type",
      [{ text: "x" }],
    ]] as const
  ) {
    await t.step(name, async () => {
      // deno-lint-ignore no-explicit-any
      await assert.rejects(session.send(content as any), TypeError);
    });
  }
  await assert.rejects(session.send("x", { timeoutMs: 0 }), RangeError);
  assert.equal(session.busy, false);
});

Deno.test("DuplexSession attributes results to the turn that sent them", async (t) => {
  await t.step("a result with no turn pending is only broadcast", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    const sub = session.subscribe();
    cli.emit(resultFrame({ text: "orphan" }));
    const events = await eventsUntil(sub, (e) => e.type === "result");
    assert.equal(events.at(-1)?.type, "result");
    assert.equal(session.busy, false);
  });
  await t.step("a result for another line's uuid does not settle the turn", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    const turn = session.send("mine");
    const line = await cli.nextWrite("user");
    cli.emit(resultFrame({ text: "stale", userMessageUuid: "someone-else" }));
    await tick(10);
    assert.equal(session.busy, true, "a stale result left the turn running");
    cli.emit(resultFrame({ text: "fresh", userMessageUuid: String(line.uuid) }));
    assert.equal((await turn).result.text, "fresh");
  });
  await t.step("a result without uuids settles the running turn", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    const turn = session.send("old cli");
    await cli.nextWrite("user");
    cli.emit(assistantTextFrame("hi"), resultFrame({ text: "hi" }));
    const done = await turn;
    assert.equal(done.result.text, "hi");
    assert.deepEqual(done.events.map((e) => e.type), ["assistant", "result"]);
  });
});

Deno.test("DuplexSession.send() with an aborted signal interrupts the turn", async (t) => {
  await t.step("abort mid-turn: interrupt sent, send rejects with the reason", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    cli.on("control_request:interrupt", (frame) => [
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: frame.request_id,
          response: { still_queued: [] },
        },
      },
      resultFrame({ subtype: "error_during_execution", terminalReason: "aborted_streaming" }),
    ]);
    const controller = new AbortController();
    const turn = session.send("stall", { signal: controller.signal });
    await cli.nextWrite("user");
    const reason = new Error("user pressed stop");
    controller.abort(reason);
    await assert.rejects(turn, (e) => e === reason);
    assert.ok(
      cli.received.some((f) => (f.request as { subtype?: string })?.subtype === "interrupt"),
    );
    assert.equal(session.busy, false, "the turn slot is free once the CLI ended the turn");
    cli.on("user", (frame) => [resultFrame({ text: "next", userMessageUuid: String(frame.uuid) })]);
    assert.equal((await session.send("next")).result.text, "next");
  });
  await t.step("an already aborted signal rejects before writing", async () => {
    const { cli, session } = await scripted({ echo: true });
    await using _ = session;
    const reason = new DOMException("gone", "AbortError");
    await assert.rejects(
      session.send("x", { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
    assert.equal(cli.received.length, 0);
  });
  await t.step("AbortSignal.timeout() rejects with a TimeoutError", async () => {
    const { cli, session } = await scripted({ echo: false }, { interruptGraceMs: 50 });
    await using _ = session;
    cli.on("control_request:interrupt", (frame) => [{
      type: "control_response",
      response: {
        subtype: "success",
        request_id: frame.request_id,
        response: { still_queued: [] },
      },
    }]);
    await assert.rejects(
      session.send("x", { signal: AbortSignal.timeout(20) }),
      (e) => e instanceof DOMException && e.name === "TimeoutError",
    );
    assert.equal(session.busy, false, "after the grace the turn slot is freed");
  });
});

Deno.test("DuplexSession.send() with timeoutMs interrupts and rejects with timeout", async () => {
  const { cli, session } = await scripted({ echo: false }, { interruptGraceMs: 200 });
  await using _ = session;
  cli.on("control_request:interrupt", (frame) => [
    {
      type: "control_response",
      response: {
        subtype: "success",
        request_id: frame.request_id,
        response: { still_queued: [] },
      },
    },
    resultFrame({ subtype: "error_during_execution" }),
  ]);
  await assert.rejects(
    session.send("hang", { timeoutMs: 30 }),
    (e) => isDuplexError(e, "timeout") && /30 ms/.test(e.message),
  );
  assert.equal(session.busy, false);
});

Deno.test("DuplexSession.send() leaves no listeners on a long-lived signal", async () => {
  const { session } = await scripted({ echo: true });
  await using _ = session;
  const controller = new AbortController();
  const listeners = countListeners(controller.signal);
  for (let i = 0; i < 50; i++) await session.send(`turn ${i}`, { signal: controller.signal });
  assert.equal(listeners(), 0);
});

Deno.test("DuplexSession.interrupt() works outside a turn", async () => {
  const { cli, session } = await scripted({ echo: true });
  await using _ = session;
  const receipt = await session.interrupt();
  assert.deepEqual(receipt.stillQueued, []);
  assert.equal(receipt.turnWasRunning, false);
  const request = await cli.nextWrite("control_request:interrupt");
  assert.deepEqual(request.request, { subtype: "interrupt" });
  assert.equal((await session.send("after")).result.text, "Echo: after");
});

Deno.test("DuplexSession.request() rejects control_failed with the CLI's error code", async () => {
  const { session } = await scripted({ echo: true });
  await using _ = session;
  await assert.rejects(
    session.request("definitely_not_a_subtype"),
    (e) =>
      isDuplexError(e, "control_failed") && e.errorCode === "unsupported_request" &&
      /Unsupported control request subtype/.test(e.message),
  );
});

Deno.test("DuplexSession.request() times out when the CLI never answers", async () => {
  const { cli, session } = await scripted({ echo: false }, { controlTimeoutMs: 30 });
  await using _ = session;
  await assert.rejects(session.request("get_settings"), (e) => isDuplexError(e, "timeout"));
  const cancel = await cli.nextWrite("control_cancel_request");
  assert.equal(typeof cancel.request_id, "string");
  assert.equal(session.alive, true, "the session stays usable");
});

Deno.test("DuplexSession answers control requests it does not handle with an error", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  cli.emit({ type: "control_request", request_id: "cli-1", request: { subtype: "ui_copy" } });
  const reply = await cli.nextWrite("control_response");
  assert.deepEqual(reply, {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: "cli-1",
      error: "Unsupported control request subtype: ui_copy",
      error_code: "unsupported_request",
    },
  });
});

Deno.test("DuplexSession passes unknown frames through and reports oddities", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const sub = session.subscribe();
  cli.emit({ type: "hologram", beam: 1 });
  cli.emitRaw("this is not json\n");
  cli.emitRaw('{"type": broken\n');
  cli.emit({
    type: "control_response",
    response: { subtype: "success", request_id: "nobody-asked" },
  });
  cli.emit({ type: "keep_alive" });
  cli.emit(resultFrame({ text: "end" }));
  const events = await eventsUntil(sub, (e) => e.type === "result");
  const summary = events.map((e) =>
    e.type === "diagnostic"
      ? `diagnostic:${e.kind}`
      : e.type === "unknown"
      ? `unknown:${e.frameType}`
      : e.type
  );
  assert.deepEqual(summary, [
    "unknown:hologram",
    "diagnostic:noise",
    "diagnostic:invalid_json",
    "diagnostic:stray_control_response",
    "result",
  ]);
  const unknown = events[0];
  assert.ok(unknown?.type === "unknown");
  assert.deepEqual(unknown.frame, { type: "hologram", beam: 1 });
});

Deno.test("DuplexSession skips an over-long line and keeps working", async () => {
  const { cli, session } = await scripted({ echo: true, chunking: { maxChunk: 4096 } }, {
    maxLineBytes: 1024,
  });
  await using _ = session;
  const sub = session.subscribe();
  cli.emit({
    type: "assistant",
    message: { id: "m", role: "assistant", content: [{ type: "text", text: "x".repeat(5000) }] },
  });
  const turn = await session.send("still alive?");
  assert.equal(turn.result.text, "Echo: still alive?");
  const events = await eventsUntil(sub, (e) => e.type === "diagnostic");
  const diagnostic = events.at(-1);
  assert.ok(diagnostic?.type === "diagnostic" && diagnostic.kind === "line_too_long");
});

Deno.test("DuplexSession rejects a turn when the CLI dies mid-turn", async () => {
  const { cli, session } = await scripted({ echo: false });
  const sub = session.subscribe();
  const turn = session.send("doomed");
  await cli.nextWrite("user");
  cli.emitStderr("fatal: out of cheese");
  cli.exit({ code: 3 });
  await assert.rejects(turn, (e) =>
    isDuplexError(e, "process_exited") && e.exit?.code === 3 &&
    /exit code 3/.test(e.message) && /out of cheese/.test(e.message));
  assert.equal(session.alive, false);
  assert.equal(session.state, "failed");
  const status = session.exitStatus;
  assert.equal(status.state, "failed");
  assert.ok(
    status.state === "failed" && status.code === 3 && /cheese/.test(status.exit.stderrTail),
  );
  assert.deepEqual(await session.waitForExit(), status);
  await assert.rejects(session.send("again"), (e) => isDuplexError(e, "process_exited"));
  await assert.rejects(session.interrupt(), (e) => isDuplexError(e, "process_exited"));
  const events: SessionEvent[] = [];
  for await (const event of sub) events.push(event);
  assert.deepEqual(events.filter((e) => e.type === "stderr"), [{
    type: "stderr",
    line: "fatal: out of cheese",
  }]);
  assert.equal(events.at(-1)?.type, "exit", "subscribers see exit last, then the loop ends");
  assert.deepEqual(await session.close(), status, "close after the end returns the status");
});

Deno.test("DuplexSession reports a clean exit as completed", async () => {
  const { cli, session } = await scripted({ echo: true });
  await session.send("hi");
  cli.exit({ code: 0 });
  const status = await session.waitForExit({ timeoutMs: 2000 });
  assert.equal(status.state, "completed");
  assert.equal(session.state, "closed");
});

Deno.test("DuplexSession.waitForExit() is bounded and cancellable", async () => {
  const { session } = await scripted({ echo: true });
  assert.deepEqual(await session.waitForExit({ timeoutMs: 10 }), { state: "running" });
  const reason = new Error("stop waiting");
  await assert.rejects(
    session.waitForExit({ signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  const controller = new AbortController();
  const waiting = session.waitForExit({ signal: controller.signal });
  controller.abort(reason);
  await assert.rejects(waiting, (e) => e === reason);
  const closed = await session.close();
  assert.equal(closed.state, "completed");
  assert.deepEqual(await session.waitForExit({ timeoutMs: 10 }), closed);
});

Deno.test("DuplexSession.close() is idempotent and ends everything pending", async () => {
  const { cli, session } = await scripted({ echo: false });
  const sub = session.subscribe();
  const turn = session.send("pending forever");
  const control = session.request("get_settings");
  await cli.nextWrite("user");
  const first = session.close();
  const second = session.close();
  assert.equal(first, second, "the same promise");
  assert.equal(session.alive, false);
  await assert.rejects(session.send("late"), (e) => isDuplexError(e, "closed"));
  const status = await first;
  assert.equal(status.state, "completed");
  await assert.rejects(turn, (e) => isDuplexError(e, "closed"));
  await assert.rejects(control, (e) => isDuplexError(e, "closed"));
  assert.equal(cli.closeCalls, 1);
  const events = await Array.fromAsync(sub);
  assert.equal(events.at(-1)?.type, "exit");
  const late = await Array.fromAsync(session.subscribe());
  assert.deepEqual(late.map((e) => e.type), ["exit"], "a late subscriber learns the end");
});

Deno.test("DuplexSession is disposed by await using", async () => {
  const cli = new ScriptedCli({ echo: true });
  let kept: DuplexSession | undefined;
  {
    await using session = await DuplexSession.start({ transport: cli.transport });
    kept = session;
    await session.send("hi");
  }
  assert.equal(kept.exitStatus.state, "completed");
  assert.equal(cli.closeCalls, 1);
});

Deno.test("DuplexSession closes when its owner signal aborts", async () => {
  const controller = new AbortController();
  const { session } = await scripted({ echo: true }, { signal: controller.signal });
  controller.abort();
  const status = await session.waitForExit({ timeoutMs: 2000 });
  assert.equal(status.state, "completed");
});

Deno.test("DuplexSession.start() honours an aborted signal and validates options", async () => {
  const cli = new ScriptedCli({ echo: true });
  const reason = new Error("no");
  await assert.rejects(
    DuplexSession.start({ transport: cli.transport, signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  assert.equal(cli.opened, 0);
  await assert.rejects(
    DuplexSession.start({ transport: cli.transport, maxLineBytes: -1 }),
    RangeError,
  );
  // deno-lint-ignore no-explicit-any
  await assert.rejects(DuplexSession.start({} as any), TypeError);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => new (DuplexSession as any)(Symbol("x"), {}, {}), TypeError);
});

Deno.test("DuplexSession propagates a failing factory's error", async () => {
  const error = new DuplexError("cli_not_found", "Cannot find claude");
  await assert.rejects(
    DuplexSession.start({ transport: () => Promise.reject(error) }),
    (e) => e === error,
  );
});

Deno.test("DuplexSession subscribers: many, late with replay, and a slow one", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const a = session.subscribe();
  const slow = session.subscribe({ capacity: 2 });
  const turn = session.send("go");
  const line = await cli.nextWrite("user");
  cli.emit(initFrame(), assistantTextFrame("one"), assistantTextFrame("two"));
  await tick(5);
  const late = session.subscribe({ replayTurn: true });
  cli.emit(resultFrame({ text: "done", userMessageUuid: String(line.uuid) }));
  await turn;
  const seenByA = await eventsUntil(a, (e) => e.type === "result");
  assert.deepEqual(seenByA.map((e) => e.type), ["system", "assistant", "assistant", "result"]);
  const seenByLate = await eventsUntil(late, (e) => e.type === "result");
  assert.deepEqual(seenByLate.map((e) => e.type), ["system", "assistant", "assistant", "result"]);
  const seenBySlow = await eventsUntil(slow, (e) => e.type === "result");
  assert.deepEqual(seenBySlow.map((e) => e.type), ["lagged", "assistant", "result"]);
  assert.deepEqual(seenBySlow[0], { type: "lagged", count: 2 });
});

Deno.test("DuplexSession survives a transport whose writes fail", async () => {
  const { cli, session } = await scripted({ echo: true });
  await using _ = session;
  cli.failWrites(new Error("EPIPE"));
  await assert.rejects(session.send("x"), (e) => isDuplexError(e, "process_exited"));
  assert.equal(session.busy, false);
});

Deno.test("A hung CLI: the turn times out, the interrupt goes unanswered, the session closes", async (t) => {
  await t.step("onUnresponsive: close (default)", async () => {
    const { cli, session } = await scripted({ echo: false }, { interruptGraceMs: 30 });
    const sub = session.subscribe();
    cli.hang();
    await assert.rejects(
      session.send("anyone?", { timeoutMs: 20 }),
      (e) => isDuplexError(e, "timeout"),
    );
    const status = await session.waitForExit({ timeoutMs: 2000 });
    assert.equal(status.state, "completed", "closed by the session itself");
    const steps = (await Array.fromAsync(sub)).flatMap((e) =>
      e.type === "diagnostic" ? [e.kind] : []
    );
    assert.deepEqual(steps, ["turn_interrupted", "cli_unresponsive"]);
    assert.equal(cli.closeCalls, 1);
  });
  await t.step("onUnresponsive: keep", async () => {
    const { cli, session } = await scripted({ echo: false }, {
      interruptGraceMs: 30,
      onUnresponsive: "keep",
    });
    await using _ = session;
    cli.hang();
    await assert.rejects(
      session.send("anyone?", { timeoutMs: 20 }),
      (e) => isDuplexError(e, "timeout"),
    );
    await tick(20);
    assert.equal(session.alive, true);
    assert.equal(session.busy, false);
  });
  await t.step("an acknowledged interrupt without a result abandons only the turn", async () => {
    const { cli, session } = await scripted({ echo: false }, { interruptGraceMs: 30 });
    await using _ = session;
    const sub = session.subscribe();
    cli.on("control_request:interrupt", (f) => [{
      type: "control_response",
      response: { subtype: "success", request_id: f.request_id, response: { still_queued: [] } },
    }]);
    await assert.rejects(session.send("x", { timeoutMs: 10 }), (e) => isDuplexError(e, "timeout"));
    const events = await eventsUntil(
      sub,
      (e) => e.type === "diagnostic" && e.kind === "turn_abandoned",
    );
    assert.ok(events.length >= 2);
    assert.equal(session.alive, true);
  });
});

Deno.test('turn.events keeps stream_event frames only with collectEvents: "all"', async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  cli.on("user", (f) => [
    ...streamTextDeltaFrames("Hello there", { messageId: "m1" }),
    assistantTextFrame("Hello there"),
    resultFrame({ text: "Hello there", userMessageUuid: String(f.uuid) }),
  ]);
  const lean = await session.send("a");
  assert.deepEqual(lean.events.map((e) => e.type), ["assistant", "result"]);
  const full = await session.send("b", { collectEvents: "all" });
  assert.ok(full.events.filter((e) => e.type === "stream_event").length > 3);
  const none = await session.send("c", { collectEvents: false });
  assert.deepEqual(none.events, []);
});

Deno.test("a subscriber reading at full speed gets every frame of a burst", async () => {
  const N = 5_000;
  const { cli, session } = await scripted({ echo: false, chunking: { maxChunk: 65_536 } });
  await using _ = session;
  const sub = session.subscribe(); // default capacity 256
  cli.on("user", (f) => {
    const lines = [];
    for (let i = 0; i < N; i++) {
      lines.push(JSON.stringify({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "." } },
        parent_tool_use_id: null,
        seq: i,
      }));
    }
    lines.push(JSON.stringify(resultFrame({ text: "done", userMessageUuid: String(f.uuid) })));
    cli.emitRaw(lines.join("\n") + "\n");
  });
  const reading = (async () => {
    let frames = 0;
    for await (const event of sub) {
      if (event.type === "lagged") throw new Error(`lost ${event.count} events`);
      if (event.type === "stream_event") frames++;
      if (event.type === "result") return frames;
    }
    return frames;
  })();
  await session.send("burst");
  assert.equal(await reading, N);
  assert.equal(sub.dropped, 0);
});
