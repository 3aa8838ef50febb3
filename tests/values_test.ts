import assert from "node:assert/strict";
import { describe, errorOf, isRecord, jsonEqual, messageOf } from "../src/_values.ts";

Deno.test("isRecord() accepts plain objects only", { permissions: "none" }, () => {
  assert.ok(isRecord({}));
  assert.ok(isRecord({ a: 1 }));
  assert.ok(!isRecord(null));
  assert.ok(!isRecord([]));
  assert.ok(!isRecord("x"));
  assert.ok(!isRecord(undefined));
});

Deno.test("jsonEqual() compares JSON values structurally", { permissions: "none" }, () => {
  assert.ok(jsonEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] }));
  assert.ok(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 }));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(!jsonEqual(1, "1"));
});

Deno.test("messageOf() is an error's message, or any other value as text", {
  permissions: "none",
}, () => {
  assert.equal(messageOf(new TypeError("bad")), "bad");
  assert.equal(messageOf("plain"), "plain");
  assert.equal(messageOf(42), "42");
  assert.equal(messageOf(undefined), "undefined");
});

Deno.test("describe() names a value without echoing it whole", { permissions: "none" }, () => {
  const cases: [unknown, string][] = [
    [null, "null"],
    [undefined, "undefined"],
    [[1], "an array"],
    [() => {}, "a function"],
    [Symbol("s"), "a symbol"],
    [{ a: 1 }, "an object"],
    ["", "an empty string"],
    ["abc", '"abc"'],
    ["x".repeat(50), JSON.stringify("x".repeat(40))],
    [5, "number 5"],
    [true, "boolean true"],
    [3n, "bigint 3"],
  ];
  for (const [value, expected] of cases) assert.equal(describe(value), expected);
});

Deno.test("errorOf() keeps an Error as it is and wraps anything else", {
  permissions: "none",
}, () => {
  const error = new TypeError("bad");
  assert.equal(errorOf(error), error);
  const wrapped = errorOf("disk full");
  assert.ok(wrapped instanceof Error);
  assert.equal(wrapped.message, "disk full");
  assert.equal(errorOf(undefined).message, "undefined");
});
