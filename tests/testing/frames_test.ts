import assert from "node:assert/strict";
import { classifyFrame } from "../../src/protocol/guards.ts";
import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  commandLifecycleFrame,
  controlCancel,
  controlError,
  controlSuccess,
  DEFAULT_SESSION_ID,
  initFrame,
  resultFrame,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "../../src/testing/frames.ts";
import { parseTranscript } from "../../src/testing/transcript.ts";

const FIXTURES = new URL("../fixtures/transcripts/", import.meta.url);

/* The first stdout frame of a fixture that satisfies `pick`. */
async function recorded(
  name: string,
  pick: (msg: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(new URL(`${name}.ndjson`, FIXTURES));
  const entry = parseTranscript(text).find((e) => e.dir === "stdout" && e.msg && pick(e.msg));
  assert.ok(entry?.msg, `no matching frame in ${name}`);
  return entry.msg;
}

function keysOf(value: unknown): string[] {
  return Object.keys(value as object).sort();
}

/* Every key the builder sets is one the real frame has. */
function assertSubsetOfKeys(built: unknown, real: unknown): void {
  const extra = keysOf(built).filter((key) => !keysOf(real).includes(key));
  assert.deepEqual(extra, [], `keys the real frame lacks: ${extra.join(", ")}`);
}

Deno.test("frame builders produce frames classifyFrame knows", () => {
  const frames = [
    initFrame(),
    assistantTextFrame("hi"),
    assistantToolUseFrame({ name: "Bash", input: { command: "ls" } }),
    userToolResultFrame({ toolUseId: "toolu_1", content: "out" }),
    ...streamTextDeltaFrames("streamed"),
    resultFrame(),
    resultFrame({ subtype: "error_during_execution" }),
    canUseToolRequest({ toolName: "Bash", input: {} }),
    controlSuccess("r"),
    controlError("r", "bad"),
    controlCancel("r"),
    commandLifecycleFrame("u", "queued"),
  ];
  for (const frame of frames) {
    const parsed = JSON.parse(JSON.stringify(frame));
    assert.notEqual(classifyFrame(parsed).type, "unknown", JSON.stringify(frame));
  }
});

Deno.test("frame builders follow the recorded shapes", async (t) => {
  await t.step("initFrame()", async () => {
    const real = await recorded("01-duplex-two-turns", (m) => m.subtype === "init");
    const built = initFrame({ sessionId: "s", userMessageUuids: ["u"] });
    assertSubsetOfKeys(built, real);
    assert.equal(built.session_id, "s");
    assert.equal(built.model, "claude-opus-5-5");
    assert.deepEqual((built as unknown as Record<string, unknown>).user_message_uuids, ["u"]);
    assert.equal(initFrame().session_id, DEFAULT_SESSION_ID);
  });
  await t.step("assistantTextFrame()", async () => {
    const real = await recorded("01-duplex-two-turns", (m) => m.type === "assistant");
    const built = assistantTextFrame("Echo: x", { userMessageUuid: "u", messageId: "m" });
    assertSubsetOfKeys(built, real);
    assertSubsetOfKeys(built.message, (real as { message: unknown }).message);
    assert.equal(built.user_message_uuid, "u");
    assert.equal(built.message.id, "m");
    assert.notEqual(assistantTextFrame("a").uuid, assistantTextFrame("a").uuid);
  });
  await t.step("assistantToolUseFrame()", () => {
    const built = assistantToolUseFrame({ id: "toolu_9", name: "Bash", input: { command: "ls" } });
    assert.deepEqual(built.message.content, [
      { type: "tool_use", id: "toolu_9", name: "Bash", input: { command: "ls" } },
    ]);
  });
  await t.step("userToolResultFrame()", async () => {
    const real = await recorded("03-can-use-tool-allow", (m) => m.type === "user");
    const built = userToolResultFrame({ toolUseId: "toolu_1", content: "hello", isError: true });
    assertSubsetOfKeys(built, real);
    assert.deepEqual(built.message.content, [
      { tool_use_id: "toolu_1", type: "tool_result", content: "hello", is_error: true },
    ]);
  });
  await t.step("resultFrame()", async () => {
    const real = await recorded("01-duplex-two-turns", (m) => m.type === "result");
    const built = resultFrame({ text: "t", userMessageUuid: "u", totalCostUsd: 0.5, numTurns: 2 });
    assertSubsetOfKeys(built, real);
    assert.equal(built.subtype, "success");
    assert.equal(built.is_error, false);
    assert.equal(built.total_cost_usd, 0.5);
    assert.equal(built.num_turns, 2);
    assert.equal(built.terminal_reason, "completed");
    assert.deepEqual(built.user_message_uuids, ["u"]);
    const failed = resultFrame({
      subtype: "error_during_execution",
      terminalReason: "aborted_tools",
      errors: ["boom"],
    });
    assert.equal(failed.is_error, true);
    assert.equal("result" in failed, false);
    assert.deepEqual(failed.errors, ["boom"]);
    assert.equal(failed.terminal_reason, "aborted_tools");
    assert.equal(resultFrame({ isError: true }).subtype, "success");
    assert.equal(resultFrame({ isError: true }).is_error, true);
  });
  await t.step("canUseToolRequest()", async () => {
    const real = await recorded(
      "03-can-use-tool-allow",
      (m) => m.type === "control_request",
    ) as { request: unknown };
    const built = canUseToolRequest({
      requestId: "r1",
      toolName: "Bash",
      input: { command: "ls", description: "List" },
      toolUseId: "toolu_1",
      suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
      blockedPath: "/tmp/x",
    });
    assertSubsetOfKeys(built.request, real.request);
    assert.equal(built.request_id, "r1");
    assert.equal(built.request.blocked_path, "/tmp/x");
    assert.equal(built.request.description, "List");
    assert.equal(built.request.tool_use_id, "toolu_1");
    const bare = canUseToolRequest({ toolName: "Read", input: {} });
    assert.match(bare.request_id, /^[0-9a-f-]{36}$/);
    assert.equal("permission_suggestions" in bare.request, false);
  });
  await t.step("control responses", () => {
    assert.deepEqual(controlSuccess("c1"), {
      type: "control_response",
      response: { subtype: "success", request_id: "c1" },
    });
    assert.deepEqual(controlSuccess("c1", { mode: "plan" }).response, {
      subtype: "success",
      request_id: "c1",
      response: { mode: "plan" },
    });
    assert.deepEqual(controlError("c2", "Unsupported", "unsupported_request").response, {
      subtype: "error",
      request_id: "c2",
      error: "Unsupported",
      error_code: "unsupported_request",
    });
    assert.equal("error_code" in controlError("c2", "x").response, false);
  });
  await t.step("commandLifecycleFrame()", async () => {
    const real = await recorded("01-duplex-two-turns", (m) => m.type === "command_lifecycle");
    const built = commandLifecycleFrame("u", "started", { sessionId: "s" });
    assert.deepEqual(keysOf(built), keysOf(real));
    assert.equal(built.session_id, "s");
  });
});

Deno.test("streamTextDeltaFrames() splits text by code points and follows the recording", async () => {
  const real = await recorded("06-partial-messages", (m) => m.type === "stream_event");
  const frames = streamTextDeltaFrames("héllo 👋 wörld", { chunkSize: 3, messageId: "msg_x" });
  assertSubsetOfKeys(frames[0], real);
  const deltas = frames
    .filter((f) => f.event.type === "content_block_delta")
    .map((f) => (f.event.delta as { text: string }).text);
  assert.equal(deltas.join(""), "héllo 👋 wörld");
  assert.ok(deltas.every((piece) => Array.from(piece).length <= 3));
  assert.ok(
    frames.every((f) => (f as unknown as Record<string, unknown>).api_message_id === "msg_x"),
  );
  assert.equal(frames.at(-1)?.event.type, "message_stop");
  assert.deepEqual(
    streamTextDeltaFrames("").map((f) => f.event.type),
    [
      "message_start",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ],
  );
});
