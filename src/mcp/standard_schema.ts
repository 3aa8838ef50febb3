// This module is browser compatible.
/**
 * The Standard Schema v1 interface (`~standard`, which zod 4, valibot and
 * arktype implement), typed structurally so that no validator library is a
 * dependency, and the optional Standard JSON Schema converter
 * (`~standard.jsonSchema`, zod 4.2+ and arktype 2.1.28+ have it) that gives
 * a tool's `tools/list` entry its JSON Schema.
 *
 * The spec: https://standardschema.dev (`@standard-schema/spec` 1.1.0).
 *
 * @module
 */

import { isRecord, messageOf } from "../_values.ts";

/** One problem a validator found. */
export interface StandardSchemaIssue {
  /** What is wrong. */
  readonly message: string;
  /** Where: keys, or `{ key }` segments. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** What `validate` returns: the (possibly transformed) value, or the issues. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

/** The `~standard` properties of a Standard Schema. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** Always `1`. */
  readonly version: 1;
  /** The library, for example `"zod"`. */
  readonly vendor: string;
  /** Checks a value (possibly asynchronously). */
  readonly validate: (
    value: unknown,
    options?: { readonly libraryOptions?: Record<string, unknown> | undefined } | undefined,
  ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
  /** The input and output types, for inference only. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/**
 * A Standard Schema v1 validator: anything with a `~standard` property of
 * version 1 and a `validate` function.
 *
 * @typeParam Input What the validator accepts.
 * @typeParam Output What it gives back (after defaults and transforms).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The standard properties. */
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

/** The output type of a Standard Schema (what a tool handler gets). */
export type InferSchemaOutput<S extends StandardSchemaV1> = NonNullable<
  S["~standard"]["types"]
>["output"];

/** The input type of a Standard Schema. */
export type InferSchemaInput<S extends StandardSchemaV1> = NonNullable<
  S["~standard"]["types"]
>["input"];

/**
 * Tells whether a value is a Standard Schema v1 validator.
 *
 * @param value Anything.
 * @returns True when it has `~standard` with `version: 1` and a `validate` function.
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props: unknown = (value as Record<string, unknown>)["~standard"];
  return isRecord(props) && props.version === 1 && typeof props.validate === "function";
}

/**
 * The JSON Schema of a validator's input, from its Standard JSON Schema
 * converter (`~standard.jsonSchema.input({ target: "draft-2020-12" })`).
 *
 * @param schema The validator.
 * @returns The JSON Schema, or `undefined` when the validator has no
 * converter.
 * @throws {TypeError} When the converter throws (a type JSON Schema cannot
 * express, such as a date) or returns no object.
 */
export function jsonSchemaOf(schema: StandardSchemaV1): Record<string, unknown> | undefined {
  const props: Record<string, unknown> = { ...schema["~standard"] };
  const converter = props.jsonSchema;
  if (!isRecord(converter) || typeof converter.input !== "function") return undefined;
  let converted: unknown;
  try {
    converted = converter.input({ target: "draft-2020-12" });
  } catch (cause) {
    throw new TypeError(
      `Cannot derive a JSON Schema from the ${String(props.vendor)} validator: ${
        messageOf(cause)
      }; pass options.inputSchema`,
      { cause },
    );
  }
  if (!isRecord(converted)) {
    throw new TypeError(
      `Cannot derive a JSON Schema from the ${String(props.vendor)} validator: it gave no object`,
    );
  }
  return converted;
}

/** What {@linkcode validateWith} found. */
export type Validation =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problems: readonly string[] };

function pathText(path: unknown): string {
  if (!Array.isArray(path) || path.length === 0) return "(root)";
  return path.map((segment) => {
    const key = isRecord(segment) ? segment.key : segment;
    return `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
  }).join("");
}

/**
 * Runs a validator on a value and reads its answer defensively: a throw, a
 * rejection or an answer of neither shape is a problem, never a crash.
 *
 * @param schema The validator.
 * @param value The value to check.
 * @param maxProblems How many problems to list at most.
 * @returns The validated value, or the problems as `"<path>: <message>"` lines.
 */
export async function validateWith(
  schema: StandardSchemaV1,
  value: unknown,
  maxProblems = 20,
): Promise<Validation> {
  let result: unknown;
  try {
    result = await schema["~standard"].validate(value);
  } catch (error) {
    const why = messageOf(error);
    return { ok: false, problems: [`(root): the validator failed: ${why}`] };
  }
  if (!isRecord(result)) {
    return { ok: false, problems: ["(root): the validator returned no result object"] };
  }
  const issues = result.issues;
  if (issues === undefined || issues === null || issues === false) {
    return Object.hasOwn(result, "value")
      ? { ok: true, value: result.value }
      : { ok: false, problems: ["(root): the validator returned neither value nor issues"] };
  }
  if (!Array.isArray(issues)) {
    return { ok: false, problems: ["(root): the validator returned malformed issues"] };
  }
  const problems = issues.slice(0, maxProblems).map((issue: unknown) =>
    isRecord(issue) ? `${pathText(issue.path)}: ${String(issue.message)}` : "(root): invalid"
  );
  if (issues.length > maxProblems) problems.push(`… and ${issues.length - maxProblems} more`);
  if (problems.length === 0) problems.push("(root): invalid");
  return { ok: false, problems };
}
