/**
 * `AcpAgent` over scripted CLIs, driven by the ACP library's own client:
 * the mapping of frames to `session/update`s, permissions, cancel, modes,
 * MCP servers, hibernation, and bad input.
 */

import assert from "node:assert/strict";
import { methods, type RequestError } from "@agentclientprotocol/sdk";
import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  controlSuccess,
  resultFrame,
  type ScriptedCli,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "../../../src/testing/mod.ts";
import { scriptedAcp } from "./_scripted.ts";
import { choose } from "../../e2e/_acp_client.ts";

const CWD = "/tmp/acp-project";

async function newSession(
  client: ReturnType<typeof scriptedAcp>["client"],
  extra: Record<string, unknown> = {},
) {
  await client.initialize();
  return await client.agent.request(methods.agent.session.new, {
    cwd: CWD,
    mcpServers: [],
    ...extra,
  });
}

function prompt(
  client: ReturnType<typeof scriptedAcp>["client"],
  sessionId: string,
  text: string,
) {
  return client.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
}

/* A Write the CLI asks permission for; after the answer, its result and a closing text. */
function writeTool(cli: ScriptedCli): void {
  cli.on("user", () => [
    assistantToolUseFrame({
      id: "toolu_w",
      name: "Write",
      input: { file_path: `${CWD}/a.txt`, content: "hi\n" },
    }),
    canUseToolRequest({
      requestId: "perm-1",
      toolName: "Write",
      toolUseId: "toolu_w",
      input: { file_path: `${CWD}/a.txt`, content: "hi\n" },
      suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
    }),
  ]);
  cli.on("control_response", (frame) => {
    const response = frame.response as { response?: { behavior?: string; message?: string } };
    const allowed = response.response?.behavior === "allow";
    return [
      userToolResultFrame({
        toolUseId: "toolu_w",
        content: allowed ? "File created" : String(response.response?.message),
        isError: !allowed,
      }),
      assistantTextFrame(allowed ? "Done." : "Denied."),
      resultFrame({ text: allowed ? "Done." : "Denied." }),
    ];
  });
}

function controlResponse(cli: ScriptedCli): Record<string, unknown> {
  const frame = cli.received.find((f) => f.type === "control_response");
  assert.ok(frame, "the CLI got an answer");
  return (frame.response as { response: Record<string, unknown> }).response;
}

Deno.test("AcpAgent initialize advertises what it serves", async () => {
  await using acp = scriptedAcp(() => {});
  const reply = await acp.client.initialize();
  const answer = reply as {
    protocolVersion: number;
    agentCapabilities: Record<string, unknown>;
    agentInfo: { name: string };
  };
  assert.equal(answer.protocolVersion, 1);
  assert.deepEqual(answer.agentCapabilities, {
    loadSession: true,
    promptCapabilities: { image: true, embeddedContext: true },
    mcpCapabilities: { http: true, sse: true },
    sessionCapabilities: { list: {}, resume: {}, close: {} },
  });
  assert.equal(answer.agentInfo.name, "@duplex/claude/acp");
});

Deno.test("AcpAgent session/new starts a CLI under the ACP session id, with modes, models and commands", async () => {
  await using acp = scriptedAcp(() => {});
  const session = await newSession(acp.client);
  assert.equal(acp.launches.length, 1);
  assert.equal(acp.launches[0]?.sessionId, session.sessionId);
  assert.equal(acp.launches[0]?.cwd, CWD);
  assert.equal(acp.launches[0]?.title, undefined, "the id mark never reaches the CLI");
  assert.equal(acp.launches[0]?.includePartialMessages, true);
  assert.equal(session.modes?.currentModeId, "default");
  assert.deepEqual(session.modes?.availableModes.map((m) => m.id), [
    "default",
    "acceptEdits",
    "plan",
    "dontAsk",
  ]);
  const model = session.configOptions?.find((o) => o.id === "model");
  assert.deepEqual(
    model && "options" in model ? model.options.map((o) => "value" in o && o.value) : [],
    ["default", "haiku"],
  );
  const commands = await acp.client.waitFor((n) =>
    n.update.sessionUpdate === "available_commands_update"
  );
  assert.deepEqual(
    commands.update.sessionUpdate === "available_commands_update" &&
      commands.update.availableCommands,
    [
      { name: "review", description: "Review the code", input: { hint: "<file>" } },
      { name: "mcp:deploy", description: "Deploy", input: null },
    ],
  );
});

Deno.test("AcpAgent session/prompt streams text deltas once, not again from the assistant frame", async () => {
  await using acp = scriptedAcp((cli) =>
    cli.on("user", () => [
      ...streamTextDeltaFrames("Hello there", { chunkSize: 5 }),
      assistantTextFrame("Hello there"),
      resultFrame({ text: "Hello there" }),
    ])
  );
  const { sessionId } = await newSession(acp.client);
  const answer = await prompt(acp.client, sessionId, "Hi");
  assert.equal(answer.stopReason, "end_turn");
  const chunks = acp.client.of(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk");
  assert.equal(chunks.length, 3);
  assert.equal(acp.client.text(sessionId), "Hello there");
  const usage = acp.client.of(sessionId).find((u) => u.sessionUpdate === "usage_update");
  assert.ok(usage, "a usage update ends the prompt");
  const user = acp.clis[0]!.received.find((f) => f.type === "user") as {
    message: { content: unknown };
  };
  assert.deepEqual(user.message.content, [{ type: "text", text: "Hi" }]);
});

Deno.test("AcpAgent session/prompt sends images, resource links and embedded resources", async () => {
  await using acp = scriptedAcp(() => {});
  const { sessionId } = await newSession(acp.client);
  await acp.client.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [
      { type: "text", text: "Look" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "resource_link", uri: `file://${CWD}/a.ts`, name: "a.ts" },
      { type: "resource", resource: { uri: `file://${CWD}/b.ts`, text: "let b = 1;" } },
    ],
  });
  const user = acp.clis[0]!.received.find((f) => f.type === "user") as {
    message: { content: unknown };
  };
  assert.deepEqual(user.message.content, [
    { type: "text", text: "Look" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
    { type: "text", text: `[@a.ts](file://${CWD}/a.ts)` },
    { type: "text", text: `[@b.ts](file://${CWD}/b.ts)` },
    { type: "text", text: `\n<context ref="file://${CWD}/b.ts">\nlet b = 1;\n</context>` },
  ]);
});

Deno.test("AcpAgent maps a tool call approved through request_permission", async (t) => {
  for (
    const [kind, expected] of [["allow_once", undefined], ["allow_always", "setMode"]] as const
  ) {
    await t.step(kind, async () => {
      await using acp = scriptedAcp(writeTool, {}, choose(kind));
      const { sessionId } = await newSession(acp.client);
      const answer = await prompt(acp.client, sessionId, "write it");
      assert.equal(answer.stopReason, "end_turn");
      const [asked] = acp.client.permissions;
      assert.equal(asked?.toolCall.toolCallId, "toolu_w");
      assert.equal(asked?.toolCall.kind, "edit");
      assert.deepEqual(asked?.options.map((o) => o.kind), [
        "allow_always",
        "allow_once",
        "reject_once",
      ]);
      const sent = controlResponse(acp.clis[0]!);
      assert.equal(sent.behavior, "allow");
      assert.deepEqual(sent.updatedInput, { file_path: `${CWD}/a.txt`, content: "hi\n" });
      assert.equal(
        (sent.updatedPermissions as { type: string }[] | undefined)?.[0]?.type,
        expected,
      );
      const updates = acp.client.of(sessionId);
      const call = updates.find((u) => u.sessionUpdate === "tool_call");
      assert.ok(call && call.sessionUpdate === "tool_call");
      assert.equal(call.title, "Write a.txt");
      assert.deepEqual(call.locations, [{ path: `${CWD}/a.txt` }]);
      assert.deepEqual(call.content, [
        { type: "diff", path: `${CWD}/a.txt`, oldText: null, newText: "hi\n" },
      ]);
      const done = updates.find((u) => u.sessionUpdate === "tool_call_update");
      assert.equal(done && "status" in done && done.status, "completed");
      assert.equal(acp.client.text(sessionId), "Done.");
    });
  }
});

Deno.test("AcpAgent denies a tool the client rejects, or rewrites its input from _meta.updatedInput", async (t) => {
  await t.step("reject", async () => {
    await using acp = scriptedAcp(writeTool, {}, choose("reject_once"));
    const { sessionId } = await newSession(acp.client);
    await prompt(acp.client, sessionId, "write it");
    const sent = controlResponse(acp.clis[0]!);
    assert.equal(sent.behavior, "deny");
    assert.equal(sent.message, "User refused permission to run tool");
    const failed = acp.client.of(sessionId).find((u) =>
      u.sessionUpdate === "tool_call_update" && "status" in u && u.status === "failed"
    );
    assert.ok(failed, "the call is marked failed");
  });
  await t.step("updatedInput", async () => {
    await using acp = scriptedAcp(writeTool, {}, () => ({
      outcome: { outcome: "selected", optionId: "allow" },
      _meta: { updatedInput: { file_path: `${CWD}/b.txt`, content: "rewritten" } },
    }));
    const { sessionId } = await newSession(acp.client);
    await prompt(acp.client, sessionId, "write it");
    assert.deepEqual(controlResponse(acp.clis[0]!).updatedInput, {
      file_path: `${CWD}/b.txt`,
      content: "rewritten",
    });
  });
  await t.step("cancelled outcome", async () => {
    await using acp = scriptedAcp(writeTool, {}, () => ({ outcome: { outcome: "cancelled" } }));
    const { sessionId } = await newSession(acp.client);
    await prompt(acp.client, sessionId, "write it");
    assert.equal(controlResponse(acp.clis[0]!).behavior, "deny");
  });
});

Deno.test("AcpAgent session/cancel interrupts the turn and the prompt answers cancelled", async () => {
  await using acp = scriptedAcp((cli) => {
    cli.on("user", () => streamTextDeltaFrames("Working", { chunkSize: 7 }).slice(0, 3), {
      once: true,
    });
    cli.on("control_request:interrupt", (frame) => [
      controlSuccess(String(frame.request_id), { still_queued: [] }),
      resultFrame({
        subtype: "error_during_execution",
        isError: true,
        terminalReason: "aborted_streaming",
      }),
    ]);
  });
  const { sessionId } = await newSession(acp.client);
  const running = prompt(acp.client, sessionId, "long job");
  await acp.client.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk");
  await acp.client.agent.notify(methods.agent.session.cancel, { sessionId });
  assert.equal((await running).stopReason, "cancelled");
  assert.ok(
    acp.clis[0]!.received.some((f) =>
      f.type === "control_request" && (f.request as { subtype: string }).subtype === "interrupt"
    ),
  );
  // The session goes on (the echo answers).
  assert.equal((await prompt(acp.client, sessionId, "again")).stopReason, "end_turn");
  assert.match(acp.client.text(sessionId), /Echo: again$/);
});

Deno.test("AcpAgent session/set_mode sets the CLI's permission mode and refuses unknown modes", async () => {
  await using acp = scriptedAcp(() => {});
  const { sessionId } = await newSession(acp.client);
  await prompt(acp.client, sessionId, "hi");
  await acp.client.agent.request(methods.agent.session.setMode, { sessionId, modeId: "plan" });
  const set = acp.clis[0]!.received.find((f) =>
    f.type === "control_request" &&
    (f.request as { subtype: string }).subtype === "set_permission_mode"
  );
  assert.equal((set?.request as { mode?: string } | undefined)?.mode, "plan");
  const update = await acp.client.waitFor((n) => n.update.sessionUpdate === "config_option_update");
  assert.ok(update);
  await assert.rejects(
    acp.client.agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
    (error: RequestError) => error.code === -32602 && /"yolo" is not one of/.test(error.message),
  );
  const changed = await acp.client.agent.request(methods.agent.session.setConfigOption, {
    sessionId,
    configId: "model",
    value: "haiku",
  });
  const model = changed.configOptions.find((o) => o.id === "model");
  assert.equal(model && "currentValue" in model && model.currentValue, "haiku");
  assert.ok(
    acp.clis[0]!.received.some((f) =>
      f.type === "control_request" && (f.request as { subtype: string }).subtype === "set_model"
    ),
  );
});

Deno.test("AcpAgent passes the client's MCP servers to the CLI as external servers", async () => {
  await using acp = scriptedAcp(() => {});
  await newSession(acp.client, {
    mcpServers: [
      {
        name: "files",
        command: "/bin/mcp-files",
        args: ["--root", CWD],
        env: [{ name: "K", value: "v" }],
      },
      {
        type: "http",
        name: "web",
        url: "https://mcp.example/",
        headers: [{ name: "A", value: "b" }],
      },
    ],
  });
  const set = acp.clis[0]!.received.find((f) =>
    f.type === "control_request" && (f.request as { subtype: string }).subtype === "mcp_set_servers"
  );
  assert.deepEqual((set?.request as { servers?: unknown } | undefined)?.servers, {
    files: { command: "/bin/mcp-files", args: ["--root", CWD], env: { K: "v" } },
    web: { type: "http", url: "https://mcp.example/", headers: { A: "b" } },
  });
});

Deno.test("AcpAgent turns TodoWrite into a plan and a Bash result into a console block", async () => {
  await using acp = scriptedAcp((cli) =>
    cli.on("user", () => [
      assistantToolUseFrame({
        id: "toolu_t",
        name: "TodoWrite",
        input: {
          todos: [
            { content: "Read", status: "completed", activeForm: "Reading" },
            { content: "Write", status: "in_progress", activeForm: "Writing" },
          ],
        },
      }),
      userToolResultFrame({ toolUseId: "toolu_t", content: "ok" }),
      assistantToolUseFrame({ id: "toolu_b", name: "Bash", input: { command: "ls" } }),
      userToolResultFrame({ toolUseId: "toolu_b", content: "a.txt" }),
      resultFrame({ text: "" }),
    ])
  );
  const { sessionId } = await newSession(acp.client);
  await prompt(acp.client, sessionId, "plan");
  const updates = acp.client.of(sessionId);
  const plan = updates.find((u) => u.sessionUpdate === "plan");
  assert.deepEqual(plan && plan.sessionUpdate === "plan" && plan.entries, [
    { content: "Read", status: "completed", priority: "medium" },
    { content: "Write", status: "in_progress", priority: "medium" },
  ]);
  const bash = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "toolu_b");
  assert.equal(bash && "kind" in bash && bash.kind, "execute");
  const result = updates.find((u) =>
    u.sessionUpdate === "tool_call_update" && u.toolCallId === "toolu_b"
  );
  assert.deepEqual(result && "content" in result && result.content, [
    { type: "content", content: { type: "text", text: "```console\na.txt\n```" } },
  ]);
});

Deno.test("AcpAgent hibernates idle sessions at maxLive and resumes them with their mode", async () => {
  await using acp = scriptedAcp(() => {}, { maxLive: 1 });
  const a = await newSession(acp.client);
  await prompt(acp.client, a.sessionId, "first");
  await acp.client.agent.request(methods.agent.session.setMode, {
    sessionId: a.sessionId,
    modeId: "acceptEdits",
  });
  const b = await acp.client.agent.request(methods.agent.session.new, { cwd: CWD, mcpServers: [] });
  assert.equal(acp.acp.pool.peek(a.sessionId)?.state, "hibernated");
  await prompt(acp.client, a.sessionId, "back");
  assert.equal(acp.launches.at(-1)?.resume, a.sessionId);
  const woken = acp.clis.at(-1)!;
  const mode = woken.received.find((f) =>
    f.type === "control_request" &&
    (f.request as { subtype: string }).subtype === "set_permission_mode"
  );
  assert.equal((mode?.request as { mode?: string } | undefined)?.mode, "acceptEdits");
  assert.equal(acp.acp.pool.peek(b.sessionId)?.state, "hibernated");
});

Deno.test("AcpAgent answers bad input with JSON-RPC errors and keeps serving", async (t) => {
  await using acp = scriptedAcp(() => {});
  await acp.client.initialize();
  await t.step("unknown session", async () => {
    await assert.rejects(
      prompt(acp.client, "no-such-session", "hi"),
      (error: RequestError) => error.code === -32002 && error.data !== undefined,
    );
  });
  await t.step("prompt that is not an array", async () => {
    await assert.rejects(
      acp.client.agent.request("session/prompt", { sessionId: "x", prompt: "hi" }),
      (error: RequestError) => error.code === -32602,
    );
  });
  await t.step("relative cwd", async () => {
    await assert.rejects(
      acp.client.agent.request(methods.agent.session.new, { cwd: "rel", mcpServers: [] }),
      (error: RequestError) => error.code === -32602 && /absolute/.test(error.message),
    );
  });
  await t.step("unknown method", async () => {
    await assert.rejects(
      acp.client.agent.request("session/teleport", {}),
      (error: RequestError) => error.code === -32601,
    );
  });
  await t.step("still serving", async () => {
    const { sessionId } = await acp.client.agent.request(methods.agent.session.new, {
      cwd: CWD,
      mcpServers: [],
    });
    assert.equal((await prompt(acp.client, sessionId, "hi")).stopReason, "end_turn");
  });
});

Deno.test("AcpAgent answers a line that is not JSON with a parse error and serves the next", async () => {
  const { AcpAgent } = await import("../../../adapters/acp/mod.ts");
  await using acp = new AcpAgent({ launch: () => (() => Promise.reject(new Error("unused"))) });
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const connection = acp.connect({ readable: input.readable, writable: output.writable });
  const writer = input.writable.getWriter();
  const encoder = new TextEncoder();
  // Not awaited: the agent's answers wait for this test to read them.
  const written = Promise.all([
    writer.write(encoder.encode("this is not json\n")),
    writer.write(encoder.encode('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')),
    writer.write(
      encoder.encode(
        '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}\n',
      ),
    ),
  ]);
  const lines: Record<string, unknown>[] = [];
  const reader = output.readable.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  while (lines.length < 3) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += value;
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
  }
  const [parse, invalid, ok] = lines as {
    id: unknown;
    error?: { code: number };
    result?: unknown;
  }[];
  assert.equal(parse?.error?.code, -32700);
  assert.equal(invalid?.id, 1);
  assert.equal(invalid?.error?.code, -32602);
  assert.equal(ok?.id, 2);
  assert.ok(ok?.result);
  await written;
  await writer.close();
  await connection.closed;
  reader.releaseLock();
  await output.readable.cancel().catch(() => {});
});
