import assert from "node:assert/strict";
import { DuplexError } from "../../src/errors.ts";
import { replay, type ReplayOptions } from "../../src/testing/replay_transport.ts";
import { loadTranscript, type TranscriptEntry } from "../../src/testing/transcript.ts";
import { FrameReader, openContext, userLine } from "./_frame_reader.ts";

const FIXTURES = new URL("../fixtures/transcripts/", import.meta.url);

function load(name: string): Promise<TranscriptEntry[]> {
  return loadTranscript(new URL(`${name}.ndjson`, FIXTURES));
}

async function open(name: string | TranscriptEntry[], options?: ReplayOptions) {
  const entries = typeof name === "string" ? await load(name) : name;
  const cli = replay(entries, options);
  const transport = await cli.transport(openContext());
  return { cli, transport, reader: new FrameReader(transport) };
}

function controlRequest(id: string, request: Record<string, unknown>): string {
  return JSON.stringify({ type: "control_request", request_id: id, request });
}

function controlResponse(id: string, response: Record<string, unknown>): string {
  return JSON.stringify({
    type: "control_response",
    response: { subtype: "success", request_id: id, response },
  });
}

const BASH_INPUT = {
  command: "touch tool-marker.txt && echo hello-from-tool",
  description: "Create a marker file",
};

function entries(...items: [string, Record<string, unknown> | string][]): TranscriptEntry[] {
  return items.map(([dir, body], seq) => ({
    seq,
    tMs: seq,
    dir: dir as TranscriptEntry["dir"],
    ...(typeof body === "string" ? { raw: body } : { msg: body }),
  }));
}

Deno.test("replay() plays 01 two turns and rewrites the user line uuids", async () => {
  const { cli, transport, reader } = await open("01-duplex-two-turns");
  assert.equal(transport.info.kind, "replay");
  assert.match(transport.info.description ?? "", /^replay of \/usr\/local\/bin\/claude -p /);

  await transport.write(userLine("first turn", "live-1"));
  const turn1 = await reader.until((f) => f.type === "result");
  assert.deepEqual(
    turn1.map((f) => f.type),
    ["command_lifecycle", "command_lifecycle", "system", "assistant", "result"],
  );
  assert.ok(turn1.slice(0, 2).every((f) => f.command_uuid === "live-1"));
  assert.deepEqual(turn1[2]!.user_message_uuids, ["live-1"]);
  assert.equal(turn1[3]!.user_message_uuid, "live-1");
  assert.equal(turn1[4]!.user_message_uuid, "live-1");
  assert.equal(turn1[4]!.result, "Echo: first turn");

  await transport.write(userLine("second turn", "live-2"));
  const turn2 = await reader.until((f) => f.type === "result");
  assert.deepEqual(turn2[0], { ...turn2[0], command_uuid: "live-1", state: "completed" });
  assert.ok(turn2.slice(1, 3).every((f) => f.command_uuid === "live-2"));
  assert.equal(turn2.at(-1)!.user_message_uuid, "live-2");

  await transport.endInput();
  const rest = await reader.rest();
  assert.deepEqual(rest.map((f) => [f.command_uuid, f.state]), [["live-2", "completed"]]);
  assert.deepEqual(await transport.closed, {
    code: 0,
    signal: null,
    requested: false,
    stderrTail: "",
  });
  await cli.done;
  assert.deepEqual(cli.mismatches, []);
  assert.ok(cli.complete);
  assert.equal(cli.written.length, 2);
  assert.deepEqual(
    [...cli.ids],
    [
      ["11111111-1111-4111-8111-111111111111", "live-1"],
      ["22222222-2222-4222-8222-222222222222", "live-2"],
    ],
  );
});

Deno.test("replay() of 07 rewrites the interrupt's request id and skips the cancelled answer", async () => {
  const { cli, transport, reader } = await open("07-interrupt-while-permission-pending");
  await transport.write(userLine("please run [[tool:bash]]"));
  const asked = (await reader.until((f) => f.type === "control_request")).at(-1)!;
  const requestId = String(asked.request_id);
  await transport.write(controlRequest("live_ctl_1", { subtype: "interrupt" }));
  const afterInterrupt = await reader.until((f) => f.type === "result");
  assert.deepEqual(afterInterrupt[0], { type: "control_cancel_request", request_id: requestId });
  assert.deepEqual(afterInterrupt[1]!.response, {
    subtype: "success",
    request_id: "live_ctl_1",
    response: { still_queued: [] },
  });
  assert.equal(afterInterrupt.at(-1)!.subtype, "error_during_execution");
  // A correct session does not answer the cancelled request: the next write is the next turn.
  await transport.write(userLine("after interrupt"));
  assert.equal((await reader.until((f) => f.type === "result")).at(-1)!.is_error, false);
  await transport.endInput();
  assert.equal((await transport.closed).code, 0);
  await cli.done;
  assert.deepEqual(cli.mismatches, []);
});

Deno.test("replay() reports a session that answers a cancelled request", async () => {
  const { cli, transport, reader } = await open("07-interrupt-while-permission-pending");
  await transport.write(userLine("please run [[tool:bash]]"));
  const asked = (await reader.until((f) => f.type === "control_request")).at(-1)!;
  await transport.write(controlRequest("c", { subtype: "interrupt" }));
  await transport.write(
    controlResponse(String(asked.request_id), { behavior: "allow", updatedInput: BASH_INPUT }),
  );
  await reader.rest();
  await cli.done;
  assert.deepEqual(cli.mismatches, [
    'stdin #13: expected user "after interrupt", got control_response/success (allow)',
  ]);
});

Deno.test("replay() ends with a mismatch exit when the session writes something else", async (t) => {
  const cases: [string, (w: (line: string) => Promise<void>) => Promise<void>, string][] = [
    [
      "other text",
      (w) => w(userLine("wrong turn")),
      'stdin #1: user "first turn" differs at message.content: expected "first turn", got "wrong turn"',
    ],
    [
      "other type",
      (w) => w(controlRequest("x", { subtype: "interrupt" })),
      'stdin #1: expected user "first turn", got control_request/interrupt',
    ],
    [
      "not JSON",
      (w) => w("{oops"),
      'stdin #1: expected user "first turn", got a line that is not a JSON object: {oops',
    ],
  ];
  for (const [name, act, expected] of cases) {
    await t.step(name, async () => {
      const { cli, transport, reader } = await open("01-duplex-two-turns");
      await act((line) => transport.write(line));
      assert.deepEqual(await reader.rest(), []);
      const exit = await transport.closed;
      assert.deepEqual(exit, {
        code: null,
        signal: null,
        reason: `replay mismatch: ${expected}`,
        requested: false,
        stderrTail: "",
      });
      await cli.done;
      assert.deepEqual(cli.mismatches, [expected]);
      assert.equal(cli.complete, false);
      await assert.rejects(
        () => transport.write(userLine("late")),
        (error: unknown) =>
          error instanceof DuplexError && error.kind === "process_exited" && error.exit === exit,
      );
      assert.equal(await transport.close(), exit);
    });
  }
});

Deno.test("replay() reports an interrupt that never came as in the recording", async () => {
  const { cli, transport, reader } = await open("07-interrupt-while-permission-pending");
  await transport.write(userLine("please run [[tool:bash]]"));
  await reader.until((f) => f.type === "control_request");
  await transport.write(userLine("instead"));
  await cli.done;
  assert.deepEqual(cli.mismatches, [
    'stdin #6: expected control_request/interrupt, got user "instead"',
  ]);
});

Deno.test("replay() waits a bounded time for each expected write", async (t) => {
  await t.step("no write at all", async () => {
    const { cli, transport } = await open("01-duplex-two-turns", { waitTimeoutMs: 30 });
    const exit = await transport.closed;
    assert.match(
      exit.reason ?? "",
      /^replay mismatch: stdin #1: expected user "first turn", got nothing within 30 ms$/,
    );
    await cli.done;
  });
  await t.step("no end of input", async () => {
    const { cli, transport } = await open("01-duplex-two-turns", { waitTimeoutMs: 30 });
    await transport.write(userLine("first turn"));
    await transport.write(userLine("second turn"));
    await cli.done;
    assert.deepEqual(cli.mismatches, [
      "stdin_end #14: expected the end of input, got nothing within 30 ms",
    ]);
  });
});

Deno.test("replay() reports the end of input coming too early or too late", async (t) => {
  await t.step("too early", async () => {
    const { cli, transport } = await open("01-duplex-two-turns");
    await transport.write(userLine("first turn"));
    await transport.endInput();
    await cli.done;
    assert.deepEqual(cli.mismatches, [
      'stdin #7: expected user "second turn", but the session ended its input',
    ]);
  });
  await t.step("an extra write instead", async () => {
    const { cli, transport } = await open("01-duplex-two-turns");
    await transport.write(userLine("first turn"));
    await transport.write(userLine("second turn"));
    await transport.write(userLine("third turn"));
    await cli.done;
    assert.deepEqual(cli.mismatches, [
      'stdin_end #14: expected the end of input, got user "third turn"',
    ]);
  });
});

Deno.test("replay() close() mid-transcript ends with SIGTERM; after the last write it plays out", async (t) => {
  await t.step("mid-transcript", async () => {
    const { cli, transport } = await open("01-duplex-two-turns");
    await transport.write(userLine("first turn"));
    const [a, b] = await Promise.all([transport.close(), transport.close()]);
    assert.equal(a, b);
    assert.deepEqual(a, {
      code: null,
      signal: "SIGTERM",
      reason: "closed before the transcript ended",
      requested: true,
      stderrTail: "",
    });
    await cli.done;
    assert.deepEqual(cli.mismatches, []);
    assert.equal(cli.complete, false);
  });
  await t.step("after the last expected write", async () => {
    const { cli, transport, reader } = await open("01-duplex-two-turns");
    await transport.write(userLine("first turn", "a"));
    await transport.write(userLine("second turn", "b"));
    await reader.until((f) => f.type === "result" && f.result === "Echo: second turn");
    const exit = await transport.close();
    assert.deepEqual(exit, { code: 0, signal: null, requested: true, stderrTail: "" });
    assert.deepEqual((await reader.rest()).map((f) => f.command_uuid), ["b"]);
    await cli.done;
    assert.ok(cli.complete);
    assert.deepEqual(cli.mismatches, []);
  });
});

Deno.test("replay() compares control responses: request id, behavior, updatedInput, message", async (t) => {
  const cases: [string, (id: string) => string, string | undefined, ReplayOptions?][] = [
    [
      "the recorded answer",
      (id) => controlResponse(id, { behavior: "allow", updatedInput: BASH_INPUT, toolUseID: "x" }),
      undefined,
    ],
    [
      "another behavior",
      (id) => controlResponse(id, { behavior: "deny", message: "no" }),
      'stdin #6: control_response/success (allow) differs at response.response.behavior: expected "allow", got "deny"',
    ],
    [
      "another updatedInput",
      (id) => controlResponse(id, { behavior: "allow", updatedInput: { command: "rm -rf /" } }),
      "stdin #6: control_response/success (allow) differs at response.response.updatedInput.command",
    ],
    [
      "another updatedInput, loose",
      (id) => controlResponse(id, { behavior: "allow", updatedInput: { command: "rm -rf /" } }),
      undefined,
      { loose: true },
    ],
    [
      "another request id",
      () => controlResponse("not-the-request", { behavior: "allow", updatedInput: BASH_INPUT }),
      "stdin #6: control_response/success (allow) differs at response.request_id",
    ],
    [
      "another request id, loose",
      () => controlResponse("not-the-request", { behavior: "allow", updatedInput: BASH_INPUT }),
      "stdin #6: control_response/success (allow) differs at response.request_id",
      { loose: true },
    ],
  ];
  for (const [name, answer, expected, options] of cases) {
    await t.step(name, async () => {
      const { cli, transport, reader } = await open("03-can-use-tool-allow", {
        waitTimeoutMs: 200,
        ...options,
      });
      await transport.write(userLine("please run [[tool:bash]]"));
      const asked = (await reader.until((f) => f.type === "control_request")).at(-1)!;
      await transport.write(answer(String(asked.request_id)));
      if (expected === undefined) {
        assert.equal((await reader.until((f) => f.type === "result")).at(-1)?.is_error, false);
        await transport.close();
        await cli.done;
        assert.deepEqual(cli.mismatches, []);
      } else {
        await cli.done;
        assert.equal(cli.mismatches.length, 1);
        assert.ok(cli.mismatches[0]!.startsWith(expected), cli.mismatches[0]);
      }
      await reader.rest();
    });
  }
});

Deno.test("replay() of 09 maps control request ids and compares request fields", async (t) => {
  await t.step("fresh ids are rewritten in the responses", async () => {
    const { cli, transport, reader } = await open("09-misc-control-requests", {
      skipStdin: (e) => e.seq === 26 || e.seq === 29,
    });
    const requests: [string, Record<string, unknown>][] = [
      ["initialize", {}],
      ["set_permission_mode", { mode: "acceptEdits" }],
      ["set_model", { model: "sonnet" }],
      ["set_max_thinking_tokens", { max_thinking_tokens: 2048 }],
      ["mcp_status", {}],
      ["get_context_usage", { detail: "summary" }],
      ["get_settings", {}],
      ["definitely_not_a_subtype", {}],
    ];
    for (const [i, [subtype, fields]] of requests.entries()) {
      await transport.write(JSON.stringify({ type: "keep_alive" }));
      await transport.write(controlRequest(`live_${i}`, { subtype, ...fields }));
      const response = (await reader.until((f) => f.type === "control_response")).at(-1)!;
      assert.equal((response.response as Record<string, unknown>).request_id, `live_${i}`);
    }
    await transport.write(userLine("which model? [[tool:write]]"));
    await transport.write(userLine("back to default model"));
    await transport.endInput();
    const rest = await reader.rest();
    const stale = rest.filter((f) => f.type === "control_response")
      .map((f) => (f.response as Record<string, unknown>).request_id);
    assert.deepEqual(stale, ["ctl_13_t1lek0", "ctl_14_74o6tc"]);
    await cli.done;
    assert.deepEqual(cli.mismatches, []);
    assert.equal(cli.written.filter((f) => f.type === "keep_alive").length, 8);
  });
  await t.step("a different request field is a mismatch", async () => {
    const { cli, transport } = await open("09-misc-control-requests");
    await transport.write(controlRequest("a", { subtype: "initialize" }));
    await transport.write(controlRequest("b", { subtype: "set_permission_mode", mode: "plan" }));
    await cli.done;
    assert.deepEqual(cli.mismatches, [
      'stdin #4: control_request/set_permission_mode differs at request.mode: expected "acceptEdits", got "plan"',
    ]);
  });
  await t.step("one recorded id cannot stand for two live ids", async () => {
    const twice = entries(
      ["stdin", { type: "control_request", request_id: "r", request: { subtype: "interrupt" } }],
      ["stdin", { type: "control_request", request_id: "r", request: { subtype: "interrupt" } }],
    );
    const { cli, transport } = await open(twice);
    await transport.write(controlRequest("x", { subtype: "interrupt" }));
    await transport.write(controlRequest("y", { subtype: "interrupt" }));
    await cli.done;
    assert.deepEqual(cli.mismatches, [
      'stdin #1: control_request/interrupt differs at request_id: recorded id "r" was already replayed as "x", got "y"',
    ]);
  });
});

Deno.test("replay() of 08 maps hook callback ids from initialize", async () => {
  const all = await load("08-hook-callback");
  const init = structuredClone(all[1]!.msg!) as { request: Record<string, unknown> };
  const hooks = JSON.parse(
    JSON.stringify(init.request.hooks).replaceAll('"hook_', '"live_hook_'),
  );
  const { cli, transport, reader } = await open(all);
  await transport.write(controlRequest("init_1", { ...init.request, hooks }));
  await transport.write(userLine("please run [[tool:bash]]"));
  const callbacks: string[] = [];
  for (;;) {
    const frame = await reader.next();
    if (frame.type === "result") break;
    if (frame.type !== "control_request") continue;
    const request = frame.request as Record<string, unknown>;
    callbacks.push(String(request.callback_id));
    const answer = request.callback_id === "live_hook_pre_bash"
      ? {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "allowed by host hook",
        },
      }
      : {};
    await transport.write(controlResponse(String(frame.request_id), answer));
  }
  assert.deepEqual(callbacks, [
    "live_hook_prompt",
    "live_hook_pre_bash",
    "live_hook_post_any",
    "live_hook_stop",
  ]);
  await transport.endInput();
  await cli.done;
  assert.deepEqual(cli.mismatches, []);
  assert.ok(cli.complete);
});

Deno.test("replay() strict compares every field but the ids", async () => {
  const extra = JSON.stringify({ ...JSON.parse(userLine("first turn")), priority: "now" });
  const loose = await open("01-duplex-two-turns", { waitTimeoutMs: 100 });
  await loose.transport.write(extra);
  await loose.reader.until((f) => f.type === "result");
  await loose.transport.close();
  await loose.cli.done;
  assert.deepEqual(loose.cli.mismatches, []);

  const strict = await open("01-duplex-two-turns", { strict: true });
  await strict.transport.write(extra);
  await strict.cli.done;
  assert.deepEqual(strict.cli.mismatches, [
    'stdin #1: user "first turn" differs at uuid: expected "11111111-1111-4111-8111-111111111111", got nothing',
  ]);

  const ok = await open("01-duplex-two-turns", { strict: true });
  await ok.transport.write(userLine("first turn", "any-uuid"));
  await ok.reader.until((f) => f.type === "result");
  await ok.transport.close();
  await ok.cli.done;
  assert.deepEqual(ok.cli.mismatches, []);
});

Deno.test("replay() plays every recorded fixture given the recorded writes", async (t) => {
  const deliveries: ReplayOptions[] = [{}, { chunking: "bytes" }, { chunking: { maxChunk: 7 } }];
  let n = 0;
  for await (const file of Deno.readDir(FIXTURES)) {
    if (!file.name.endsWith(".ndjson")) continue;
    const options = deliveries[n++ % deliveries.length]!;
    await t.step(`${file.name} ${JSON.stringify(options)}`, async () => {
      const all = await load(file.name.replace(/\.ndjson$/, ""));
      const { cli, transport, reader } = await open(all, options);
      const reading = reader.rest();
      const cancelled = new Set(
        all.filter((e) => e.dir === "stdout" && e.msg?.type === "control_cancel_request")
          .map((e) => e.msg!.request_id),
      );
      for (const entry of all) {
        if (entry.dir === "stdin") {
          const response = entry.msg!.response as Record<string, unknown> | undefined;
          if (response && cancelled.has(response.request_id)) continue;
          await transport.write(JSON.stringify(entry.msg));
        }
        if (entry.dir === "meta" && entry.msg!.event === "stdin_end") await transport.endInput();
      }
      const frames = await reading;
      const exit = all.find((e) => e.msg?.event === "exit")!.msg!;
      assert.equal((await transport.closed).code, exit.code);
      await cli.done;
      assert.deepEqual(cli.mismatches, []);
      assert.ok(cli.complete);
      assert.equal(frames.length, all.filter((e) => e.dir === "stdout").length);
    });
  }
});

Deno.test("replay() emits stderr entries and raw stdout lines", async () => {
  const { cli, transport, reader } = await open(entries(
    ["stderr", "warning: something"],
    ["stdout", "not json noise"],
    ["stdout", { type: "keep_alive" }],
    ["stderr", "fatal: oops"],
    ["meta", { event: "exit", code: 1, signal: null }],
  ));
  assert.equal(await reader.nextLine(), "not json noise");
  assert.deepEqual(await reader.rest(), [{ type: "keep_alive" }]);
  assert.deepEqual(await Array.fromAsync(transport.stderr!), ["warning: something", "fatal: oops"]);
  assert.deepEqual(await transport.closed, {
    code: 1,
    signal: null,
    requested: false,
    stderrTail: "warning: something\nfatal: oops",
  });
  await cli.done;
});

Deno.test("replay() ends a transcript without an exit entry and keeps time when asked", async () => {
  const timed = entries(["stdout", { type: "keep_alive" }], ["stdout", { type: "keep_alive" }]);
  timed[1]!.tMs = 200;
  const { cli, transport, reader } = await open(timed, { speed: 10 });
  const started = performance.now();
  assert.equal((await reader.rest()).length, 2);
  assert.ok(performance.now() - started >= 15, "the 200 ms gap is replayed as 20 ms");
  assert.deepEqual(await transport.closed, {
    code: null,
    signal: null,
    reason: "the transcript has no exit entry",
    requested: false,
    stderrTail: "",
  });
  await cli.done;
  assert.ok(cli.complete);
});

Deno.test("replay() close() interrupts a timed wait promptly", async () => {
  const timed = entries(["stdout", { type: "keep_alive" }], ["stdout", { type: "keep_alive" }]);
  timed[1]!.tMs = 60_000;
  const { cli, transport, reader } = await open(timed, { speed: 1 });
  await reader.next();
  const exit = await transport.close();
  assert.equal(exit.requested, true);
  await cli.done;
  assert.deepEqual(await reader.rest(), [{ type: "keep_alive" }]);
});

Deno.test("replay() checks waitTimeoutMs: 1 to 2^31-1, or Infinity", async (t) => {
  const all = await load("01-duplex-two-turns");
  for (const waitTimeoutMs of [0, 2 ** 31, Number.NaN]) {
    assert.throws(() => replay(all, { waitTimeoutMs }), {
      name: "RangeError",
      message: new RegExp(
        `^Cannot prepare a replay: waitTimeoutMs must be .*got ${waitTimeoutMs}$`,
      ),
    });
  }
  await t.step("Infinity waits with no timer until the session writes or closes", async () => {
    const { cli, transport } = await open(all, { waitTimeoutMs: Infinity });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(cli.mismatches, []);
    assert.equal((await transport.close()).signal, "SIGTERM");
    await cli.done;
  });
});

Deno.test("replay() has ended readable and stderr by the time closed resolves", async (t) => {
  const script = entries(
    ["stdout", { type: "keep_alive", n: 1 }],
    ["stderr", "a warning"],
    ["stdout", "noise at the end"],
    ["meta", { event: "exit", code: 0, signal: null }],
  );
  /** Reads a stream that should have ended; every read must settle at once. */
  async function drained<T>(stream: ReadableStream<T>): Promise<T[]> {
    const reader = stream.getReader();
    const chunks: T[] = [];
    for (;;) {
      const result = await Promise.race([
        reader.read(),
        new Promise<"waiting">((resolve) => queueMicrotask(() => resolve("waiting"))),
      ]);
      assert.notEqual(result, "waiting", "a read waited after closed resolved");
      if (result === "waiting" || result.done) return chunks;
      chunks.push(result.value);
    }
  }
  await t.step("after the recorded exit, nothing read before", async () => {
    const cli = replay(script);
    const transport = await cli.transport(openContext());
    await transport.closed;
    const bytes = await drained(transport.readable);
    assert.ok(bytes.every((chunk) => chunk instanceof Uint8Array));
    const text = new TextDecoder().decode(new Uint8Array(bytes.flatMap((chunk) => [...chunk])));
    assert.equal(text, '{"type":"keep_alive","n":1}\nnoise at the end\n');
    assert.deepEqual(await drained(transport.stderr!), ["a warning"]);
    await cli.done;
  });
  await t.step("after close()", async () => {
    const cli = replay(await load("01-duplex-two-turns"));
    const transport = await cli.transport(openContext());
    assert.equal((await transport.close()).requested, true);
    await drained(transport.readable);
    await drained(transport.stderr!);
    await cli.done;
  });
});

Deno.test("replay() opens once and respects an aborted signal", async () => {
  const cli = replay(await load("01-duplex-two-turns"), { waitTimeoutMs: 50 });
  const reason = new Error("no");
  await assert.rejects(() => cli.open({ signal: AbortSignal.abort(reason) }), (e) => e === reason);
  const transport = await cli.open();
  await assert.rejects(
    () => cli.transport(openContext()),
    (error: unknown) => error instanceof DuplexError && error.kind === "invalid_argument",
  );
  await transport.close();
  await cli.done;
});

Deno.test("replay() honours backpressure: output waits for the reader", async () => {
  const many = entries(
    ...Array.from(
      { length: 300 },
      (_, i) => ["stdout", { type: "keep_alive", i }] as [string, Record<string, unknown>],
    ),
    ["meta", { event: "exit", code: 0, signal: null }],
  );
  const { cli, transport, reader } = await open(many);
  await new Promise((resolve) => setTimeout(resolve, 20));
  let finished = false;
  transport.closed.then(() => (finished = true));
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(finished, false, "the replay did not run ahead of the reader");
  assert.equal((await reader.rest()).length, 300);
  await cli.done;
  assert.ok(cli.complete);
});
