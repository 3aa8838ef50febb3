/**
 * `@duplex/claude/ai-sdk` on the real CLI and the fake Messages API: the
 * chat handler's stream read by the `ai` package's own reader (each chunk
 * validated by its schema), a Bash call approved and one denied across two
 * requests (the turn paused in the CLI between them), the stop signal
 * interrupting a stalled turn; and the provider under `ai`'s `streamText`
 * and `generateText`, a conversation kept warm by its id.
 */
import assert from "node:assert/strict";
import { generateText, type ModelMessage, streamText, type UIMessage } from "ai";
import { chatHandler, ChatSessions, createClaudeCode } from "../../adapters/ai_sdk/mod.ts";
import { e2eTest, exists, type Sandbox, withSandbox } from "./_harness.ts";
import { sentToModel } from "./fake_api.ts";
import { answered, chatPost, readChat, userMessage } from "../adapters/ai_sdk/_ai_read.ts";

const URL_ = "http://127.0.0.1/api/chat";

function chatsOn(cli: string, box: Sandbox): ChatSessions {
  return new ChatSessions({
    process: { binary: cli, cwd: box.work, env: box.env, clearEnv: true },
    approvalTimeoutMs: 60_000,
  });
}

function text(message: UIMessage): string {
  return message.parts.map((p) => p.type === "text" ? p.text : "").join("");
}

function tool(message: UIMessage): Record<string, unknown> {
  const part = message.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(part, JSON.stringify(message.parts));
  return part as unknown as Record<string, unknown>;
}

e2eTest(
  "ai-sdk chatHandler on the real CLI: text, approvals across requests, stop",
  async (t, cli) => {
    await withSandbox(async (box) => {
      await using chats = chatsOn(cli, box);
      const handle = chatHandler(chats);

      await t.step("a streamed answer with usage", async () => {
        const { chunks, message } = await readChat(
          await handle(chatPost(URL_, "e1", [userMessage("Hello there")])),
        );
        assert.equal(text(message), "Echo: Hello there");
        assert.ok(chunks.some((c) => c.type === "text-delta"));
        const metadata = message.metadata as Record<string, unknown>;
        assert.equal(typeof metadata.sessionId, "string");
        assert.ok((metadata.usage as { outputTokens: number }).outputTokens > 0);
      });

      for (const approved of [true, false]) {
        await t.step(
          `a Bash call ${approved ? "approved" : "denied"} by the next request`,
          async () => {
            const word = approved ? "approved-ran" : "denied-ran";
            const ask = userMessage(`[[tool:bash:touch ${word}.txt && echo ${word}]]`);
            const paused = await readChat(await handle(chatPost(URL_, "e2", [ask])));
            const asking = tool(paused.message);
            assert.equal(asking.state, "approval-requested");
            assert.equal(asking.toolName, "Bash");
            assert.equal(
              (asking.input as { command: string }).command,
              `touch ${word}.txt && echo ${word}`,
            );
            assert.equal(chats.pending("e2").length, 1, "the CLI waits on the permission");
            const reply = answered(paused.message, approved, approved ? undefined : "Not this one");
            const rest = await readChat(await handle(chatPost(URL_, "e2", [ask, reply])), reply);
            const done = tool(rest.message);
            if (approved) {
              assert.equal(done.state, "output-available");
              assert.match(String(done.output), /approved-ran/);
              assert.match(text(rest.message), /Tool said: approved-ran/);
              assert.ok(await exists(`${box.work}/approved-ran.txt`), "the tool ran");
            } else {
              assert.equal(done.state, "output-denied");
              assert.match(text(rest.message), /Tool failed: .*Not this one/);
              assert.ok(!(await exists(`${box.work}/denied-ran.txt`)), "the tool did not run");
            }
          },
        );
      }

      await t.step("the stop signal interrupts a stalled turn; the chat goes on", async () => {
        const stop = new AbortController();
        const response = await handle(
          chatPost(URL_, "e3", [userMessage("[[stall]]")], stop.signal),
        );
        const reader = response.body!.getReader();
        let seen = "";
        while (!seen.includes('"text-delta"')) {
          const { value, done } = await reader.read();
          assert.ok(!done, "the stream ended before any text");
          seen += new TextDecoder().decode(value);
        }
        stop.abort();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          seen += new TextDecoder().decode(value);
        }
        assert.match(seen, /"finishReason":"interrupted"/);
        const next = await readChat(
          await handle(chatPost(URL_, "e3", [userMessage("After stop")])),
        );
        assert.equal(text(next.message), "Echo: After stop");
      });
    });
  },
);

e2eTest(
  "ai-sdk provider on the real CLI: streamText, generateText, a warm conversation",
  async (t, cli) => {
    await withSandbox(async (box) => {
      await using claude = createClaudeCode({
        process: { binary: cli, cwd: box.work, env: box.env, clearEnv: true },
      });
      await t.step("streamText", async () => {
        const result = streamText({ model: claude("default"), prompt: "Stream me" });
        assert.equal((await Array.fromAsync(result.textStream)).join(""), "Echo: Stream me");
        assert.ok(((await result.usage).outputTokens ?? 0) > 0);
      });
      await t.step(
        "generateText twice in one conversation: one process, only the new turn sent",
        async () => {
          const model = claude("default", { conversationId: "warm" });
          const messages: ModelMessage[] = [{ role: "user", content: "First turn" }];
          const first = await generateText({ model, messages });
          assert.equal(first.text, "Echo: First turn");
          const pid = claude.chats.pool.health.handouts.cold;
          const from = box.api.messageRequests.length;
          messages.push({ role: "assistant", content: first.text }, {
            role: "user",
            content: "Second turn",
          });
          const second = await generateText({ model, messages });
          assert.equal(second.text, "Echo: Second turn");
          assert.equal(claude.chats.pool.health.handouts.cold, pid, "no new process");
          const sent = sentToModel(box.api, from);
          assert.match(sent, /First turn/, "the CLI's own history reaches the model");
          assert.doesNotMatch(sent, /Human:/, "no transcript was made of it");
        },
      );
    });
  },
);
