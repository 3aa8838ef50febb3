import assert from "node:assert/strict";
import { DuplexError } from "../../src/errors.ts";
import {
  assistantTextFrame,
  canUseToolRequest,
  controlSuccess,
  initFrame,
  resultFrame,
} from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { FrameReader, openContext, userLine } from "./_frame_reader.ts";

const INTERRUPT = JSON.stringify({
  type: "control_request",
  request_id: "ctl_1",
  request: { subtype: "interrupt" },
});

Deno.test("ScriptedCli.on() answers with the first matching rule only", async () => {
  const cli = new ScriptedCli({
    rules: [{ match: (f) => f.type === "user", reply: () => [resultFrame({ text: "rule 1" })] }],
  });
  cli.on("user", () => [resultFrame({ text: "rule 2" })]);
  cli.on("control_request:interrupt", (f) => [controlSuccess(String(f.request_id))]);
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  await transport.write(userLine("a"));
  assert.equal((await reader.next()).result, "rule 1");
  await transport.write(INTERRUPT);
  const ack = await reader.next();
  assert.deepEqual(ack.response, { subtype: "success", request_id: "ctl_1" });
  await transport.close();
  assert.deepEqual(await reader.rest(), []);
});

Deno.test("ScriptedCli.on() with once answers one line, then the next rule answers", async () => {
  const cli = new ScriptedCli()
    .on("user", () => [resultFrame({ text: "first" })], { once: true })
    .on("user", () => [resultFrame({ text: "later" })]);
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  for (const text of ["1", "2", "3"]) await transport.write(userLine(text));
  assert.deepEqual(
    [await reader.next(), await reader.next(), await reader.next()].map((f) => f.result),
    ["first", "later", "later"],
  );
  await transport.close();
});

Deno.test("ScriptedCli answers on a later macrotask, in write order, async rules included", async () => {
  const cli = new ScriptedCli()
    .on("user", async (frame) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return [
        assistantTextFrame(
          `slow ${(frame.message as { content: [{ text: string }] }).content[0].text}`,
        ),
      ];
    }, { once: true })
    .on("user", (_frame, cli) => {
      cli.emit(assistantTextFrame("fast"));
    });
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  await transport.write(userLine("a"));
  await transport.write(userLine("b"));
  const texts = [await reader.next(), await reader.next()].map(
    (f) => (f.message as { content: [{ text: string }] }).content[0].text,
  );
  assert.deepEqual(texts, ["fast", "slow a"]);
  await transport.close();
});

Deno.test("ScriptedCli records bad lines and rule errors in errors, never throwing", async () => {
  const cli = new ScriptedCli()
    .on("boom", () => {
      throw new Error("rule failed");
    })
    .on("string", () => "not frames" as unknown as unknown[])
    .on((f) => (f as { x: { y: number } }).x.y === 1, () => []);
  const transport = await cli.transport(openContext());
  await transport.write("{not json");
  await transport.write("[1]");
  await transport.write('{"type":"boom"}');
  await transport.write('{"type":"string"}');
  await transport.write('{"type":"other"}');
  await new Promise((resolve) => setTimeout(resolve, 10));
  const kinds = cli.errors.map((e) => (e instanceof DuplexError ? e.kind : e.message));
  assert.equal(kinds[0], "protocol");
  assert.equal((cli.errors[0] as DuplexError).excerpt, "{not json");
  assert.equal(kinds[1], "protocol");
  assert.ok(cli.errors.some((e) => e.message === "rule failed"));
  assert.ok(cli.errors.some((e) => e instanceof TypeError && /iterable/.test(e.message)));
  assert.ok(cli.errors.some((e) => e instanceof TypeError && /undefined/.test(e.message)));
  assert.deepEqual(cli.received.map((f) => f.type), ["boom", "string", "other"]);
  await transport.close();
});

Deno.test("ScriptedCli echo answers like the real CLI", async (t) => {
  const cli = new ScriptedCli({ echo: true, sessionId: "sess-1" });
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);

  await t.step("a user line gets init, assistant and result", async () => {
    await transport.write(userLine("first turn"));
    const frames = await reader.until((f) => f.type === "result");
    assert.deepEqual(frames.map((f) => f.type), ["system", "assistant", "result"]);
    assert.equal(frames[0]!.session_id, "sess-1");
    assert.equal(frames[2]!.result, "Echo: first turn");
    assert.equal(frames[2]!.total_cost_usd, 0.000308);
  });

  await t.step("a user line with a uuid gets lifecycle frames; costs add up", async () => {
    await transport.write(userLine("second turn", "u-2"));
    const frames = await reader.until((f) =>
      f.type === "command_lifecycle" && f.state === "completed"
    );
    assert.deepEqual(
      frames.map((f) => f.type === "command_lifecycle" ? f.state : f.type),
      ["queued", "started", "system", "assistant", "result", "completed"],
    );
    assert.ok(frames.every((f) => f.session_id === "sess-1"));
    assert.equal(frames[3]!.user_message_uuid, "u-2");
    assert.equal(frames[4]!.total_cost_usd, 0.000616);
    assert.deepEqual(frames[4]!.user_message_uuids, ["u-2"]);
  });

  await t.step(
    "interrupt is acknowledged; initialize succeeds; others are unsupported",
    async () => {
      await transport.write(INTERRUPT);
      assert.deepEqual((await reader.next()).response, {
        subtype: "success",
        request_id: "ctl_1",
        response: { still_queued: [] },
      });
      await transport.write(
        JSON.stringify({
          type: "control_request",
          request_id: "i",
          request: { subtype: "initialize" },
        }),
      );
      const init = (await reader.next()).response as Record<string, unknown>;
      assert.equal(init.subtype, "success");
      assert.ok(Array.isArray((init.response as Record<string, unknown>).commands));
      await transport.write(
        JSON.stringify({ type: "control_request", request_id: "x", request: { subtype: "nope" } }),
      );
      assert.deepEqual((await reader.next()).response, {
        subtype: "error",
        request_id: "x",
        error: "Unsupported control request subtype: nope",
        error_code: "unsupported_request",
      });
    },
  );

  await t.step("end of input exits with code 0 after pending replies", async () => {
    await transport.write(userLine("last"));
    await transport.endInput();
    assert.equal(cli.inputEnded, true);
    const rest = await reader.rest();
    assert.equal(rest.at(-1)?.result, "Echo: last");
    const exit = await transport.closed;
    assert.deepEqual(exit, { code: 0, signal: null, requested: false, stderrTail: "" });
    assert.equal(await transport.close(), exit);
  });
});

Deno.test("ScriptedCli without echo ignores unanswered lines and keeps running after endInput", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  await transport.write(userLine("nobody answers"));
  await transport.endInput();
  await transport.endInput();
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(cli.inputEnded, true);
  const exit = await transport.close();
  assert.deepEqual(exit, { code: 0, signal: null, requested: true, stderrTail: "" });
  assert.equal(cli.closeCalls, 1);
});

Deno.test("ScriptedCli.nextWrite() returns the oldest unclaimed matching line, or waits", async (t) => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());

  await t.step("lines written before the call are returned in order", async () => {
    await transport.write(userLine("one"));
    await transport.write(INTERRUPT);
    await transport.write(userLine("two"));
    assert.equal((await cli.nextWrite("control_request:interrupt")).request_id, "ctl_1");
    assert.equal((await cli.nextWrite()).type, "user");
    const second = await cli.nextWrite("user");
    assert.equal((second.message as { content: [{ text: string }] }).content[0].text, "two");
  });

  await t.step("a call before the write waits for it", async () => {
    const waiting = cli.nextWrite((f) => f.type === "control_response");
    await transport.write(userLine("not this"));
    await transport.write(JSON.stringify(controlSuccess("r")));
    assert.equal((await waiting).type, "control_response");
    assert.equal((await cli.nextWrite("user")).type, "user");
  });

  await t.step("two waiters get two different lines", async () => {
    const a = cli.nextWrite("user");
    const b = cli.nextWrite("user");
    await transport.write(userLine("x"));
    await transport.write(userLine("y"));
    const texts = (await Promise.all([a, b])).map(
      (f) => (f.message as { content: [{ text: string }] }).content[0].text,
    );
    assert.deepEqual(texts, ["x", "y"]);
  });

  await t.step("times out with a timeout error", async () => {
    await assert.rejects(
      () => cli.nextWrite("keep_alive", { timeoutMs: 10 }),
      (error: unknown) =>
        error instanceof DuplexError && error.kind === "timeout" &&
        /keep_alive/.test(error.message),
    );
  });

  await t.step("rejects with the signal's reason and leaves no listener", async () => {
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners += 1;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners -= 1;
      remove(...args);
    }) as typeof remove;
    for (let i = 0; i < 5; i++) {
      const waiting = cli.nextWrite("user", { signal: controller.signal });
      await transport.write(userLine(`n${i}`));
      await waiting;
    }
    assert.equal(listeners, 0);
    const reason = new Error("stop");
    const waiting = cli.nextWrite("never", { signal: controller.signal });
    controller.abort(reason);
    await assert.rejects(() => waiting, (error: unknown) => error === reason);
    await assert.rejects(
      () => cli.nextWrite("never", { signal: controller.signal }),
      (error: unknown) => error === reason,
    );
    assert.equal(listeners, 0);
  });

  await t.step(
    "timeoutMs is 1 to 2^31-1 or Infinity (no timer: only the signal ends the wait)",
    async () => {
      for (const timeoutMs of [0, -1, 2 ** 31, Number.NaN]) {
        await assert.rejects(() => cli.nextWrite("user", { timeoutMs }), {
          name: "RangeError",
          message: new RegExp(
            `^Cannot get the next write: timeoutMs must be a number .*got ${timeoutMs}$`,
          ),
        });
      }
      const controller = new AbortController();
      const waiting = cli.nextWrite("never", { timeoutMs: Infinity, signal: controller.signal });
      const reason = new Error("enough");
      controller.abort(reason);
      await assert.rejects(() => waiting, (error: unknown) => error === reason);
      const late = cli.nextWrite("user", { timeoutMs: Infinity });
      await transport.write(userLine("late"));
      assert.equal((await late).type, "user");
    },
  );

  await transport.close();
});

Deno.test("ScriptedCli.exit() ends readable after emitted output and resolves closed", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  cli.emit(initFrame(), resultFrame());
  cli.emitStderr("warning: one");
  cli.emitStderr("fatal: two");
  cli.exit({ code: 3 });
  cli.exit({ code: 9 });
  const reader = new FrameReader(transport);
  assert.deepEqual((await reader.rest()).map((f) => f.type), ["system", "result"]);
  const exit = await transport.closed;
  assert.deepEqual(exit, {
    code: 3,
    signal: null,
    requested: false,
    stderrTail: "warning: one\nfatal: two",
  });
  const stderr = await Array.fromAsync(transport.stderr!);
  assert.deepEqual(stderr, ["warning: one", "fatal: two"]);
  assert.equal(await transport.close(), exit);
});

Deno.test("ScriptedCli.exit() with a signal has a null code", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  cli.exit({ signal: "SIGKILL", reason: "killed", stderrTail: "custom" });
  assert.deepEqual(await transport.closed, {
    code: null,
    signal: "SIGKILL",
    reason: "killed",
    requested: false,
    stderrTail: "custom",
  });
});

Deno.test("Transport.write() rejects with process_exited after the scripted CLI exits", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  cli.exit({ code: 1, stderrTail: "Error: boom" });
  await assert.rejects(
    () => transport.write(userLine("late")),
    (error: unknown) => {
      assert.ok(error instanceof DuplexError);
      assert.equal(error.kind, "process_exited");
      assert.equal(error.exit?.code, 1);
      assert.match(error.message, /exit code 1.*Error: boom/);
      return true;
    },
  );
  assert.deepEqual(cli.received, []);
});

Deno.test("ScriptedCli.failWrites() makes writes reject while the process runs", async () => {
  const cli = new ScriptedCli({ echo: true });
  const transport = await cli.transport(openContext());
  await transport.write(userLine("ok"));
  const cause = new Error("EPIPE");
  cli.failWrites(cause);
  await assert.rejects(
    () => transport.write(userLine("broken")),
    (error: unknown) =>
      error instanceof DuplexError && error.kind === "process_exited" && error.cause === cause,
  );
  cli.failWrites();
  await assert.rejects(
    () => transport.write(userLine("broken")),
    (error: unknown) =>
      error instanceof DuplexError && (error.cause as Error).message === "Broken pipe",
  );
  assert.equal(cli.received.length, 1);
  await transport.close();
});

Deno.test("ScriptedCli.hang() stops answers and makes close() a SIGTERM", async () => {
  const cli = new ScriptedCli({ echo: true });
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  cli.hang();
  await transport.write(userLine("hello?"));
  await transport.endInput();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(cli.received.length, 1);
  const [first, second] = await Promise.all([transport.close(), transport.close()]);
  assert.equal(first, second);
  assert.deepEqual(first, { code: null, signal: "SIGTERM", requested: true, stderrTail: "" });
  assert.deepEqual(await reader.rest(), []);
  assert.equal(cli.closeCalls, 2);
});

Deno.test("ScriptedCli queues output, exit and failures for the next process when none is open", async () => {
  const cli = new ScriptedCli();
  cli.emit(initFrame({ sessionId: "early" }));
  cli.emitStderr("starting");
  cli.exit({ code: 2 });
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  assert.equal((await reader.next()).session_id, "early");
  assert.equal((await transport.closed).code, 2);
  assert.equal((await transport.closed).stderrTail, "starting");
});

Deno.test("ScriptedCli.transport reopens a fresh process after the previous one ended", async () => {
  const cli = new ScriptedCli({ echo: true, pid: 4242 });
  const first = await cli.transport(openContext());
  assert.deepEqual(first.info, { kind: "scripted", description: "ScriptedCli", pid: 4242 });
  cli.hang();
  await assert.rejects(
    () => cli.transport(openContext()),
    (error: unknown) => error instanceof DuplexError && error.kind === "invalid_argument",
  );
  cli.exit({ code: 1 });
  cli.emit(initFrame({ sessionId: "second" }));
  const second = await cli.transport(openContext());
  assert.notEqual(first, second);
  assert.equal(cli.opened, 2);
  assert.equal(cli.inputEnded, false);
  const reader = new FrameReader(second);
  assert.equal((await reader.next()).session_id, "second");
  await second.write(userLine("after restart"));
  assert.equal((await reader.until((f) => f.type === "result")).at(-1)?.total_cost_usd, 0.000308);
  await second[Symbol.asyncDispose]();
  assert.equal((await second.closed).requested, true);
  assert.equal(cli.received.length, 1);
});

Deno.test("ScriptedCli.transport rejects with the reason of an aborted signal", async () => {
  const cli = new ScriptedCli();
  const reason = new Error("give up");
  await assert.rejects(
    () => cli.transport({ signal: AbortSignal.abort(reason) }),
    (error: unknown) => error === reason,
  );
  assert.equal(cli.opened, 0);
});

Deno.test("ScriptedCli chunking cuts output anywhere and it reassembles", async (t) => {
  const frames = [
    assistantTextFrame("héllo wörld 👋 ".repeat(20)),
    resultFrame({ text: "ünïcode" }),
  ];
  const cases = [
    { name: "line", chunking: "line" as const, check: (n: number) => n === 1 },
    { name: "bytes", chunking: "bytes" as const, check: (n: number) => n > 50 },
    { name: "maxChunk 7", chunking: { maxChunk: 7 }, check: (n: number) => n > 100 },
  ];
  for (const { name, chunking, check } of cases) {
    await t.step(name, async () => {
      const cli = new ScriptedCli({ chunking });
      const transport = await cli.transport(openContext());
      cli.emit(...frames);
      cli.exit();
      const reader = new FrameReader(transport);
      assert.deepEqual(await reader.rest(), JSON.parse(JSON.stringify(frames)));
      assert.ok(reader.chunks.every((c) => c instanceof Uint8Array));
      assert.ok(check(reader.chunks.length), `${reader.chunks.length} chunks`);
    });
  }
  await t.step("maxChunk must be a positive integer", () => {
    assert.throws(() => new ScriptedCli({ chunking: { maxChunk: 0 } }), RangeError);
  });
});

Deno.test("ScriptedCli.emitRaw() passes bytes through unchanged", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  cli.emitRaw('garbage\n{"type":');
  cli.emitRaw(new TextEncoder().encode('"keep_alive"}\n'));
  cli.exit();
  const reader = new FrameReader(transport);
  assert.equal(await reader.nextLine(), "garbage");
  assert.deepEqual(await reader.next(), { type: "keep_alive" });
});

Deno.test("ScriptedCli output emitted before the session reads is not lost", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  for (let i = 0; i < 500; i++) cli.emit({ type: "keep_alive", i });
  cli.exit();
  const frames = await new FrameReader(transport).rest();
  assert.equal(frames.length, 500);
  assert.equal(frames[499]!.i, 499);
});

Deno.test("ScriptedCli drops output after the session cancels readable", async () => {
  const cli = new ScriptedCli();
  const transport = await cli.transport(openContext());
  await transport.readable.cancel();
  cli.emit(initFrame());
  cli.emitRaw("x");
  const exit = await transport.close();
  assert.equal(exit.code, 0);
});

Deno.test("ScriptedCli scripts a permission round trip with nextWrite inside a rule", async () => {
  const cli = new ScriptedCli().on("user", async (_frame, cli) => {
    cli.emit(canUseToolRequest({ requestId: "p1", toolName: "Bash", input: { command: "ls" } }));
    const answer = await cli.nextWrite("control_response", { timeoutMs: 1000 });
    const behavior =
      ((answer.response as Record<string, unknown>).response as Record<string, unknown>)
        .behavior;
    return [resultFrame({ text: String(behavior) })];
  });
  const transport = await cli.transport(openContext());
  const reader = new FrameReader(transport);
  await transport.write(userLine("go"));
  assert.equal((await reader.next()).request_id, "p1");
  await transport.write(JSON.stringify(controlSuccess("p1", { behavior: "deny", message: "no" })));
  assert.equal((await reader.next()).result, "deny");
  await transport.close();
});
