import assert from "node:assert/strict";
import { mcpServer, type SdkMcpServer } from "../../src/mcp/mcp_server.ts";
import { tool, type ToolContext, type ToolHandler } from "../../src/mcp/tool.ts";

const signal = new AbortController().signal;

const addSchema = {
  type: "object" as const,
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
  additionalProperties: false,
};

function calc(handler?: ToolHandler, extra: Parameters<typeof mcpServer>[0]["tools"] = []) {
  return mcpServer({
    name: "calc",
    version: "2.0.0",
    instructions: "Use add for sums.",
    tools: [
      tool(
        "add",
        "Adds two numbers",
        addSchema,
        handler ?? (({ a, b }) => `${Number(a) + Number(b)}`),
        {
          annotations: { readOnlyHint: true },
        },
      ),
      ...extra,
    ],
  });
}

function call(server: SdkMcpServer, id: number | string, name: string, args?: unknown, s = signal) {
  return server.handle(
    { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
    { signal: s },
  );
}

Deno.test(
  "SdkMcpServer.handle() answers the CLI's handshake",
  { permissions: "none" },
  async (t) => {
    const server = calc();
    await t.step("initialize echoes a supported protocol version", async () => {
      const reply = await server.handle({
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "claude-code" },
        },
        jsonrpc: "2.0",
        id: 0,
      }, { signal });
      assert.deepEqual(reply, {
        jsonrpc: "2.0",
        id: 0,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "calc", version: "2.0.0" },
          instructions: "Use add for sums.",
        },
      });
    });
    await t.step("initialize answers an unknown version with the latest", async () => {
      for (const params of [{ protocolVersion: "1999-01-01" }, {}, undefined]) {
        const reply = await server.handle(
          { jsonrpc: "2.0", id: "i", method: "initialize", params },
          { signal },
        );
        assert.ok(reply && "result" in reply);
        assert.equal(reply.result.protocolVersion, "2025-11-25");
      }
      const old = await server.handle(
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05" } },
        { signal },
      );
      assert.ok(old && "result" in old);
      assert.equal(old.result.protocolVersion, "2024-11-05");
    });
    await t.step("notifications get no response", async () => {
      for (const method of ["notifications/initialized", "notifications/cancelled", "whatever"]) {
        assert.equal(await server.handle({ jsonrpc: "2.0", method }, { signal }), undefined);
      }
      assert.equal(
        await server.handle({ jsonrpc: "2.0", method: "notifications/x", params: 5 }, { signal }),
        undefined,
        "a malformed notification is not answered either",
      );
    });
    await t.step("ping", async () => {
      assert.deepEqual(await server.handle({ jsonrpc: "2.0", id: 7, method: "ping" }, { signal }), {
        jsonrpc: "2.0",
        id: 7,
        result: {},
      });
    });
    await t.step("tools/list lists name, description, schema and annotations", async () => {
      const reply = await server.handle({ method: "tools/list", jsonrpc: "2.0", id: 1 }, {
        signal,
      });
      assert.deepEqual(reply, {
        jsonrpc: "2.0",
        id: 1,
        result: {
          tools: [{
            name: "add",
            description: "Adds two numbers",
            inputSchema: addSchema,
            annotations: { readOnlyHint: true },
          }],
        },
      });
    });
    await t.step("a server without instructions or version", async () => {
      const bare = mcpServer({ name: "bare", tools: [] });
      assert.equal(bare.type, "sdk");
      assert.equal(bare.version, "1.0.0");
      const reply = await bare.handle({ jsonrpc: "2.0", id: 0, method: "initialize" }, { signal });
      assert.ok(reply && "result" in reply);
      assert.equal("instructions" in reply.result, false);
      assert.deepEqual(reply.result.serverInfo, { name: "bare", version: "1.0.0" });
      assert.deepEqual(
        await bare.handle({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { signal }),
        { jsonrpc: "2.0", id: 1, result: { tools: [] } },
      );
    });
  },
);

Deno.test("SdkMcpServer.handle() runs tools/call", { permissions: "none" }, async (t) => {
  await t.step("a string result is one text block", async () => {
    assert.deepEqual(await call(calc(), 2, "add", { a: 1, b: 2 }), {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "3" }] },
    });
  });
  await t.step("a ToolResult passes through", async () => {
    const server = calc(() => ({
      content: [{ type: "text", text: "sum" }, {
        type: "resource_link",
        uri: "file:///x",
        name: "x",
      }],
      structuredContent: { sum: 3 },
      isError: false,
      _meta: { m: 1 },
    }));
    assert.deepEqual(await call(server, "s", "add", { a: 1, b: 2 }), {
      jsonrpc: "2.0",
      id: "s",
      result: {
        content: [{ type: "text", text: "sum" }, {
          type: "resource_link",
          uri: "file:///x",
          name: "x",
        }],
        structuredContent: { sum: 3 },
        _meta: { m: 1 },
      },
    });
  });
  await t.step("an async handler with an error result", async () => {
    const server = calc(async () => {
      await Promise.resolve();
      return { content: [{ type: "text", text: "nope" }], isError: true };
    });
    assert.deepEqual(await call(server, 3, "add", { a: 1, b: 2 }), {
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "nope" }], isError: true },
    });
  });
  await t.step("the handler gets the input, the signal and the tool_use id", async () => {
    let seen: [Record<string, unknown>, ToolContext] | undefined;
    const server = calc((input, context) => {
      seen = [input, context];
      return "ok";
    });
    await server.handle({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: {
        name: "add",
        arguments: { a: 1, b: 2 },
        _meta: { "claudecode/toolUseId": "toolu_fake_1", progressToken: 2 },
      },
    }, { signal });
    assert.ok(seen);
    assert.deepEqual(seen[0], { a: 1, b: 2 });
    assert.equal(seen[1].toolUseId, "toolu_fake_1");
    assert.ok(seen[1].signal instanceof AbortSignal);
    assert.equal(seen[1].signal.aborted, false);
    await call(server, 5, "add", { a: 1, b: 2 });
    assert.equal("toolUseId" in seen[1], false);
  });
  await t.step("missing arguments count as {}", async () => {
    const server = mcpServer({
      name: "s",
      tools: [tool("now", "Time", { type: "object" }, (input) => JSON.stringify(input))],
    });
    assert.deepEqual(await call(server, 1, "now"), {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "{}" }] },
    });
  });
});

Deno.test("SdkMcpServer.handle() turns tool failures into error results", {
  permissions: "none",
}, async (t) => {
  await t.step("invalid arguments never reach the handler", async () => {
    let calls = 0;
    const server = calc(() => {
      calls++;
      return "ran";
    });
    assert.deepEqual(await call(server, 1, "add", { a: "1", c: true }), {
      jsonrpc: "2.0",
      id: 1,
      result: {
        content: [{
          type: "text",
          text: "Invalid input for tool add:\n" +
            "- /b: is required but missing\n" +
            "- /a: expected number, got string\n" +
            '- (root): unexpected property "c" (allowed: a, b)',
        }],
        isError: true,
      },
    });
    const notObject = await call(server, 2, "add", [1, 2]);
    assert.deepEqual(notObject, {
      jsonrpc: "2.0",
      id: 2,
      result: {
        content: [{
          type: "text",
          text: "Invalid input for tool add: arguments must be an object",
        }],
        isError: true,
      },
    });
    assert.equal(calls, 0);
  });
  await t.step("a throw, a rejection, a non-Error throw", async () => {
    const handlers: [ToolHandler, string][] = [
      [() => {
        throw new Error("disk full");
      }, "disk full"],
      [() => Promise.reject(new RangeError("too big")), "too big"],
      [() => {
        // deno-lint-ignore no-throw-literal
        throw "plain string";
      }, "plain string"],
      [() => {
        throw new Error("");
      }, "Error"],
    ];
    for (const [handler, text] of handlers) {
      assert.deepEqual(await call(calc(handler), 9, "add", { a: 1, b: 2 }), {
        jsonrpc: "2.0",
        id: 9,
        result: { content: [{ type: "text", text }], isError: true },
      });
    }
  });
  await t.step("an invalid return value", async () => {
    const returns: [unknown, RegExp][] = [
      [undefined, /expected a string or an object with a content array/],
      [42, /expected a string/],
      [{ text: "x" }, /content must be an array/],
      [{ content: ["x"] }, /content\[0\] must be an object with a string type/],
      [{ content: [], isError: "yes" }, /isError must be a boolean/],
      [{ content: [], structuredContent: [1] }, /structuredContent must be an object/],
    ];
    for (const [value, message] of returns) {
      const reply = await call(calc(() => value as string), 1, "add", { a: 1, b: 2 });
      assert.ok(reply && "result" in reply);
      assert.equal(reply.result.isError, true);
      const content = reply.result.content as { text: string }[];
      assert.match(content[0]?.text ?? "", /^Tool add returned an invalid result: /);
      assert.match(content[0]?.text ?? "", message);
    }
  });
  await t.step("an unknown tool is JSON-RPC error -32602", async () => {
    assert.deepEqual(await call(calc(), 5, "nope", {}), {
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "Unknown tool: nope" },
    });
    assert.deepEqual(
      await calc().handle({ jsonrpc: "2.0", id: 6, method: "tools/call", params: {} }, { signal }),
      {
        jsonrpc: "2.0",
        id: 6,
        error: { code: -32602, message: "Invalid params: name must be a string" },
      },
    );
  });
});

Deno.test("SdkMcpServer.handle() aborts handlers", { permissions: "none" }, async (t) => {
  function waiter(): { handler: ToolHandler; started: Promise<AbortSignal> } {
    const started = Promise.withResolvers<AbortSignal>();
    const handler: ToolHandler = (_input, { signal }) => {
      started.resolve(signal);
      return new Promise((_, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    };
    return { handler, started: started.promise };
  }
  await t.step("the context signal reaches the handler", async () => {
    const { handler, started } = waiter();
    const outer = new AbortController();
    const pending = call(calc(handler), 1, "add", { a: 1, b: 2 }, outer.signal);
    const inner = await started;
    outer.abort(new Error("session closed"));
    assert.equal(inner.aborted, true);
    assert.deepEqual(await pending, {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "session closed" }], isError: true },
    });
  });
  await t.step("notifications/cancelled aborts the named call only", async () => {
    const first = waiter();
    const server = calc(first.handler);
    const pending = call(server, 2, "add", { a: 1, b: 2 });
    const inner = await first.started;
    await server.handle({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "2", reason: "wrong type" },
    }, { signal });
    assert.equal(inner.aborted, false, "a string id does not match a number id");
    assert.equal(
      await server.handle({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 2, reason: "AbortError: remote-cancel" },
      }, { signal }),
      undefined,
    );
    assert.equal(inner.aborted, true);
    assert.equal((inner.reason as DOMException).name, "AbortError");
    assert.deepEqual(await pending, {
      jsonrpc: "2.0",
      id: 2,
      result: {
        content: [{
          type: "text",
          text: "The tool call was cancelled: AbortError: remote-cancel",
        }],
        isError: true,
      },
    });
  });
  await t.step("an id in use by a running call is refused", async () => {
    const first = waiter();
    const server = calc(first.handler);
    const outer = new AbortController();
    const pending = call(server, 3, "add", { a: 1, b: 2 }, outer.signal);
    await first.started;
    assert.deepEqual(await call(server, 3, "add", { a: 1, b: 2 }), {
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32600,
        message: "Invalid request: id 3 is already in use by a running call",
      },
    });
    outer.abort();
    await pending;
    // Once settled, the id is free again.
    const again = await call(calc(), 3, "add", { a: 1, b: 2 });
    assert.ok(again && "result" in again);
  });
  await t.step("an already aborted signal does not run the handler", async () => {
    let ran = false;
    const server = calc(() => {
      ran = true;
      return "x";
    });
    const reply = await call(
      server,
      4,
      "add",
      { a: 1, b: 2 },
      AbortSignal.abort(new Error("gone")),
    );
    assert.deepEqual(reply, {
      jsonrpc: "2.0",
      id: 4,
      result: { content: [{ type: "text", text: "Tool add was not run: gone" }], isError: true },
    });
    assert.equal(ran, false);
  });
});

Deno.test("SdkMcpServer.handle() rejects malformed messages", { permissions: "none" }, async () => {
  const server = calc();
  const cases: [unknown, unknown][] = [
    [null, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: not an object" },
    }],
    ["text", {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: not an object" },
    }],
    [[{ jsonrpc: "2.0", id: 1, method: "ping" }], {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Batch messages are not supported" },
    }],
    [{ id: 1, method: "ping" }, {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32600, message: 'Invalid request: jsonrpc must be "2.0"' },
    }],
    [{ jsonrpc: "2.0", id: "a" }, {
      jsonrpc: "2.0",
      id: "a",
      error: { code: -32600, message: "Invalid request: method is missing" },
    }],
    [{ jsonrpc: "2.0", id: 2, method: 5 }, {
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32600, message: "Invalid request: method must be a string" },
    }],
    [{ jsonrpc: "2.0", id: null, method: "ping" }, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: id must be a string or a number" },
    }],
    [{ jsonrpc: "2.0", id: {}, method: "ping" }, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: id must be a string or a number" },
    }],
    [{ jsonrpc: "2.0", id: 3, method: "ping", params: [1] }, {
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32600, message: "Invalid request: params must be an object" },
    }],
    [{ jsonrpc: "2.0", id: 4, method: "resources/list" }, {
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32601, message: "Method not found: resources/list" },
    }],
    // A response to a request the server never sent: ignored.
    [{ jsonrpc: "2.0", id: 5, result: {} }, undefined],
    [{ jsonrpc: "2.0", id: 6, error: { code: 1, message: "m" } }, undefined],
  ];
  for (const [message, expected] of cases) {
    assert.deepEqual(await server.handle(message, { signal }), expected, JSON.stringify(message));
  }
});

Deno.test("mcpServer() validates its options", { permissions: "none" }, async (t) => {
  const ok = tool("a", "d", { type: "object" }, () => "");
  const bad: [string, unknown, RegExp][] = [
    ["no options", undefined, /options are missing/],
    ["empty name", { name: "", tools: [] }, /server "": the name must be a non-empty string/],
    ["name with __", { name: "a__b", tools: [] }, /server "a__b"/],
    ["non-string name", { name: 5, tools: [] }, /server 5/],
    ["tools not an array", { name: "s", tools: ok }, /tools must be an array/],
    ["a non-tool", { name: "s", tools: [{ name: "x" }] }, /description must be a string/],
    ["a bad tool name", { name: "s", tools: [{ ...ok, name: "a b" }] }, /tool name "a b"/],
    ["duplicate tool names", { name: "s", tools: [ok, ok] }, /two tools are named a/],
    ["bad version", { name: "s", tools: [], version: 1 }, /version must be a string/],
    [
      "bad instructions",
      { name: "s", tools: [], instructions: {} },
      /instructions must be a string/,
    ],
  ];
  for (const [name, options, message] of bad) {
    await t.step(name, () => {
      assert.throws(
        () => mcpServer(options as Parameters<typeof mcpServer>[0]),
        (e: unknown) => e instanceof TypeError && message.test(e.message),
      );
    });
  }
  await t.step("the tool list is a frozen copy", () => {
    const tools = [ok];
    const server = mcpServer({ name: "s", tools });
    tools.push(tool("b", "d", { type: "object" }, () => ""));
    assert.equal(server.tools.length, 1);
    assert.ok(Object.isFrozen(server.tools));
  });
});
