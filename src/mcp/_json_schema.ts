// This module is browser compatible.
/**
 * A small JSON Schema validator for tool inputs: the subset of keywords that
 * tool input schemas use in practice, with readable errors located by JSON
 * pointer (`/count: expected integer, got string`).
 *
 * Checked: `type` (a name or a list of names, `integer` included),
 * `nullable: true` (OpenAPI style), `enum`, `const`, `properties`, `required`,
 * `additionalProperties` (boolean or schema), `patternProperties`,
 * `minProperties`/`maxProperties`, `items` (a schema, or a list of schemas
 * for a tuple), `prefixItems`, `minItems`/`maxItems`, `uniqueItems`,
 * `minLength`/`maxLength` (in code points), `pattern` (Unicode regular
 * expression), `minimum`/`maximum`, `exclusiveMinimum`/`exclusiveMaximum`
 * (numbers, or the draft-04 booleans), `multipleOf`, `allOf`/`anyOf`/`oneOf`/
 * `not`, `if`/`then`/`else`, and boolean schemas.
 *
 * Not checked: `$ref` (and `$defs`/`definitions`) — a subschema that is a
 * reference accepts any value, though the keywords beside it are still
 * checked; `format`, `dependentRequired`, `dependentSchemas`,
 * `unevaluatedProperties`/`unevaluatedItems`, `contains`, `propertyNames`.
 * Unknown keywords are ignored, as JSON Schema says.
 *
 * Recursion is bounded (`maxDepth`, default 64 levels of value nesting) and
 * so is the number of errors reported (`maxErrors`, default 20).
 *
 * Why one file of ~440 lines: one recursive validator whose keyword checks
 * share the same walk, pointer and error list; split, each part would need
 * all of them.
 *
 * @module
 */

import { isRecord, jsonEqual } from "../_values.ts";

/** Options of {@linkcode validateJsonSchema}. */
export interface ValidateOptions {
  /**
   * How deep values and schemas may nest before checking stops with an error.
   *
   * @default {64}
   */
  maxDepth?: number;
  /**
   * How many errors to report at most; the rest are counted in a last line.
   *
   * @default {20}
   */
  maxErrors?: number;
}

interface Walk {
  errors: string[];
  maxDepth: number;
}

const TYPE_NAMES = new Set(["null", "boolean", "object", "array", "number", "integer", "string"]);

/**
 * Checks a value against a JSON Schema (the subset described in the module
 * doc).
 *
 * @param schema The schema: an object or a boolean.
 * @param value The value to check, as parsed from JSON.
 * @param options Limits.
 * @returns The problems found, each `"<JSON pointer>: <what is wrong>"` (the
 * root is written `(root)`); empty when the value is valid.
 */
export function validateJsonSchema(
  schema: unknown,
  value: unknown,
  options: ValidateOptions = {},
): string[] {
  const maxErrors = options.maxErrors ?? 20;
  const walk: Walk = { errors: [], maxDepth: options.maxDepth ?? 64 };
  check(walk, schema, value, "", 0);
  if (walk.errors.length <= maxErrors) return walk.errors;
  const shown = walk.errors.slice(0, maxErrors);
  shown.push(`… and ${walk.errors.length - maxErrors} more`);
  return shown;
}

/** Describes the JSON type of a value, telling integers apart from other numbers. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function where(path: string): string {
  return path === "" ? "(root)" : path;
}

function child(path: string, key: string | number): string {
  return `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function matchesType(name: string, value: unknown): boolean {
  switch (name) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "string":
      return typeof value === "string";
    default:
      return true; // an unknown type name constrains nothing
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function own(schema: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(schema, key) ? schema[key] : undefined;
}

function num(schema: Record<string, unknown>, key: string): number | undefined {
  const v = own(schema, key);
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function check(walk: Walk, schema: unknown, value: unknown, path: string, depth: number): void {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    walk.errors.push(`${where(path)}: no value is allowed here`);
    return;
  }
  if (!isRecord(schema)) return; // not a schema: constrains nothing
  if (depth > walk.maxDepth) {
    walk.errors.push(`${where(path)}: nested deeper than ${walk.maxDepth} levels`);
    return;
  }
  // `$ref` is not resolved: the reference itself accepts anything.
  if (value === null && own(schema, "nullable") === true) return;

  if (!checkType(walk, schema, value, path)) return;
  checkEnumConst(walk, schema, value, path);
  if (typeof value === "string") checkString(walk, schema, value, path);
  else if (typeof value === "number") checkNumber(walk, schema, value, path);
  else if (Array.isArray(value)) checkArray(walk, schema, value, path, depth);
  else if (isRecord(value)) checkObject(walk, schema, value, path, depth);
  checkCombinators(walk, schema, value, path, depth);
}

/** Checks `type`; returns false when it failed (the other keywords are then skipped). */
function checkType(
  walk: Walk,
  schema: Record<string, unknown>,
  value: unknown,
  path: string,
): boolean {
  const type = own(schema, "type");
  const names = typeof type === "string"
    ? [type]
    : Array.isArray(type)
    ? type.filter((t): t is string => typeof t === "string")
    : [];
  const known = names.filter((n) => TYPE_NAMES.has(n));
  if (known.length === 0 || known.some((n) => matchesType(n, value))) return true;
  const expected = known.length === 1 ? known[0] : `one of ${known.join(", ")}`;
  walk.errors.push(`${where(path)}: expected ${expected}, got ${jsonTypeOf(value)}`);
  return false;
}

function checkEnumConst(
  walk: Walk,
  schema: Record<string, unknown>,
  value: unknown,
  path: string,
): void {
  const choices = own(schema, "enum");
  if (Array.isArray(choices) && !choices.some((c) => jsonEqual(c, value))) {
    const list = choices.slice(0, 10).map(show).join(", ");
    walk.errors.push(
      `${where(path)}: must be one of ${list}${choices.length > 10 ? ", ..." : ""}; got ${
        show(value)
      }`,
    );
  }
  if (Object.hasOwn(schema, "const") && !jsonEqual(schema.const, value)) {
    walk.errors.push(`${where(path)}: must be ${show(schema.const)}; got ${show(value)}`);
  }
}

function checkString(
  walk: Walk,
  schema: Record<string, unknown>,
  value: string,
  path: string,
): void {
  const min = num(schema, "minLength");
  const max = num(schema, "maxLength");
  if (min !== undefined || max !== undefined) {
    let length = 0;
    for (const _ of value) length++;
    if (min !== undefined && length < min) {
      walk.errors.push(`${where(path)}: must be at least ${min} characters long, got ${length}`);
    }
    if (max !== undefined && length > max) {
      walk.errors.push(`${where(path)}: must be at most ${max} characters long, got ${length}`);
    }
  }
  const pattern = own(schema, "pattern");
  if (typeof pattern === "string") {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, "u");
    } catch {
      walk.errors.push(
        `${where(path)}: cannot check the pattern ${show(pattern)}: it is not a valid regular ` +
          `expression; fix the tool's input schema`,
      );
      return;
    }
    if (!regex.test(value)) {
      walk.errors.push(`${where(path)}: must match the pattern ${show(pattern)}`);
    }
  }
}

function checkNumber(
  walk: Walk,
  schema: Record<string, unknown>,
  value: number,
  path: string,
): void {
  const at = where(path);
  const minimum = num(schema, "minimum");
  const maximum = num(schema, "maximum");
  const exMin = own(schema, "exclusiveMinimum");
  const exMax = own(schema, "exclusiveMaximum");
  if (minimum !== undefined) {
    if (exMin === true ? value <= minimum : value < minimum) {
      walk.errors.push(
        `${at}: must be ${exMin === true ? "greater than" : "at least"} ${minimum}, got ${value}`,
      );
    }
  }
  if (maximum !== undefined) {
    if (exMax === true ? value >= maximum : value > maximum) {
      walk.errors.push(
        `${at}: must be ${exMax === true ? "less than" : "at most"} ${maximum}, got ${value}`,
      );
    }
  }
  if (typeof exMin === "number" && value <= exMin) {
    walk.errors.push(`${at}: must be greater than ${exMin}, got ${value}`);
  }
  if (typeof exMax === "number" && value >= exMax) {
    walk.errors.push(`${at}: must be less than ${exMax}, got ${value}`);
  }
  const multipleOf = num(schema, "multipleOf");
  if (multipleOf !== undefined && multipleOf > 0) {
    const quotient = value / multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) {
      walk.errors.push(`${at}: must be a multiple of ${multipleOf}, got ${value}`);
    }
  }
}

function checkArray(
  walk: Walk,
  schema: Record<string, unknown>,
  value: unknown[],
  path: string,
  depth: number,
): void {
  const at = where(path);
  const minItems = num(schema, "minItems");
  const maxItems = num(schema, "maxItems");
  if (minItems !== undefined && value.length < minItems) {
    walk.errors.push(`${at}: must have at least ${minItems} items, got ${value.length}`);
  }
  if (maxItems !== undefined && value.length > maxItems) {
    walk.errors.push(`${at}: must have at most ${maxItems} items, got ${value.length}`);
  }
  if (own(schema, "uniqueItems") === true) {
    for (let i = 1; i < value.length; i++) {
      const j = value.slice(0, i).findIndex((x) => jsonEqual(x, value[i]));
      if (j >= 0) {
        walk.errors.push(`${at}: items ${j} and ${i} are equal; items must be unique`);
        break;
      }
    }
  }
  const items = own(schema, "items");
  const prefix = own(schema, "prefixItems");
  const tuple = Array.isArray(prefix) ? prefix : Array.isArray(items) ? items : undefined;
  const rest = Array.isArray(items) ? own(schema, "additionalItems") : items;
  value.forEach((item, i) => {
    const itemSchema = tuple !== undefined && i < tuple.length ? tuple[i] : rest;
    if (itemSchema === false && tuple !== undefined) {
      walk.errors.push(`${at}: must have at most ${tuple.length} items, got ${value.length}`);
      return;
    }
    check(walk, itemSchema, item, child(path, i), depth + 1);
  });
}

function checkObject(
  walk: Walk,
  schema: Record<string, unknown>,
  value: Record<string, unknown>,
  path: string,
  depth: number,
): void {
  const at = where(path);
  const keys = Object.keys(value);
  const minProperties = num(schema, "minProperties");
  const maxProperties = num(schema, "maxProperties");
  if (minProperties !== undefined && keys.length < minProperties) {
    walk.errors.push(`${at}: must have at least ${minProperties} properties, got ${keys.length}`);
  }
  if (maxProperties !== undefined && keys.length > maxProperties) {
    walk.errors.push(`${at}: must have at most ${maxProperties} properties, got ${keys.length}`);
  }
  const required = own(schema, "required");
  if (Array.isArray(required)) {
    for (const name of required) {
      if (typeof name === "string" && !Object.hasOwn(value, name)) {
        walk.errors.push(`${child(path, name)}: is required but missing`);
      }
    }
  }
  const properties = isRecord(own(schema, "properties"))
    ? schema.properties as Record<string, unknown>
    : {};
  const patternProperties = isRecord(own(schema, "patternProperties"))
    ? Object.entries(schema.patternProperties as Record<string, unknown>).flatMap(([p, s]) => {
      try {
        return [[new RegExp(p, "u"), s] as const];
      } catch {
        return [];
      }
    })
    : [];
  const additional = own(schema, "additionalProperties");
  const extra: string[] = [];
  for (const key of keys) {
    let matched = false;
    if (Object.hasOwn(properties, key)) {
      matched = true;
      check(walk, properties[key], value[key], child(path, key), depth + 1);
    }
    for (const [regex, sub] of patternProperties) {
      if (!regex.test(key)) continue;
      matched = true;
      check(walk, sub, value[key], child(path, key), depth + 1);
    }
    if (matched) continue;
    if (additional === false) extra.push(key);
    else check(walk, additional, value[key], child(path, key), depth + 1);
  }
  if (extra.length > 0) {
    const allowed = Object.keys(properties);
    walk.errors.push(
      `${at}: unexpected ${extra.length === 1 ? "property" : "properties"} ${
        extra.map(show).join(", ")
      }${allowed.length > 0 ? ` (allowed: ${allowed.join(", ")})` : ""}`,
    );
  }
}

/** Errors of one alternative, relative to `path`, for a compact summary. */
function branchErrors(
  walk: Walk,
  schema: unknown,
  value: unknown,
  path: string,
  depth: number,
): string[] {
  const sub: Walk = { errors: [], maxDepth: walk.maxDepth };
  check(sub, schema, value, path, depth + 1);
  return sub.errors;
}

function summary(errors: string[][]): string {
  return errors
    .map((e, i) => `${i + 1}: ${e.slice(0, 2).join(", ")}${e.length > 2 ? ", ..." : ""}`)
    .join("; ");
}

function checkCombinators(
  walk: Walk,
  schema: Record<string, unknown>,
  value: unknown,
  path: string,
  depth: number,
): void {
  const at = where(path);
  const allOf = own(schema, "allOf");
  if (Array.isArray(allOf)) {
    for (const sub of allOf) check(walk, sub, value, path, depth + 1);
  }
  const anyOf = own(schema, "anyOf");
  if (Array.isArray(anyOf) && anyOf.length > 0) {
    const results = anyOf.map((sub) => branchErrors(walk, sub, value, path, depth));
    if (!results.some((e) => e.length === 0)) {
      walk.errors.push(`${at}: matches none of the allowed alternatives (${summary(results)})`);
    }
  }
  const oneOf = own(schema, "oneOf");
  if (Array.isArray(oneOf) && oneOf.length > 0) {
    const results = oneOf.map((sub) => branchErrors(walk, sub, value, path, depth));
    const passing = results.flatMap((e, i) => (e.length === 0 ? [i + 1] : []));
    if (passing.length === 0) {
      walk.errors.push(`${at}: matches none of the allowed alternatives (${summary(results)})`);
    } else if (passing.length > 1) {
      walk.errors.push(
        `${at}: matches alternatives ${passing.join(" and ")}; it must match exactly one`,
      );
    }
  }
  if (Object.hasOwn(schema, "not")) {
    if (branchErrors(walk, schema.not, value, path, depth).length === 0) {
      walk.errors.push(`${at}: must not match the schema in "not"`);
    }
  }
  if (Object.hasOwn(schema, "if")) {
    const ok = branchErrors(walk, schema.if, value, path, depth).length === 0;
    const next = ok ? own(schema, "then") : own(schema, "else");
    check(walk, next, value, path, depth + 1);
  }
}
