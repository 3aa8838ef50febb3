import assert from "node:assert/strict";
import { mcpServer, type SdkMcpServer } from "../../src/mcp/mcp_server.ts";
import {
  answerMcpMessage,
  initializeFieldsFor,
  mcpConfigFor,
} from "../../src/mcp/sdk_mcp_wiring.ts";
import { tool } from "../../src/mcp/tool.ts";

const signal = new AbortController().signal;

const calc = mcpServer({
  name: "calc",
  tools: [
    tool(
      "add",
      "Add two numbers",
      {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      ({ a, b }) => `sum=${Number(a) + Number(b)}`,
      { annotations: { readOnlyHint: true } },
    ),
  ],
});
const other = mcpServer({ name: "other", tools: [] });

Deno.test("initializeFieldsFor() lists the server names", { permissions: "none" }, () => {
  assert.deepEqual(initializeFieldsFor([]), {});
  assert.deepEqual(initializeFieldsFor([calc, other]), { sdkMcpServers: ["calc", "other"] });
  assert.throws(() => initializeFieldsFor([calc, calc]), /two are named calc/);
  assert.throws(
    () => initializeFieldsFor([{ name: "x" } as unknown as SdkMcpServer]),
    /each must come from mcpServer\(\)/,
  );
  assert.throws(() => initializeFieldsFor("calc" as unknown as SdkMcpServer[]), TypeError);
});

Deno.test("mcpConfigFor() needs nothing on the command line", { permissions: "none" }, () => {
  assert.equal(mcpConfigFor([]), undefined);
  assert.equal(mcpConfigFor([calc]), undefined);
  assert.throws(() => mcpConfigFor([calc, calc]), TypeError);
});

/**
 * The `mcp_message` bodies Claude Code 2.1.332 sent in a real run (one tool
 * call, then an interrupt during a second call), in order.
 */
const recorded: { server_name: string; message: Record<string, unknown> }[] = [
  {
    server_name: "calc",
    message: {
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: {
          name: "claude-code",
          title: "Claude Code",
          description: "Anthropic's agentic coding tool",
          websiteUrl: "https://claude.com/claude-code",
          version: "2.1.332",
        },
      },
      jsonrpc: "2.0",
      id: 0,
    },
  },
  { server_name: "calc", message: { jsonrpc: "2.0", method: "notifications/initialized" } },
  { server_name: "calc", message: { method: "tools/list", jsonrpc: "2.0", id: 1 } },
  {
    server_name: "calc",
    message: {
      method: "tools/call",
      params: {
        name: "add",
        arguments: { a: 1, b: 2 },
        _meta: { "claudecode/toolUseId": "toolu_fake_1", progressToken: 2 },
      },
      jsonrpc: "2.0",
      id: 2,
    },
  },
];

Deno.test("answerMcpMessage() answers the CLI's recorded sequence", {
  permissions: "none",
}, async () => {
  const replies = [];
  for (const request of recorded) {
    replies.push(await answerMcpMessage([other, calc], request, signal));
  }
  assert.deepEqual(replies, [
    {
      mcp_response: {
        jsonrpc: "2.0",
        id: 0,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "calc", version: "1.0.0" },
        },
      },
    },
    { mcp_response: { jsonrpc: "2.0", result: {} } },
    {
      mcp_response: {
        jsonrpc: "2.0",
        id: 1,
        result: {
          tools: [{
            name: "add",
            description: "Add two numbers",
            inputSchema: {
              type: "object",
              properties: { a: { type: "number" }, b: { type: "number" } },
              required: ["a", "b"],
            },
            annotations: { readOnlyHint: true },
          }],
        },
      },
    },
    {
      mcp_response: {
        jsonrpc: "2.0",
        id: 2,
        result: { content: [{ type: "text", text: "sum=3" }] },
      },
    },
  ]);
});

Deno.test("answerMcpMessage() cancels a call on notifications/cancelled", {
  permissions: "none",
}, async () => {
  const started = Promise.withResolvers<AbortSignal>();
  const slow = mcpServer({
    name: "slow",
    tools: [
      tool("wait", "Waits", { type: "object" }, (_input, { signal }) => {
        started.resolve(signal);
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true })
        );
      }),
    ],
  });
  const pending = answerMcpMessage([slow], {
    server_name: "slow",
    message: {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "wait", arguments: {} },
    },
  }, signal);
  const inner = await started.promise;
  // What 2.1.332 sent on an interrupt during the call.
  const ack = await answerMcpMessage([slow], {
    server_name: "slow",
    message: {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 3, reason: "AbortError: remote-cancel" },
    },
  }, signal);
  assert.deepEqual(ack, { mcp_response: { jsonrpc: "2.0", result: {} } });
  assert.equal(inner.aborted, true);
  const reply = await pending;
  assert.deepEqual(reply.mcp_response, {
    jsonrpc: "2.0",
    id: 3,
    result: {
      content: [{ type: "text", text: "The tool call was cancelled: AbortError: remote-cancel" }],
      isError: true,
    },
  });
});

Deno.test("answerMcpMessage() answers errors instead of throwing", {
  permissions: "none",
}, async (t) => {
  await t.step("an unknown server", async () => {
    assert.deepEqual(
      await answerMcpMessage([calc], {
        server_name: "nope",
        message: { jsonrpc: "2.0", id: 4, method: "tools/list" },
      }, signal),
      {
        mcp_response: {
          jsonrpc: "2.0",
          id: 4,
          error: {
            code: -32601,
            message: 'Cannot route the MCP message: no in-process MCP server is named "nope"',
          },
        },
      },
    );
  });
  await t.step("no servers, a malformed request", async () => {
    const reply = await answerMcpMessage(
      [],
      null as unknown as { server_name: string; message: unknown },
      signal,
    );
    assert.deepEqual(reply.mcp_response, {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32601,
        message: "Cannot route the MCP message: no in-process MCP server is named undefined",
      },
    });
  });
  await t.step("a malformed message", async () => {
    const reply = await answerMcpMessage([calc], { server_name: "calc", message: 5 }, signal);
    assert.deepEqual(reply.mcp_response, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: not an object" },
    });
  });
  await t.step("a server whose handle() breaks its contract", async () => {
    const broken: SdkMcpServer = {
      ...calc,
      name: "broken",
      handle: () => Promise.reject(new Error("boom")),
    };
    const reply = await answerMcpMessage([broken], {
      server_name: "broken",
      message: { jsonrpc: "2.0", id: "x", method: "ping" },
    }, signal);
    assert.deepEqual(reply.mcp_response, {
      jsonrpc: "2.0",
      id: "x",
      error: { code: -32603, message: "Internal error: boom" },
    });
  });
});
