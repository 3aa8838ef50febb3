import assert from "node:assert/strict";
import { type SdkMcpTool, tool, type ToolInputSchema } from "../../src/mcp/tool.ts";

const schema: ToolInputSchema = {
  type: "object",
  properties: { q: { type: "string" } },
  required: ["q"],
};

Deno.test("tool() makes a frozen tool with a copied schema", { permissions: "none" }, () => {
  const handler = (): string => "ok";
  const made: SdkMcpTool = tool("search_docs-2", "Searches", schema, handler, {
    annotations: { readOnlyHint: true, title: "Search" },
  });
  assert.equal(made.name, "search_docs-2");
  assert.equal(made.description, "Searches");
  assert.equal(made.handler, handler);
  assert.deepEqual(made.inputSchema, schema);
  assert.notEqual(made.inputSchema, schema);
  assert.deepEqual(made.annotations, { readOnlyHint: true, title: "Search" });
  assert.ok(Object.isFrozen(made));
  assert.throws(() => {
    (made as { name: string }).name = "other";
  }, TypeError);
  schema.required = ["changed"];
  assert.deepEqual(made.inputSchema.required, ["q"]);
  schema.required = ["q"];
  assert.equal(tool("t", "d", schema, handler).annotations, undefined);
});

Deno.test("tool() throws a TypeError for bad parts", { permissions: "none" }, async (t) => {
  const ok = (): string => "";
  const bad: [string, () => unknown, RegExp][] = [
    ["empty name", () => tool("", "d", schema, ok), /tool name "": it must be 1 to 64/],
    ["name with a space", () => tool("a b", "d", schema, ok), /tool name "a b"/],
    ["name with a dot", () => tool("a.b", "d", schema, ok), /tool name "a.b"/],
    ["65-character name", () => tool("x".repeat(65), "d", schema, ok), /1 to 64/],
    ["non-string description", () => tool("t", 1 as unknown as string, schema, ok), /description/],
    [
      "non-object schema type",
      () => tool("t", "d", { type: "string" } as unknown as ToolInputSchema, ok),
      /inputSchema must be a JSON Schema object with type "object"/,
    ],
    ["schema not an object", () => tool("t", "d", null as unknown as ToolInputSchema, ok), /input/],
    [
      "handler not a function",
      () => tool("t", "d", schema, "x" as unknown as () => string),
      /handler must be a function/,
    ],
    [
      "schema not JSON",
      () => tool("t", "d", { type: "object", x: 1n } as unknown as ToolInputSchema, ok),
      /input schema of tool t: it is not JSON-serializable/,
    ],
    [
      "annotations not an object",
      () => tool("t", "d", schema, ok, { annotations: "ro" as unknown as Record<string, never> }),
      /annotations must be an object/,
    ],
  ];
  for (const [name, make, message] of bad) {
    await t.step(
      name,
      () => assert.throws(make, (e: unknown) => e instanceof TypeError && message.test(e.message)),
    );
  }
  assert.equal(tool("x".repeat(64), "d", schema, ok).name.length, 64);
});
