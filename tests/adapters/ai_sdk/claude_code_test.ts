/**
 * The provider over scripted CLIs, driven by `ai` 7's own `streamText` and
 * `generateText`: text and usage, a conversation kept warm by its id, a
 * one-off call's whole prompt as a transcript, a tool approval across two
 * calls (`tool-approval-request`, then a tool message with
 * `tool-approval-response`), warnings for settings the CLI ignores, abort.
 */
import assert from "node:assert/strict";
import { generateText, type ModelMessage, streamText } from "ai";
import { createClaudeCode } from "../../../adapters/ai_sdk/mod.ts";
import { chatClis, textOf } from "./_ai_chat_cli.ts";

Deno.test("streamText() over claudeCode streams text and reports usage and cost", async () => {
  const { launch } = chatClis();
  await using claude = createClaudeCode({ launch });
  const result = streamText({ model: claude("sonnet"), prompt: "Hello" });
  const pieces = await Array.fromAsync(result.textStream);
  assert.ok(pieces.length > 1, "deltas");
  assert.equal(pieces.join(""), "Echo: Hello");
  assert.equal((await result.usage).inputTokens, 42);
  assert.equal((await result.usage).outputTokens, 7);
  assert.equal(await result.finishReason, "stop");
  const metadata = (await result.providerMetadata)?.["claude-code"];
  assert.equal(typeof metadata?.costUsd, "number");
});

Deno.test("claudeCode keeps a conversation warm by its id and sends only the new message", async () => {
  const { launch, clis } = chatClis();
  await using claude = createClaudeCode({ launch });
  const model = claude("sonnet");
  const providerOptions = { "claude-code": { conversationId: "user-1" } };
  const messages: ModelMessage[] = [{ role: "user", content: "I am Ada" }];
  const first = await generateText({ model, messages, providerOptions });
  messages.push({ role: "assistant", content: first.text }, { role: "user", content: "Who?" });
  const second = await generateText({ model, messages, providerOptions });
  assert.equal(second.text, "Echo: Who?");
  assert.equal(clis.length, 1, "one process for the conversation");
  assert.deepEqual(clis[0]!.received.filter((f) => f.type === "user").map(textOf), [
    "I am Ada",
    "Who?",
  ]);
});

Deno.test("claudeCode without a conversation id sends the whole prompt once and forgets it", async () => {
  const { launch, clis } = chatClis();
  await using claude = createClaudeCode({ launch });
  const result = await generateText({
    model: claude("sonnet"),
    system: "Be brief.",
    messages: [
      { role: "user", content: "I am Ada" },
      { role: "assistant", content: "Hi Ada" },
      { role: "user", content: "Who am I?" },
    ],
    temperature: 0.3,
  });
  assert.equal(result.text, "Echo: Human: I am Ada\n\nAssistant: Hi Ada\n\nHuman: Who am I?");
  assert.deepEqual(result.warnings?.map((w) => "feature" in w ? w.feature : w.type), [
    "temperature",
  ]);
  assert.equal(clis.length, 1);
  for (let i = 0; i < 50 && claude.chats.pool.health.live > 0; i++) {
    await new Promise((done) => setTimeout(done, 10));
  }
  assert.equal(claude.chats.pool.health.live, 0, "the one-off process is closed");
});

Deno.test("claudeCode asks for a tool approval and the next call's tool-approval-response answers it", async (t) => {
  for (const approved of [true, false]) {
    await t.step(approved ? "approved" : "denied", async () => {
      const { launch } = chatClis();
      await using claude = createClaudeCode({ launch });
      const model = claude("sonnet", { conversationId: "c1" });
      const messages: ModelMessage[] = [{ role: "user", content: "Run [[tool]]" }];
      const paused = await generateText({ model, messages });
      const request = paused.content.find((p) => p.type === "tool-approval-request");
      assert.ok(request, JSON.stringify(paused.content));
      assert.equal(request.toolCall.toolName, "Bash");
      assert.equal(paused.finishReason, "tool-calls");
      messages.push(...paused.response.messages, {
        role: "tool",
        content: [{
          type: "tool-approval-response",
          approvalId: request.approvalId,
          approved,
          providerExecuted: true, // else ai drops it: the CLI runs the tool
          ...(!approved && { reason: "No" }),
        }],
      });
      const rest = await generateText({ model, messages });
      assert.equal(rest.text, approved ? "Tool said: file.txt" : "Denied: No");
      assert.equal(rest.finishReason, "stop");
    });
  }
});

Deno.test("streamText() over claudeCode: aborting interrupts the turn", async () => {
  const { launch, clis } = chatClis();
  await using claude = createClaudeCode({ launch });
  const stop = new AbortController();
  const result = streamText({
    model: claude("sonnet"),
    prompt: "[[stall]]",
    abortSignal: stop.signal,
  });
  const reader = result.textStream.getReader();
  assert.equal((await reader.read()).value, "Work");
  stop.abort();
  await clis[0]!.nextWrite("control_request:interrupt");
  await reader.read().catch(() => {});
  reader.releaseLock();
});
