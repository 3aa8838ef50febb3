/*
 * Regression tests of the core's second edition: each failed before its fix.
 * - a transport left open when start() threw after opening it (maxLineBytes: Infinity);
 * - durations of Infinity or >= 2^31 that fired after ~1 ms (timer overflow);
 * - a read pump that died and left a session that looked alive.
 */
import assert from "node:assert/strict";
import { DuplexSession, isDuplexError, type Transport, type TransportExit } from "../../mod.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { eventsUntil, scripted, tick } from "./_helpers.ts";

Deno.test("DuplexSession.start() checks every option before opening the transport", async (t) => {
  for (const maxLineBytes of [Infinity, 1.5, 0, Number.MAX_VALUE]) {
    await t.step(`maxLineBytes: ${maxLineBytes}`, async () => {
      const cli = new ScriptedCli({ echo: true });
      await assert.rejects(
        DuplexSession.start({ transport: cli.transport, maxLineBytes }),
        RangeError,
      );
      assert.equal(cli.opened, 0, "no transport was opened");
    });
  }
  const durations = [
    "controlTimeoutMs",
    "interruptGraceMs",
    "closeTimeoutMs",
    "permissionTimeoutMs",
  ] as const;
  for (const key of durations) {
    for (const value of [2 ** 31, 0, -1, NaN]) {
      await t.step(`${key}: ${value}`, async () => {
        const cli = new ScriptedCli({ echo: true });
        await assert.rejects(
          DuplexSession.start({ transport: cli.transport, [key]: value }),
          (e) => e instanceof RangeError && e.message.includes(key),
        );
        assert.equal(cli.opened, 0);
      });
    }
  }
});

Deno.test("DuplexSession.start() closes the transport when it throws after opening it", async () => {
  const cli = new ScriptedCli({ echo: true });
  const controller = new AbortController();
  const reason = new Error("gave up");
  const opening = DuplexSession.start({
    transport: async (context) => {
      const transport = await cli.transport(context);
      controller.abort(reason);
      return transport;
    },
    signal: controller.signal,
  });
  await assert.rejects(opening, (e) => e === reason);
  assert.equal(cli.opened, 1);
  assert.equal(cli.closeCalls, 1, "the opened transport was closed");
});

Deno.test("durations of Infinity set no timer, and 2^31 ms is refused", async (t) => {
  await t.step("controlTimeoutMs: Infinity waits for a late answer", async () => {
    const { cli, session } = await scripted({ echo: false }, { controlTimeoutMs: Infinity });
    await using _ = session;
    const pending = session.request("get_settings");
    const asked = await cli.nextWrite("control_request");
    await tick(40);
    cli.emit({
      type: "control_response",
      response: { subtype: "success", request_id: asked.request_id, response: { late: true } },
    });
    assert.deepEqual(await pending, { late: true });
  });

  await t.step("a request's own timeoutMs: Infinity, and 2^31 rejected", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    await assert.rejects(session.request("get_settings", {}, { timeoutMs: 2 ** 31 }), RangeError);
    const pending = session.request("get_settings", {}, { timeoutMs: Infinity });
    const asked = await cli.nextWrite((f) => f.type === "control_request");
    await tick(40);
    cli.emit({
      type: "control_response",
      response: { subtype: "success", request_id: asked.request_id, response: {} },
    });
    assert.deepEqual(await pending, {});
  });

  await t.step("send() timeoutMs: Infinity lets a slow turn finish", async () => {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    await assert.rejects(session.send("x", { timeoutMs: 2 ** 31 }), RangeError);
    const turn = session.send("slow", { timeoutMs: Infinity });
    const user = await cli.nextWrite("user");
    await tick(40);
    cli.emit({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "late",
      user_message_uuid: user.uuid,
    });
    assert.equal((await turn).result.text, "late");
  });

  await t.step("permissionTimeoutMs: Infinity keeps a request pending", async () => {
    const { cli, session } = await scripted({ echo: false }, {
      permissionTimeoutMs: Infinity,
      onPermission: () => ({ behavior: "defer" }),
    });
    await using _ = session;
    cli.emit({
      type: "control_request",
      request_id: "p1",
      request: { subtype: "can_use_tool", tool_name: "Bash", input: {} },
    });
    await tick(40);
    assert.deepEqual(session.pendingPermissions.map((r) => r.requestId), ["p1"]);
  });

  await t.step("interruptGraceMs: Infinity waits for the interrupted turn's result", async () => {
    const { cli, session } = await scripted({ echo: false }, { interruptGraceMs: Infinity });
    await using _ = session;
    const events = session.subscribe();
    const controller = new AbortController();
    const reason = new Error("stop");
    const turn = session.send("long", { signal: controller.signal });
    const user = await cli.nextWrite("user");
    controller.abort(reason);
    const interrupt = await cli.nextWrite("control_request:interrupt");
    await tick(40);
    cli.emit({
      type: "control_response",
      response: { subtype: "success", request_id: interrupt.request_id, response: {} },
    }, {
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      user_message_uuid: user.uuid,
    });
    await assert.rejects(turn, (e) => e === reason);
    const seen = await eventsUntil(events, (e) => e.type === "result");
    const kinds = seen.flatMap((e) => e.type === "diagnostic" ? [e.kind] : []);
    assert.deepEqual(kinds, ["turn_interrupted"], "never abandoned, never closed");
    assert.equal(session.alive, true);
  });

  await t.step("closeTimeoutMs: Infinity still closes", async () => {
    const { session } = await scripted({ echo: true }, { closeTimeoutMs: Infinity });
    const status = await session.close();
    assert.equal(status.state, "completed");
    assert.equal(status.state === "completed" && status.exit.reason, undefined);
  });

  await t.step("waitForExit() timeoutMs: 2^31 rejected, Infinity waits", async () => {
    const { session } = await scripted({ echo: true });
    await assert.rejects(session.waitForExit({ timeoutMs: 2 ** 31 }), RangeError);
    const waiting = session.waitForExit({ timeoutMs: Infinity });
    await tick(20);
    await session.close();
    assert.equal((await waiting).state, "completed");
  });
});

/** A transport whose stdout is whatever `source` makes of it; close() ends it. */
function brokenTransport(source: UnderlyingDefaultSource<Uint8Array>): {
  transport: Transport;
  closes: () => number;
} {
  let closes = 0;
  const ended = Promise.withResolvers<TransportExit>();
  const readable = new ReadableStream<Uint8Array>(source);
  const transport: Transport = {
    readable,
    info: { kind: "broken" },
    closed: ended.promise,
    write: () => Promise.resolve(),
    endInput: () => Promise.resolve(),
    close() {
      closes++;
      readable.cancel().catch(() => {});
      ended.resolve({ code: 0, signal: null, stderrTail: "", requested: true });
      return ended.promise;
    },
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
  return { transport, closes: () => closes };
}

Deno.test("A read pump that dies ends the session with a clear error", async (t) => {
  await t.step("the CLI's output stream errors", async () => {
    const { transport, closes } = brokenTransport({
      start: (controller) => controller.error(new Error("pipe burst")),
    });
    const session = await DuplexSession.start({ transport });
    const status = await session.waitForExit({ timeoutMs: 2000 });
    assert.equal(status.state, "failed", "the session did not stay alive unread");
    assert.ok(status.state === "failed" && isDuplexError(status.error, "protocol"));
    assert.match(status.error.message, /could not read the CLI's output \(pipe burst\)/);
    assert.equal(closes(), 1, "the transport was closed");
    assert.equal(session.state, "failed");
    await assert.rejects(session.send("x"), (e) => e === status.error);
  });

  await t.step("a transport that yields strings, not bytes", async () => {
    const { transport } = brokenTransport({
      start: (controller) => controller.enqueue('{"type":"system"}' as unknown as Uint8Array),
    });
    const session = await DuplexSession.start({ transport });
    const status = await session.waitForExit({ timeoutMs: 2000 });
    assert.equal(status.state, "failed");
    assert.match(
      status.state === "failed" ? status.error.message : "",
      /transports yield Uint8Array bytes/,
    );
    assert.equal(session.alive, false);
  });
});
