// deno-lint-ignore-file camelcase -- field names are the wire protocol's
import assert from "node:assert/strict";
import { DuplexSession, isDuplexError, type SessionInfo } from "../../mod.ts";
import type { HookInputs } from "../../src/protocol/mod.ts";
import { loadTranscript, replay } from "../../src/testing/mod.ts";
import { controlCancel, controlError, controlSuccess } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { replyTo, scripted, tick } from "./_helpers.ts";

function hookCall(requestId: string, callbackId: string, input: Record<string, unknown>) {
  return {
    type: "control_request",
    request_id: requestId,
    request: { subtype: "hook_callback", callback_id: callbackId, input, tool_use_id: "toolu_1" },
  };
}

Deno.test("initialize is sent first with the configured fields and its reply read", async () => {
  const cli = new ScriptedCli({ echo: true });
  await using session = await DuplexSession.start({
    transport: cli.transport,
    systemPrompt: "You are a test agent.",
    appendSystemPrompt: "Be brief.",
    agents: { reviewer: { description: "Reviews code", prompt: "You review code." } },
    jsonSchema: { type: "object" },
    hooks: {
      Stop: [{ run: () => ({}) }],
      PreToolUse: [{ matcher: "Bash", timeoutMs: 1500, run: [() => {}, () => {}] }],
    },
    initialize: { title: "my session" },
  });
  const turn = session.send("hello");
  assert.equal(
    cli.received[0]?.type,
    "control_request",
    "initialize goes out before the user line",
  );
  const request = (cli.received[0] as { request: Record<string, unknown> }).request;
  assert.deepEqual(request, {
    subtype: "initialize",
    hooks: {
      Stop: [{ hookCallbackIds: ["hook_0"] }],
      PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_1", "hook_2"], timeout: 2 }],
    },
    systemPrompt: ["You are a test agent."],
    appendSystemPrompt: "Be brief.",
    agents: { reviewer: { description: "Reviews code", prompt: "You review code." } },
    jsonSchema: { type: "object" },
    title: "my session",
  });
  assert.equal(cli.received[1]?.type, "user", "the user line did not wait for the reply");
  const info = await session.initialized;
  assert.ok(info);
  assert.equal(session.info, info);
  await turn;
});

Deno.test("no initialize is sent when nothing needs it", async () => {
  const { cli, session } = await scripted({ echo: true });
  await using _ = session;
  await session.send("hi");
  assert.equal(cli.received.some((f) => f.type === "control_request"), false);
  assert.equal(await session.initialized, undefined);
  assert.equal(session.info, undefined);
});

Deno.test("a failed initialize rejects the first send with control_failed", async (t) => {
  await t.step("failure before the send", async () => {
    const cli = new ScriptedCli({ echo: true });
    cli.on(
      "control_request:initialize",
      (f) => [controlError(String(f.request_id), "bad init", "boom")],
    );
    await using session = await DuplexSession.start({ transport: cli.transport, initialize: true });
    await assert.rejects(session.initialized, (e) => isDuplexError(e, "control_failed"));
    await assert.rejects(
      session.send("first"),
      (e) =>
        isDuplexError(e, "control_failed") && e.errorCode === "boom" && e.subtype === "initialize",
    );
    assert.equal((await session.send("second")).result.text, "Echo: second", "later sends work");
  });
  await t.step("failure while the first turn runs", async () => {
    const cli = new ScriptedCli();
    await using session = await DuplexSession.start({ transport: cli.transport, initialize: true });
    const init = await cli.nextWrite("control_request:initialize");
    const first = session.send("first");
    await cli.nextWrite("user");
    cli.emit(controlError(String(init.request_id), "bad init"));
    await assert.rejects(first, (e) => isDuplexError(e, "control_failed"));
    await session.initialized.catch(() => {});
  });
});

Deno.test("hooks run as functions and answer hook_callback", async (t) => {
  const seen: HookInputs["PreToolUse"][] = [];
  const cli = new ScriptedCli();
  const session = await DuplexSession.start({
    transport: cli.transport,
    hooks: {
      PreToolUse: [{
        matcher: "Bash",
        run: (input, { toolUseId }) => {
          seen.push(input);
          assert.equal(toolUseId, "toolu_1");
          return {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "allow",
              permissionDecisionReason: "fine",
            },
          };
        },
      }],
      UserPromptSubmit: [{
        run: async () => {
          await tick(5);
          return {
            hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "ctx" },
          };
        },
      }],
      Stop: [{ run: () => {} }],
      PostToolUse: [{
        run: () => {
          throw new Error("hook exploded");
        },
      }],
      Notification: [{
        run: (_input, { signal }) =>
          new Promise((resolve) => signal.addEventListener("abort", () => resolve({}))),
      }],
    },
  });
  await using _ = session;
  await t.step("a decision is the success payload", async () => {
    cli.emit(
      hookCall("h1", "hook_0", {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      }),
    );
    assert.deepEqual(await replyTo(cli, "h1"), {
      subtype: "success",
      request_id: "h1",
      response: {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "fine",
        },
      },
    });
    assert.equal(seen[0]?.tool_name, "Bash");
  });
  await t.step("async hooks, and nothing returned means {}", async () => {
    cli.emit(hookCall("h2", "hook_1", { hook_event_name: "UserPromptSubmit", prompt: "hi" }));
    cli.emit(hookCall("h3", "hook_2", { hook_event_name: "Stop" }));
    assert.deepEqual((await replyTo(cli, "h2")).response, {
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "ctx" },
    });
    assert.deepEqual((await replyTo(cli, "h3")).response, {});
  });
  await t.step("a throw is an error response", async () => {
    cli.emit(hookCall("h4", "hook_3", { hook_event_name: "PostToolUse" }));
    const reply = await replyTo(cli, "h4");
    assert.equal(reply.subtype, "error");
    assert.equal(reply.error, "hook exploded");
  });
  await t.step("an unknown callback id is an error response", async () => {
    cli.emit(hookCall("h5", "hook_99", {}));
    assert.match(String((await replyTo(cli, "h5")).error), /No hook is registered/);
  });
  await t.step("control_cancel_request aborts the hook and suppresses the reply", async () => {
    cli.emit(hookCall("h6", "hook_4", { hook_event_name: "Notification" }));
    await tick(5);
    cli.emit(controlCancel("h6"));
    await tick(20);
    assert.equal(
      cli.received.some((f) =>
        (f.response as { request_id?: string } | undefined)?.request_id === "h6"
      ),
      false,
    );
  });
});

Deno.test("hooks are validated before the transport opens", async () => {
  const cli = new ScriptedCli({ echo: true });
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    DuplexSession.start({ transport: cli.transport, hooks: { Stop: [{ run: 5 as any }] } }),
    /hooks.Stop\[0\].run/,
  );
  assert.equal(cli.opened, 0);
});

Deno.test("elicitation: declined by default, answered by a handler", async () => {
  const request = {
    type: "control_request",
    request_id: "e1",
    request: {
      subtype: "elicitation",
      mcp_server_name: "srv",
      message: "Your name?",
      requested_schema: { type: "object" },
    },
  };
  {
    const { cli, session } = await scripted({ echo: false });
    await using _ = session;
    cli.emit(request);
    assert.deepEqual((await replyTo(cli, "e1")).response, { action: "decline" });
  }
  {
    const { cli, session } = await scripted({ echo: false }, {
      onElicitation: (req) => ({ action: "accept", content: { name: req.serverName + "-user" } }),
    });
    await using _ = session;
    cli.emit(request);
    assert.deepEqual((await replyTo(cli, "e1")).response, {
      action: "accept",
      content: { name: "srv-user" },
    });
  }
  {
    const { cli, session } = await scripted({ echo: false }, {
      // deno-lint-ignore no-explicit-any
      onElicitation: () => ({ action: "maybe" }) as any,
    });
    await using _ = session;
    cli.emit(request);
    assert.equal((await replyTo(cli, "e1")).subtype, "error");
  }
});

Deno.test("onControlRequest answers other CLI requests; undefined means unsupported", async () => {
  const { cli, session } = await scripted({ echo: false }, {
    onControlRequest: (subtype, request) =>
      subtype === "request_user_dialog" ? { answer: `ok:${request.dialog_kind}` } : undefined,
  });
  await using _ = session;
  cli.emit({
    type: "control_request",
    request_id: "d1",
    request: { subtype: "request_user_dialog", dialog_kind: "confirm" },
  });
  cli.emit({ type: "control_request", request_id: "d2", request: { subtype: "ui_copy" } });
  assert.deepEqual((await replyTo(cli, "d1")).response, { answer: "ok:confirm" });
  assert.match(
    String((await replyTo(cli, "d2")).error),
    /Unsupported control request subtype: ui_copy/,
  );
});

Deno.test("runtime controls write the CLI's request shapes and read its replies", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  const replies: Record<string, Record<string, unknown>> = {
    set_permission_mode: { mode: "acceptEdits" },
    set_model: { model: "claude-sonnet-5-5" },
    set_max_thinking_tokens: {},
    mcp_status: { mcpServers: [{ name: "a", status: "connected" }] },
    get_context_usage: { totalTokens: 5 },
    get_settings: { effective: {} },
    rewind_files: { canRewind: true },
  };
  cli.on("control_request", (f) => {
    const subtype = (f.request as { subtype: string }).subtype;
    return [controlSuccess(String(f.request_id), replies[subtype])];
  });
  assert.equal(await session.setPermissionMode("acceptEdits"), "acceptEdits");
  assert.equal(await session.setModel("sonnet"), "claude-sonnet-5-5");
  await session.setMaxThinkingTokens(2048);
  assert.deepEqual(await session.mcpStatus(), [{ name: "a", status: "connected" }]);
  assert.deepEqual(await session.contextUsage({ detail: "summary" }), { totalTokens: 5 });
  assert.deepEqual(await session.settings(), { effective: {} });
  assert.deepEqual(await session.rewindFiles("u-1", { dryRun: true }), { canRewind: true });
  const sent = cli.received.map((f) => f.request);
  assert.deepEqual(sent, [
    { subtype: "set_permission_mode", mode: "acceptEdits" },
    { subtype: "set_model", model: "sonnet" },
    { subtype: "set_max_thinking_tokens", max_thinking_tokens: 2048 },
    { subtype: "mcp_status" },
    { subtype: "get_context_usage", detail: "summary" },
    { subtype: "get_settings" },
    { subtype: "rewind_files", user_message_id: "u-1", dry_run: true },
  ]);
});

async function replayed(name: string) {
  const entries = await loadTranscript(
    new URL(`../fixtures/transcripts/${name}.ndjson`, import.meta.url),
  );
  return replay(entries);
}

Deno.test("replay 02: initialize with prompts and agents, then a turn", async () => {
  const cli = await replayed("02-initialize-then-turn");
  const session = await DuplexSession.start({
    transport: cli.transport,
    systemPrompt: ["You are a test agent. MARKER-CUSTOM-SYSTEM-PROMPT"],
    appendSystemPrompt: "MARKER-APPENDED-SYSTEM-PROMPT",
    agents: { reviewer: { description: "Reviews code", prompt: "You review code." } },
  });
  const turn = await session.send("hello after initialize");
  const info = await session.initialized as SessionInfo;
  assert.equal(info.version, "2.1.332");
  assert.ok(info.agents.includes("reviewer"));
  assert.ok(info.commands.length > 10);
  assert.ok(info.models.length > 0);
  assert.equal(turn.result.isError, false);
  await session.close();
  await cli.done;
  assert.deepEqual(cli.mismatches, []);
});

Deno.test("replay 08: hooks answered by functions, in the CLI's order", async () => {
  const cli = await replayed("08-hook-callback");
  const order: string[] = [];
  const session = await DuplexSession.start({
    transport: cli.transport,
    hooks: {
      PreToolUse: [{
        matcher: "Bash",
        run: (input) => {
          order.push(`${input.hook_event_name}:${input.tool_name}`);
          return {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "allow",
              permissionDecisionReason: "allowed by host hook",
            },
          };
        },
      }],
      PostToolUse: [{ run: (input) => void order.push(input.hook_event_name) }],
      UserPromptSubmit: [{
        run: (input) => void order.push(`${input.hook_event_name}:${input.prompt}`),
      }],
      Stop: [{ run: (input) => void order.push(input.hook_event_name) }],
    },
  });
  const turn = await session.send("please run [[tool:bash]]");
  assert.deepEqual(order, [
    "UserPromptSubmit:please run [[tool:bash]]",
    "PreToolUse:Bash",
    "PostToolUse",
    "Stop",
  ]);
  assert.equal(
    turn.events.some((e) => e.type === "permission_request"),
    false,
    "the hook allowed it",
  );
  await session.close();
  await cli.done;
  assert.deepEqual(cli.mismatches, []);
});

Deno.test("in-process MCP tools: registered in initialize, answered on mcp_message", async () => {
  const { mcpServer, tool } = await import("../../mod.ts");
  const calls: unknown[] = [];
  const calc = mcpServer({
    name: "calc",
    tools: [
      tool("add", "Adds two numbers", {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      }, (input) => {
        calls.push(input);
        return String(Number(input.a) + Number(input.b));
      }),
    ],
  });
  const cli = new ScriptedCli();
  await using _session = await DuplexSession.start({
    transport: cli.transport,
    mcpServers: [calc],
  });
  const init = await cli.nextWrite("control_request:initialize");
  assert.deepEqual((init.request as Record<string, unknown>).sdkMcpServers, ["calc"]);
  const mcp = (id: string, message: Record<string, unknown>) =>
    cli.emit({
      type: "control_request",
      request_id: id,
      request: {
        subtype: "mcp_message",
        server_name: "calc",
        message: { jsonrpc: "2.0", ...message },
      },
    });
  mcp("m0", {
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {} },
  });
  mcp("m1", { method: "notifications/initialized" });
  mcp("m2", { id: 1, method: "tools/list" });
  mcp("m3", { id: 2, method: "tools/call", params: { name: "add", arguments: { a: 2, b: 3 } } });
  mcp("m4", { id: 3, method: "tools/call", params: { name: "add", arguments: { a: "x" } } });
  const reply = async (id: string) =>
    ((await replyTo(cli, id)).response as { mcp_response: Record<string, unknown> }).mcp_response;
  assert.equal(
    (await reply("m0") as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
    "calc",
  );
  await reply("m1");
  const list = await reply("m2") as { result: { tools: { name: string }[] } };
  assert.deepEqual(list.result.tools.map((t) => t.name), ["add"]);
  assert.deepEqual((await reply("m3") as { result: unknown }).result, {
    content: [{ type: "text", text: "5" }],
  });
  const invalid = await reply("m4") as {
    result: { isError: boolean; content: { text: string }[] };
  };
  assert.equal(invalid.result.isError, true, "schema violations reach the model as tool errors");
  assert.match(invalid.result.content[0]!.text, /\/a|\/b|required/);
  assert.deepEqual(calls, [{ a: 2, b: 3 }], "the handler never saw the invalid input");
});

Deno.test("a control_request without a subtype is still answered, with an error", async () => {
  const { cli, session } = await scripted({ echo: false });
  await using _ = session;
  cli.emit({ type: "control_request", request_id: "bad-1", request: {} });
  const reply = await replyTo(cli, "bad-1");
  assert.equal(reply.subtype, "error");
  assert.match(String(reply.error), /Malformed control request/);
});

Deno.test("a hook reply JSON cannot carry is answered with the encoding error", async () => {
  const cli = new ScriptedCli();
  await using _session = await DuplexSession.start({
    transport: cli.transport,
    hooks: { Stop: [{ run: () => ({ hookSpecificOutput: { big: 1n } }) }] },
  });
  cli.emit(hookCall("h-big", "hook_0", { hook_event_name: "Stop" }));
  const reply = await replyTo(cli, "h-big");
  assert.equal(reply.subtype, "error");
  assert.match(String(reply.error), /BigInt/);
});

Deno.test('onFailure: "block" on a CLI that does not support it refuses the send', async () => {
  const cli = new ScriptedCli({ echo: true });
  cli.on(
    "control_request:initialize",
    (f) => [controlSuccess(String(f.request_id), { commands: [] })],
  );
  await using session = await DuplexSession.start({
    transport: cli.transport,
    hooks: { PreToolUse: [{ run: () => ({}), onFailure: "block" }] },
  });
  await assert.rejects(session.initialized, (e) => isDuplexError(e, "unsupported"));
  await assert.rejects(
    session.send("hi"),
    (e) => isDuplexError(e, "unsupported") && /onFailure/.test(e.message),
  );
  const ok = new ScriptedCli({ echo: true });
  ok.on(
    "control_request:initialize",
    (f) => [controlSuccess(String(f.request_id), { hook_on_failure_supported: true })],
  );
  await using fine = await DuplexSession.start({
    transport: ok.transport,
    hooks: { PreToolUse: [{ run: () => ({}), onFailure: "block" }] },
  });
  assert.equal((await fine.send("hi")).result.text, "Echo: hi");
});

Deno.test("initialize carries the fields the transport's options set (TransportInfo.initialize)", async () => {
  const cli = new ScriptedCli({ echo: true });
  await using _ = await DuplexSession.start({
    transport: async (context) => {
      const transport = await cli.transport(context);
      const info = { ...transport.info, initialize: { skills: ["review"] } };
      return new Proxy(transport, {
        get(target, key) {
          if (key === "info") return info;
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    appendSystemPrompt: "mine",
  });
  const init = await cli.nextWrite("control_request:initialize");
  assert.deepEqual((init.request as Record<string, unknown>).skills, ["review"]);
  assert.equal((init.request as Record<string, unknown>).appendSystemPrompt, "mine");
});
