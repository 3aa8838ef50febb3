/**
 * `chatHandler` and `ChatSessions` over scripted CLIs, read by the `ai`
 * package's own reader (`readUIMessageStream`, every chunk validated by its
 * `uiMessageChunkSchema`): streamed text, a tool approved and denied across
 * two requests (the turn paused, then continued), the stop signal, and the
 * requests refused before anything runs.
 */
import assert from "node:assert/strict";
import type { DynamicToolUIPart, UIMessage } from "ai";
import { chatHandler, ChatSessions } from "../../../adapters/ai_sdk/mod.ts";
import { answered, chatPost, readChat, userMessage } from "./_ai_read.ts";
import { chatClis, textOf } from "./_ai_chat_cli.ts";

const URL_ = "http://chat.test/api/chat";

function toolPart(message: UIMessage): DynamicToolUIPart {
  const part = message.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(part, `a tool part in ${JSON.stringify(message.parts)}`);
  return part as DynamicToolUIPart;
}

function textOfMessage(message: UIMessage): string {
  return message.parts.map((p) => p.type === "text" ? p.text : "").join("");
}

Deno.test("chatHandler() streams a turn useChat reads: text, a step, finish with usage and cost", async () => {
  const { launch } = chatClis();
  await using chats = new ChatSessions({ launch });
  const handle = chatHandler(chats);
  const { chunks, message } = await readChat(
    await handle(chatPost(URL_, "c1", [userMessage("Hello")])),
  );
  assert.equal(message.role, "assistant");
  assert.equal(textOfMessage(message), "Echo: Hello");
  assert.ok(chunks.filter((c) => c.type === "text-delta").length > 1, "the text arrives in deltas");
  assert.deepEqual(message.parts.map((p) => p.type), ["step-start", "text"]);
  const finish = chunks.at(-1);
  assert.equal(finish?.type, "finish");
  assert.equal(finish.finishReason, "stop");
  const metadata = message.metadata as Record<string, unknown>;
  assert.deepEqual(metadata.usage, {
    inputTokens: 42,
    outputTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  assert.equal(typeof metadata.costUsd, "number");
  assert.equal(typeof metadata.sessionId, "string");
});

Deno.test("chatHandler() keeps one process per chat id across requests", async () => {
  const { launch, clis } = chatClis();
  await using chats = new ChatSessions({ launch });
  const handle = chatHandler(chats);
  const first = userMessage("One");
  await readChat(await handle(chatPost(URL_, "c1", [first])));
  const { message } = await readChat(
    await handle(chatPost(URL_, "c1", [first, userMessage("Two")])),
  );
  assert.equal(textOfMessage(message), "Echo: Two");
  await readChat(await handle(chatPost(URL_, "c2", [userMessage("Other")])));
  assert.equal(clis.length, 2, "c1 twice on one process, c2 on its own");
  const users = clis[0]!.received.filter((f) => f.type === "user").map(textOf);
  assert.deepEqual(users, ["One", "Two"], "only the new message reaches a warm conversation");
});

Deno.test("chatHandler() pauses on a tool approval and the next request's answer continues the turn", async (t) => {
  for (const approved of [true, false]) {
    await t.step(approved ? "approved" : "denied", async () => {
      const { launch, clis } = chatClis();
      await using chats = new ChatSessions({ launch });
      const handle = chatHandler(chats);
      const ask = userMessage("Run it [[tool]]");
      const paused = await readChat(await handle(chatPost(URL_, "c1", [ask])));
      const asking = toolPart(paused.message);
      assert.equal(asking.state, "approval-requested");
      assert.equal(asking.toolName, "Bash");
      assert.deepEqual(asking.input, { command: "ls" });
      assert.equal(paused.chunks.at(-1)?.type, "finish");
      assert.equal((paused.chunks.at(-1) as { finishReason?: string }).finishReason, "tool-calls");
      assert.equal(chats.pending("c1").length, 1);
      assert.equal(chats.chatOf(asking.approval!.id), "c1");

      const reply = answered(paused.message, approved, approved ? undefined : "Not now");
      const rest = await readChat(
        await handle(chatPost(URL_, "c1", [ask, reply])),
        reply,
      );
      const done = toolPart(rest.message);
      assert.equal(rest.message.id, paused.message.id, "the same assistant message goes on");
      if (approved) {
        assert.equal(done.state, "output-available");
        assert.equal(done.output, "file.txt");
        assert.match(textOfMessage(rest.message), /Tool said: file\.txt$/);
      } else {
        assert.equal(done.state, "output-denied");
        assert.match(textOfMessage(rest.message), /Denied: Not now$/);
      }
      const sent = clis[0]!.received.find((f) =>
        f.type === "control_response" &&
        JSON.stringify(f).includes("perm-")
      );
      assert.match(JSON.stringify(sent), approved ? /"behavior":"allow"/ : /"message":"Not now"/);
      assert.equal(chats.pending("c1").length, 0);
    });
  }
});

Deno.test("chatHandler() interrupts the turn when the request's signal aborts (the stop button)", async () => {
  const { launch, clis } = chatClis();
  await using chats = new ChatSessions({ launch });
  const handle = chatHandler(chats);
  const stop = new AbortController();
  const response = await handle(chatPost(URL_, "c1", [userMessage("Go [[stall]]")], stop.signal));
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.match(first, /"type":"start"/);
  stop.abort();
  const interrupt = await clis[0]!.nextWrite("control_request:interrupt");
  assert.equal((interrupt.request as { subtype: string }).subtype, "interrupt");
  let rest = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += new TextDecoder().decode(value);
  }
  assert.match(rest, /"finishReason":"interrupted"/);
  // The chat is free again: the next message runs.
  const next = await readChat(await handle(chatPost(URL_, "c1", [userMessage("Again")])));
  assert.equal(textOfMessage(next.message), "Echo: Again");
});

Deno.test("chatHandler() refuses bad requests with a 4xx before anything runs", async (t) => {
  const { launch, clis } = chatClis();
  await using chats = new ChatSessions({ launch });
  const handle = chatHandler(chats, { maxBodyBytes: 1024 });
  async function refused(request: Request, status: number, error: RegExp): Promise<void> {
    const response = await handle(request);
    assert.equal(response.status, status);
    assert.match((await response.json()).error, error);
  }
  await t.step("GET", () => refused(new Request(URL_), 405, /POST only/));
  await t.step(
    "not JSON",
    () => refused(new Request(URL_, { method: "POST", body: "hi" }), 415, /application\/json/),
  );
  await t.step("malformed JSON", () =>
    refused(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      }),
      400,
      /not JSON/,
    ));
  await t.step("over the bound, streamed without a length", () =>
    refused(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ReadableStream.from([new TextEncoder().encode(`{"id":"${"x".repeat(4096)}"}`)]),
      }),
      413,
      /over 1024 bytes/,
    ));
  await t.step("no messages", () =>
    refused(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "c1" }),
      }),
      400,
      /\{ id, messages \}/,
    ));
  await t.step(
    "a bad chat id",
    () => refused(chatPost(URL_, "../etc", [userMessage("Hi")]), 400, /chat id/),
  );
  await t.step(
    "an empty message",
    () => refused(chatPost(URL_, "c1", [userMessage("  ")]), 400, /no text/),
  );
  await t.step("an approval of a chat that waits on none", () =>
    refused(
      chatPost(URL_, "c1", [{
        id: "a1",
        role: "assistant",
        parts: [{
          type: "dynamic-tool",
          toolName: "Bash",
          toolCallId: "t1",
          state: "approval-responded",
          input: {},
          approval: { id: "perm-forged", approved: true },
        }],
      }]),
      404,
      /waits on no approval/,
    ));
  assert.equal(clis.length, 0, "no CLI was started");
  await t.step("an unknown approval id of a paused chat", async () => {
    const ask = userMessage("[[tool]]");
    const paused = await readChat(await handle(chatPost(URL_, "c2", [ask])));
    const forged = answered(paused.message, true);
    (toolPart(forged).approval as { id: string }).id = "perm-forged";
    await refused(chatPost(URL_, "c2", [ask, forged]), 404, /waits on no such request/);
    assert.equal(chats.pending("c2").length, 1, "the real request still waits");
  });
  await t.step("a second request while the chat streams", async () => {
    const stop = new AbortController();
    const running = await handle(chatPost(URL_, "c3", [userMessage("[[stall]]")], stop.signal));
    await refused(chatPost(URL_, "c3", [userMessage("Hi")]), 409, /runs a turn/);
    stop.abort();
    await running.body?.cancel();
  });
});
