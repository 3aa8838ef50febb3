/**
 * Drives the real `claude` binary directly with `Deno.Command` (no library
 * code): validates the fake API and the offline sandbox against the real CLI.
 * The permission mode is passed, as the library does: 2.1.285 .. 2.1.301 run
 * in `auto` by default, where the tool of turn 3 runs without a
 * `can_use_tool` request.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  cliVersion,
  collectText,
  e2eTest,
  type Frame,
  FrameReader,
  reap,
  withSandbox,
} from "./_harness.ts";

const ARGS = [
  "--input-format",
  "stream-json",
  "--output-format",
  "stream-json",
  "--verbose",
  "--permission-prompt-tool",
  "stdio",
  "--permission-mode",
  "default",
];

function userLine(text: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    message: { role: "user", content: [{ type: "text", text }] },
  }) + "\n";
}

function assistantText(frame: Frame): string {
  const message = frame.message as { content?: { type: string; text?: string }[] };
  return (message.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
}

function isType(type: string, subtype?: string): (frame: Frame) => boolean {
  return (frame) => frame.type === type && (subtype === undefined || frame.subtype === subtype);
}

e2eTest("raw CLI: two turns, then a can_use_tool allowed with updatedInput", async (t, cli) => {
  await withSandbox(async ({ api, work, env }) => {
    const child = new Deno.Command(cli, {
      args: ARGS,
      cwd: work,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const frames = new FrameReader(child.stdout);
    const stderr = collectText(child.stderr);
    const stdin = child.stdin.getWriter();
    const encoder = new TextEncoder();
    const write = (line: string): Promise<void> => stdin.write(encoder.encode(line));
    let exited = false;
    try {
      let sessionId = "";
      await t.step("turn 1: system/init, assistant echo, result", async () => {
        await write(userLine("hello one"));
        const init = await frames.next(isType("system", "init"));
        sessionId = String(init.session_id);
        assert.match(sessionId, /^[0-9a-f-]{36}$/);
        assert.equal(init.cwd, await Deno.realPath(work));
        assert.equal(init.claude_code_version, cliVersion(cli));
        assert.equal(init.permissionMode, "default");
        const assistant = await frames.next(isType("assistant"));
        assert.equal(assistantText(assistant), "Echo: hello one");
        const result = await frames.next(isType("result"));
        assert.equal(result.subtype, "success");
        assert.equal(result.is_error, false);
        assert.equal(result.result, "Echo: hello one");
        assert.equal(result.session_id, sessionId);
        // What reached the model: the prompt, and the model it asked for was echoed back.
        const request = await api.waitForRequest((r) => r.prompt === "hello one");
        assert.equal(request.query, "?beta=true");
        assert.equal((request.body as { stream?: boolean }).stream, true);
        assert.equal((assistant.message as { model?: string }).model, request.model);
      });

      await t.step("turn 2 on the same process keeps the session", async () => {
        await write(userLine("hello two"));
        const init = await frames.next(isType("system", "init"));
        assert.equal(init.session_id, sessionId);
        const result = await frames.next(isType("result"));
        assert.equal(result.result, "Echo: hello two");
        assert.equal(result.session_id, sessionId);
        const request = await api.waitForRequest((r) => r.prompt === "hello two");
        // The history went along: the first exchange is in the second request.
        const text = JSON.stringify(request.body);
        assert.ok(text.includes("hello one") && text.includes("Echo: hello one"));
      });

      await t.step("turn 3: can_use_tool answered allow + updatedInput runs the tool", async () => {
        await write(userLine("[[tool:bash:touch x && echo hi]]"));
        const ask = await frames.next(isType("control_request"));
        const request = ask.request as {
          subtype: string;
          tool_name: string;
          input: { command: string };
          tool_use_id: string;
        };
        assert.equal(request.subtype, "can_use_tool");
        assert.equal(request.tool_name, "Bash");
        assert.equal(request.input.command, "touch x && echo hi");
        await write(
          JSON.stringify({
            type: "control_response",
            response: {
              subtype: "success",
              request_id: ask.request_id,
              response: {
                behavior: "allow",
                updatedInput: request.input,
                toolUseID: request.tool_use_id,
              },
            },
          }) + "\n",
        );
        const toolResult = await frames.next(isType("user"));
        assert.deepEqual(
          (toolResult.message as { content: unknown[] }).content.map((b) =>
            (b as { type: string }).type
          ),
          ["tool_result"],
        );
        const result = await frames.next(isType("result"));
        assert.equal(result.is_error, false);
        assert.equal(result.result, "Tool said: hi");
        assert.ok((await Deno.stat(`${work}/x`)).isFile, "the tool created the file");
        const followUp = await api.waitForRequest((r) => r.toolResults.length > 0);
        assert.deepEqual(followUp.toolResults, [
          { toolUseId: request.tool_use_id, content: "hi", isError: false },
        ]);
      });

      await t.step("stdin EOF: the CLI exits 0 by itself", async () => {
        await stdin.close();
        const { status, killed } = await reap(child, 5_000);
        exited = true;
        assert.equal(killed, false, "the CLI did not exit after stdin EOF");
        assert.equal(status.code, 0, `stderr: ${stderr.text()}`);
        await frames.done;
        assert.deepEqual(frames.noise, []);
        assert.equal(api.openStreams, 0);
      });
    } finally {
      if (!exited) {
        await stdin.close().catch(() => {});
        await reap(child, 2_000);
      }
      stdin.releaseLock();
      await frames.done;
      await stderr.done;
    }
  });
});
