import assert from "node:assert/strict";
import fc from "fast-check";
import { validateJsonSchema } from "../../src/mcp/_json_schema.ts";

type Case = [name: string, schema: unknown, value: unknown, errors: string[]];

const cases: Case[] = [
  ["true schema accepts anything", true, { x: 1 }, []],
  ["false schema rejects", false, 1, ["(root): no value is allowed here"]],
  ["empty schema accepts anything", {}, [1, "a"], []],
  ["type string ok", { type: "string" }, "a", []],
  ["type mismatch", { type: "string" }, 5, ["(root): expected string, got integer"]],
  ["integer rejects fraction", { type: "integer" }, 1.5, ["(root): expected integer, got number"]],
  ["integer accepts 2.0", { type: "integer" }, 2.0, []],
  ["number accepts integer", { type: "number" }, 3, []],
  ["object rejects array", { type: "object" }, [], ["(root): expected object, got array"]],
  ["array rejects object", { type: "array" }, {}, ["(root): expected array, got object"]],
  ["null", { type: "null" }, null, []],
  ["boolean", { type: "boolean" }, "true", ["(root): expected boolean, got string"]],
  ["type list ok", { type: ["string", "null"] }, null, []],
  [
    "type list mismatch",
    { type: ["string", "null"] },
    0,
    ["(root): expected one of string, null, got integer"],
  ],
  ["unknown type name constrains nothing", { type: "date" }, 5, []],
  ["nullable (OpenAPI)", { type: "string", nullable: true }, null, []],
  ["enum ok", { enum: ["a", "b"] }, "b", []],
  ["enum deep", { enum: [{ x: [1] }] }, { x: [1] }, []],
  ["enum miss", { enum: ["a", "b"] }, "c", ['(root): must be one of "a", "b"; got "c"']],
  ["const ok", { const: { a: 1, b: 2 } }, { b: 2, a: 1 }, []],
  ["const miss", { const: 3 }, 4, ["(root): must be 3; got 4"]],
  ["minLength counts code points", { minLength: 2 }, "😀", [
    "(root): must be at least 2 characters long, got 1",
  ]],
  ["maxLength", { maxLength: 3 }, "abcd", ["(root): must be at most 3 characters long, got 4"]],
  ["length ignores non-strings", { maxLength: 1 }, 12345, []],
  ["pattern ok", { pattern: "^[a-z]+$" }, "abc", []],
  ["pattern miss", { pattern: "^[a-z]+$" }, "ab1", ['(root): must match the pattern "^[a-z]+$"']],
  ["pattern is a search, not anchored", { pattern: "b" }, "abc", []],
  ["bad pattern is reported", { pattern: "(" }, "x", [
    '(root): cannot check the pattern "(": it is not a valid regular expression; fix the ' +
    "tool's input schema",
  ]],
  ["minimum", { minimum: 1 }, 0, ["(root): must be at least 1, got 0"]],
  ["minimum equal ok", { minimum: 1 }, 1, []],
  ["maximum", { maximum: 1 }, 2, ["(root): must be at most 1, got 2"]],
  ["exclusiveMinimum number", { exclusiveMinimum: 1 }, 1, [
    "(root): must be greater than 1, got 1",
  ]],
  ["exclusiveMaximum number", { exclusiveMaximum: 1 }, 1, ["(root): must be less than 1, got 1"]],
  ["exclusiveMinimum draft-04", { minimum: 1, exclusiveMinimum: true }, 1, [
    "(root): must be greater than 1, got 1",
  ]],
  ["exclusiveMaximum draft-04", { maximum: 1, exclusiveMaximum: true }, 1, [
    "(root): must be less than 1, got 1",
  ]],
  ["multipleOf", { multipleOf: 0.5 }, 1.25, ["(root): must be a multiple of 0.5, got 1.25"]],
  ["multipleOf float ok", { multipleOf: 0.1 }, 0.3, []],
  ["items", { type: "array", items: { type: "integer" } }, [1, "2", 3], [
    "/1: expected integer, got string",
  ]],
  ["minItems", { minItems: 2 }, [1], ["(root): must have at least 2 items, got 1"]],
  ["maxItems", { maxItems: 1 }, [1, 2], ["(root): must have at most 1 items, got 2"]],
  ["uniqueItems", { uniqueItems: true }, [{ a: 1 }, 2, { a: 1 }], [
    "(root): items 0 and 2 are equal; items must be unique",
  ]],
  [
    "tuple via prefixItems",
    {
      prefixItems: [{ type: "string" }, { type: "number" }],
      items: false,
    },
    ["a", 1, true],
    ["(root): must have at most 2 items, got 3"],
  ],
  ["tuple via items array", { items: [{ type: "string" }], additionalItems: { type: "number" } }, [
    "a",
    "b",
  ], ["/1: expected number, got string"]],
  ["required", { type: "object", required: ["a", "b"] }, { a: 1 }, ["/b: is required but missing"]],
  [
    "properties nested",
    {
      type: "object",
      properties: { user: { type: "object", properties: { age: { type: "integer" } } } },
    },
    { user: { age: "x" } },
    ["/user/age: expected integer, got string"],
  ],
  [
    "additionalProperties false",
    {
      type: "object",
      properties: { a: {} },
      additionalProperties: false,
    },
    { a: 1, b: 2, c: 3 },
    ['(root): unexpected properties "b", "c" (allowed: a)'],
  ],
  [
    "additionalProperties schema",
    {
      type: "object",
      additionalProperties: { type: "string" },
    },
    { a: "x", b: 2 },
    ["/b: expected string, got integer"],
  ],
  [
    "patternProperties",
    {
      patternProperties: { "^n_": { type: "number" } },
      additionalProperties: false,
    },
    { n_a: 1, n_b: "x" },
    ["/n_b: expected number, got string"],
  ],
  ["min/maxProperties", { minProperties: 1, maxProperties: 1 }, {}, [
    "(root): must have at least 1 properties, got 0",
  ]],
  [
    "inherited names are not properties",
    {
      type: "object",
      properties: { a: { type: "string" } },
      additionalProperties: false,
    },
    { constructor: 1 },
    ['(root): unexpected property "constructor" (allowed: a)'],
  ],
  [
    "JSON pointer escaping",
    {
      properties: { "a/b": { type: "string" }, "c~d": { type: "string" } },
    },
    { "a/b": 1, "c~d": 2 },
    ["/a~1b: expected string, got integer", "/c~0d: expected string, got integer"],
  ],
  ["anyOf ok", { anyOf: [{ type: "string" }, { type: "number" }] }, 1, []],
  ["anyOf miss", { anyOf: [{ type: "string" }, { type: "number" }] }, true, [
    "(root): matches none of the allowed alternatives (1: (root): expected string, got boolean; " +
    "2: (root): expected number, got boolean)",
  ]],
  ["oneOf exactly one", { oneOf: [{ type: "integer" }, { type: "string" }] }, 1, []],
  ["oneOf two", { oneOf: [{ type: "integer" }, { type: "number" }] }, 1, [
    "(root): matches alternatives 1 and 2; it must match exactly one",
  ]],
  ["allOf", { allOf: [{ minimum: 2 }, { maximum: 0 }] }, 1, [
    "(root): must be at least 2, got 1",
    "(root): must be at most 0, got 1",
  ]],
  ["not", { not: { type: "string" } }, "x", ['(root): must not match the schema in "not"']],
  [
    "if/then",
    {
      if: { properties: { kind: { const: "n" } } },
      then: { required: ["n"] },
      else: { required: ["s"] },
    },
    { kind: "n" },
    ["/n: is required but missing"],
  ],
  [
    "if/else",
    {
      if: { properties: { kind: { const: "n" } } },
      then: { required: ["n"] },
      else: { required: ["s"] },
    },
    { kind: "x" },
    ["/s: is required but missing"],
  ],
  ["$ref accepts anything", { $ref: "#/$defs/x", $defs: { x: { type: "string" } } }, 5, []],
  ["keywords beside $ref are still checked", { $ref: "#/x", type: "string" }, 5, [
    "(root): expected string, got integer",
  ]],
  ["type failure skips the other keywords", { type: "string", minimum: 5 }, 1, [
    "(root): expected string, got integer",
  ]],
  ["non-object schema constrains nothing", "nonsense", 1, []],
];

Deno.test("validateJsonSchema() reports problems by JSON pointer", {
  permissions: "none",
}, async (t) => {
  for (const [name, schema, value, errors] of cases) {
    await t.step(name, () => {
      assert.deepEqual(validateJsonSchema(schema, value), errors);
    });
  }
});

Deno.test(
  "validateJsonSchema() bounds depth and error count",
  { permissions: "none" },
  async (t) => {
    await t.step("deep values stop at maxDepth", () => {
      let value: unknown = 1;
      for (let i = 0; i < 10; i++) value = [value];
      // Values deeper than the schema are not walked at all.
      const errors = validateJsonSchema({ items: { items: { items: {} } } }, value, {
        maxDepth: 3,
      });
      assert.deepEqual(errors, []);
      let schema: Record<string, unknown> = { type: "integer" };
      for (let i = 0; i < 10; i++) schema = { items: schema };
      assert.deepEqual(validateJsonSchema(schema, value, { maxDepth: 3 }), [
        "/0/0/0/0: nested deeper than 3 levels",
      ]);
    });
    await t.step("deep combinator chains stop too", () => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < 200; i++) schema = { allOf: [schema] };
      assert.deepEqual(validateJsonSchema(schema, 1), ["(root): nested deeper than 64 levels"]);
    });
    await t.step("at most maxErrors errors, then a count", () => {
      const value = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
      const errors = validateJsonSchema({ additionalProperties: { type: "string" } }, value, {
        maxErrors: 5,
      });
      assert.equal(errors.length, 6);
      assert.equal(errors[5], "… and 25 more");
    });
  },
);

Deno.test("validateJsonSchema() never throws on arbitrary JSON", { permissions: "none" }, () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (schema, value) => {
      const errors = validateJsonSchema(schema, value);
      assert.ok(Array.isArray(errors));
      assert.ok(errors.every((e) => typeof e === "string"));
    }),
    { numRuns: 300 },
  );
});
