import assert from "node:assert/strict";
import { z } from "npm:zod@4.6.7";
import { mcpServer, tool } from "../../mod.ts";
import type { StandardSchemaV1 } from "../../src/mcp/standard_schema.ts";

const signal = new AbortController().signal;

function call(name: string, args: unknown, id = 1): Record<string, unknown> {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

function textOf(response: unknown): { text: string; isError: boolean } {
  const result = (response as { result: { content: { text: string }[]; isError?: boolean } })
    .result;
  return { text: result.content.map((c) => c.text).join(""), isError: result.isError === true };
}

/** A Standard Schema with no JSON Schema converter, whose validate misbehaves on demand. */
function handMade(validate: (value: unknown) => unknown): StandardSchemaV1<{ n: number }> {
  return {
    "~standard": {
      version: 1,
      vendor: "hand-made",
      validate: validate as StandardSchemaV1<{ n: number }>["~standard"]["validate"],
    },
  };
}

Deno.test({
  name: "tool() takes a zod schema: its JSON Schema is derived, the handler typed by it",
  permissions: "none",
  async fn() {
    const input = z.object({ a: z.number(), b: z.number().default(10), label: z.string().min(2) });
    const add = tool("add", "Adds", input, ({ a, b, label }) => `${label}: ${a + b}`);
    assert.equal(add.inputValidator, input);
    assert.equal(add.inputSchema.type, "object");
    assert.deepEqual(Object.keys(add.inputSchema.properties ?? {}), ["a", "b", "label"]);
    assert.deepEqual(add.inputSchema.required, ["a", "label"], "b has a default");
    const server = mcpServer({ name: "calc", tools: [add] });
    const listed = await server.handle({ jsonrpc: "2.0", id: 0, method: "tools/list" }, { signal });
    const tools = (listed as unknown as { result: { tools: { inputSchema: unknown }[] } }).result
      .tools;
    assert.deepEqual(tools[0]?.inputSchema, add.inputSchema);

    // The handler gets zod's output: the default filled in.
    assert.deepEqual(textOf(await server.handle(call("add", { a: 1, label: "sum" }), { signal })), {
      text: "sum: 11",
      isError: false,
    });
  },
});

Deno.test({
  name: "mcpServer() reports a validator's issues to the model as a tool error",
  permissions: "none",
  async fn() {
    let ran = 0;
    const echo = tool(
      "echo",
      "Echoes",
      z.object({ a: z.number(), tags: z.array(z.string()) }),
      () => {
        ran++;
        return "ran";
      },
    );
    const server = mcpServer({ name: "s", tools: [echo] });
    const bad = textOf(await server.handle(call("echo", { a: "one", tags: [1] }), { signal }));
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^Invalid input for tool echo:\n- \/a: .*expected number/);
    assert.match(bad.text, /\n- \/tags\/0: .*expected string/);
    assert.equal(ran, 0, "the handler never ran");
  },
});

Deno.test({
  name: "mcpServer() awaits an async validator",
  permissions: "none",
  async fn() {
    const taken = new Set(["alice"]);
    const schema = z.object({ user: z.string() }).refine(async ({ user }) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return !taken.has(user);
    }, { message: "name taken", path: ["user"] });
    const signUp = tool("sign_up", "Signs up", schema, ({ user }) => `welcome ${user}`, {
      inputSchema: { type: "object", properties: { user: { type: "string" } }, required: ["user"] },
    });
    const server = mcpServer({ name: "s", tools: [signUp] });
    assert.deepEqual(textOf(await server.handle(call("sign_up", { user: "bob" }), { signal })), {
      text: "welcome bob",
      isError: false,
    });
    const taken2 = textOf(await server.handle(call("sign_up", { user: "alice" }), { signal }));
    assert.deepEqual(taken2, {
      text: "Invalid input for tool sign_up:\n- /user: name taken",
      isError: true,
    });
  },
});

Deno.test({
  name: "tool() needs a JSON Schema for a validator: options.inputSchema or its converter",
  permissions: "none",
  fn() {
    const explicit = { type: "object" as const, properties: { n: { type: "integer" } } };
    const withSchema = tool("n", "N", handMade((value) => ({ value })), () => "", {
      inputSchema: explicit,
    });
    assert.deepEqual(withSchema.inputSchema, explicit);
    const zodOverridden = tool("z", "Z", z.object({ n: z.number() }), () => "", {
      inputSchema: explicit,
    });
    assert.deepEqual(zodOverridden.inputSchema, explicit, "the explicit schema wins");
    assert.throws(
      () => tool("n", "N", handMade((value) => ({ value })), () => ""),
      /no JSON Schema converter .*pass options\.inputSchema/,
    );
    assert.throws(
      () => tool("d", "D", z.object({ when: z.date() }), () => ""),
      /Cannot derive a JSON Schema from the zod validator: .*Date.*pass options\.inputSchema/,
    );
    assert.throws(
      () => tool("s", "S", z.string(), () => ""),
      /inputSchema must be a JSON Schema object/,
    );
  },
});

Deno.test({
  name: "mcpServer() turns a validator that throws or answers nonsense into a tool error",
  permissions: "none",
  async fn(t) {
    const cases: [string, (value: unknown) => unknown, RegExp][] = [
      ["throws", () => {
        throw new Error("boom");
      }, /\(root\): the validator failed: boom/],
      ["rejects", () => Promise.reject(new Error("late boom")), /validator failed: late boom/],
      ["returns null", () => null, /returned no result object/],
      ["returns {}", () => ({}), /neither value nor issues/],
      ["returns bad issues", () => ({ issues: "many" }), /malformed issues/],
      ["returns empty issues", () => ({ issues: [] }), /- \(root\): invalid/],
    ];
    for (const [label, validate, message] of cases) {
      await t.step(label, async () => {
        const made = tool("t", "T", handMade(validate), () => "ran", {
          inputSchema: { type: "object" },
        });
        const server = mcpServer({ name: "s", tools: [made] });
        const result = textOf(await server.handle(call("t", { n: 1 }), { signal }));
        assert.equal(result.isError, true);
        assert.match(result.text, message);
      });
    }
  },
});
