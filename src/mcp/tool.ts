// This module is browser compatible.
/**
 * Tools of an in-process (SDK) MCP server: a name, a description, a JSON
 * Schema for the input and a handler that runs in the host process when the
 * model calls `mcp__<server>__<tool>`.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import {
  type InferSchemaOutput,
  isStandardSchema,
  jsonSchemaOf,
  type StandardSchemaV1,
} from "./standard_schema.ts";

/** A JSON Schema (object form), as used for tool inputs. */
export type JsonSchema = Record<string, unknown>;

/** The JSON Schema of a tool's input: MCP requires an object schema. */
export interface ToolInputSchema {
  /** Always `"object"`. */
  type: "object";
  /** The input's properties, by name. */
  properties?: Record<string, JsonSchema | boolean>;
  /** The property names that must be present. */
  required?: string[];
  /** Whether (or how) properties not listed in `properties` are allowed. */
  additionalProperties?: boolean | JsonSchema;
  /** Any other JSON Schema keyword. */
  [keyword: string]: unknown;
}

/** Text for the model. */
export interface TextContent {
  /** Always `"text"`. */
  type: "text";
  /** The text. */
  text: string;
  /** MCP content annotations (audience, priority). */
  annotations?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** An image, base64-encoded. */
export interface ImageContent {
  /** Always `"image"`. */
  type: "image";
  /** The base64-encoded bytes. */
  data: string;
  /** For example `"image/png"`. */
  mimeType: string;
  /** MCP content annotations. */
  annotations?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** Audio, base64-encoded. */
export interface AudioContent {
  /** Always `"audio"`. */
  type: "audio";
  /** The base64-encoded bytes. */
  data: string;
  /** For example `"audio/wav"`. */
  mimeType: string;
  /** MCP content annotations. */
  annotations?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** A link to a resource (the CLI shows the model `[Resource link: <name>] <uri>`). */
export interface ResourceLinkContent {
  /** Always `"resource_link"`. */
  type: "resource_link";
  /** The resource's URI. */
  uri: string;
  /** The resource's name. */
  name: string;
  /** A human-readable title. */
  title?: string;
  /** What the resource is. */
  description?: string;
  /** Its media type. */
  mimeType?: string;
  /** MCP content annotations. */
  annotations?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** A resource embedded in the result, as text or base64 bytes. */
export interface EmbeddedResourceContent {
  /** Always `"resource"`. */
  type: "resource";
  /** The resource. */
  resource:
    | { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
    | { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };
  /** MCP content annotations. */
  annotations?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** One block of a tool result. */
export type McpContent =
  | TextContent
  | ImageContent
  | AudioContent
  | ResourceLinkContent
  | EmbeddedResourceContent;

/**
 * What a tool returns (MCP `CallToolResult`).
 *
 * Claude Code 2.1.332 shows the model `JSON.stringify(structuredContent)`
 * INSTEAD of `content` when `structuredContent` is present; without it the
 * model sees the content blocks.
 */
export interface ToolResult {
  /** The result's blocks. */
  content: McpContent[];
  /** Whether the tool failed: the model sees the content as an error. */
  isError?: boolean;
  /** A JSON object with the result, for clients that read structured output. */
  structuredContent?: Record<string, unknown>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
}

/** What a tool handler gets besides its input. */
export interface ToolContext {
  /**
   * Aborted when the CLI cancels the call (an interrupt sends MCP
   * `notifications/cancelled`) or when the host stops serving (session
   * closed). Pass it on to `fetch` and the like.
   */
  readonly signal: AbortSignal;
  /** The `tool_use` block id of the call, when the CLI sent one. */
  readonly toolUseId?: string;
}

/**
 * Runs a tool. A returned string is one text block. A throw or rejection
 * becomes an error result (`isError: true`) whose text is the error's message.
 *
 * @typeParam Input What the handler gets: the arguments as checked against
 * the JSON Schema, or a Standard Schema validator's output.
 */
export type ToolHandler<Input = Record<string, unknown>> = (
  input: Input,
  context: ToolContext,
) => ToolResult | string | Promise<ToolResult | string>;

/** MCP tool annotations: hints for the client, not guarantees. */
export interface ToolAnnotations {
  /** A human-readable title. */
  title?: string;
  /** The tool does not change its environment. */
  readOnlyHint?: boolean;
  /** The tool may destroy or overwrite (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same input has no further effect. */
  idempotentHint?: boolean;
  /** The tool reaches an open world (the web, say) rather than a closed domain. */
  openWorldHint?: boolean;
  /** Any other annotation. */
  [hint: string]: unknown;
}

/** Options of {@linkcode tool}. */
export interface ToolOptions {
  /**
   * Hints listed in `tools/list`. Claude Code 2.1.332 still asks for
   * permission (`can_use_tool`) before a `readOnlyHint` tool runs.
   */
  annotations?: ToolAnnotations;
  /**
   * With a Standard Schema validator: the JSON Schema listed in
   * `tools/list` (the model reads it). Without it, the validator's Standard
   * JSON Schema converter (`~standard.jsonSchema`) must give one. Ignored
   * when the third argument is a JSON Schema.
   */
  inputSchema?: ToolInputSchema;
}

/** A tool of an in-process MCP server, made by {@linkcode tool}. */
export interface SdkMcpTool {
  /** The tool's name; the model calls it as `mcp__<server>__<name>`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The JSON Schema listed in `tools/list` (and, without a validator, checked before the handler runs). */
  readonly inputSchema: Readonly<ToolInputSchema>;
  /** The Standard Schema validator inputs are checked with instead, when the tool has one. */
  readonly inputValidator?: StandardSchemaV1 | undefined;
  /** Hints for the client, if any. */
  readonly annotations: Readonly<ToolAnnotations> | undefined;
  /**
   * The code that runs the tool (it gets the checked input, or the
   * validator's output).
   *
   * @param input The input.
   * @param context The call's signal and tool use id.
   * @returns The result.
   */
  handler(
    input: Record<string, unknown>,
    context: ToolContext,
  ): ToolResult | string | Promise<ToolResult | string>;
}

/** What a tool name must look like (MCP and the Anthropic API agree on this set). */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

/** Copies a JSON value, or throws a TypeError naming `what`. */
export function copyJson<T>(value: T, what: string): T {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError("not JSON");
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new TypeError(`Cannot use ${what}: it is not JSON-serializable`, { cause });
  }
}

/**
 * Checks the parts of a tool and throws a TypeError for the first bad one.
 *
 * @param value A would-be tool.
 * @returns Nothing; throws when the tool is not valid.
 */
export function assertTool(value: unknown): asserts value is SdkMcpTool {
  if (!isRecord(value)) throw new TypeError("Cannot use the tool: expected an object from tool()");
  const { name, description, inputSchema, handler, annotations, inputValidator } = value;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Cannot use the tool name ${
        JSON.stringify(name)
      }: it must be 1 to 64 letters, digits, "_" or "-"`,
    );
  }
  if (typeof description !== "string") {
    throw new TypeError(`Cannot use the tool ${name}: description must be a string`);
  }
  if (!isRecord(inputSchema) || inputSchema.type !== "object") {
    throw new TypeError(
      `Cannot use the tool ${name}: inputSchema must be a JSON Schema object with type "object"`,
    );
  }
  if (typeof handler !== "function") {
    throw new TypeError(`Cannot use the tool ${name}: handler must be a function`);
  }
  if (annotations !== undefined && !isRecord(annotations)) {
    throw new TypeError(`Cannot use the tool ${name}: annotations must be an object`);
  }
  if (inputValidator !== undefined && !isStandardSchema(inputValidator)) {
    throw new TypeError(`Cannot use the tool ${name}: inputValidator must be a Standard Schema`);
  }
}

/**
 * Defines a tool for {@linkcode mcpServer}, its input described by a JSON
 * Schema or by a Standard Schema validator (zod 4, valibot, arktype, …).
 *
 * - JSON Schema: the input is checked against it before `handler` runs (the
 *   CLI does not check it). `$ref` is not resolved (a referenced subschema
 *   accepts anything).
 * - Standard Schema: `handler` gets the validator's output, typed by it.
 *   `tools/list` still needs a JSON Schema: `options.inputSchema`, or else
 *   the validator's `~standard.jsonSchema` converter (zod 4.2+ has one); a
 *   validator with neither is a TypeError here.
 *
 * Either way a mismatch reaches the model as an error result listing the
 * problems (`- <path>: <message>`), so it can correct its call.
 *
 * @typeParam S The validator's type, when a validator describes the input.
 * @param name The tool's name: 1 to 64 letters, digits, `_` or `-`. The model
 * sees it as `mcp__<server>__<name>`.
 * @param description What the tool does, for the model.
 * @param inputSchema A JSON Schema object (`type: "object"`), copied; or a
 * Standard Schema validator.
 * @param handler Runs the tool; returns a {@linkcode ToolResult} or a string.
 * @param options `annotations` (hints such as `readOnlyHint`); `inputSchema`
 * (the JSON Schema of a validator's input).
 * @returns The tool, frozen.
 * @throws {TypeError} When a part is invalid (name, schema, handler), or a
 * validator comes without a JSON Schema.
 *
 * @example A tool that adds two numbers
 * ```ts
 * import { tool } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const add = tool(
 *   "add",
 *   "Adds two numbers",
 *   { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
 *   ({ a, b }) => `${Number(a) + Number(b)}`,
 *   { annotations: { readOnlyHint: true } },
 * );
 * assert.equal(add.name, "add");
 * ```
 *
 * @example A tool described by a Standard Schema validator
 * ```ts
 * import { tool } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * // Any Standard Schema v1 validator (here a hand-made one; zod 4 works as is).
 * const point = {
 *   "~standard": {
 *     version: 1 as const,
 *     vendor: "example",
 *     validate: (value: unknown) =>
 *       typeof value === "object" && value !== null && typeof (value as { x?: unknown }).x === "number"
 *         ? { value: value as { x: number } }
 *         : { issues: [{ message: "expected a number", path: ["x"] }] },
 *     types: undefined as unknown as { input: { x: number }; output: { x: number } },
 *   },
 * };
 * const double = tool("double", "Doubles x", point, ({ x }) => `${x * 2}`, {
 *   inputSchema: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
 * });
 * assert.equal(double.inputValidator, point);
 * assert.deepEqual(double.inputSchema.required, ["x"]);
 * ```
 */
export function tool<S extends StandardSchemaV1>(
  name: string,
  description: string,
  inputSchema: S,
  handler: ToolHandler<InferSchemaOutput<S>>,
  options?: ToolOptions,
): SdkMcpTool;
/**
 * Defines a tool for {@linkcode mcpServer} whose input a JSON Schema
 * describes: the input is checked against it before `handler` runs, and a
 * mismatch reaches the model as an error result listing the problems.
 *
 * @param name The tool's name: 1 to 64 letters, digits, `_` or `-`.
 * @param description What the tool does, for the model.
 * @param inputSchema A JSON Schema object (`type: "object"`); it is copied.
 * @param handler Runs the tool; returns a {@linkcode ToolResult} or a string.
 * @param options `annotations` (hints such as `readOnlyHint`).
 * @returns The tool, frozen.
 * @throws {TypeError} When a part is invalid (name, schema, handler).
 *
 * @example A tool whose input a JSON Schema describes
 * ```ts
 * import { tool } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const greet = tool("greet", "Greets", { type: "object", properties: { who: { type: "string" } } }, ({ who }) => `Hi ${who}`);
 * assert.equal(greet.inputValidator, undefined);
 * ```
 */
export function tool(
  name: string,
  description: string,
  inputSchema: ToolInputSchema,
  handler: ToolHandler,
  options?: ToolOptions,
): SdkMcpTool;
export function tool(
  name: string,
  description: string,
  inputSchema: ToolInputSchema | StandardSchemaV1,
  handler: ToolHandler<never>,
  options: ToolOptions = {},
): SdkMcpTool {
  const validator = isStandardSchema(inputSchema) ? inputSchema : undefined;
  const jsonSchema = validator === undefined
    ? inputSchema
    : options.inputSchema ?? jsonSchemaOf(validator);
  if (validator !== undefined && jsonSchema === undefined) {
    throw new TypeError(
      `Cannot use the tool ${name}: its validator has no JSON Schema converter (~standard.jsonSchema); pass options.inputSchema`,
    );
  }
  const candidate = {
    name,
    description,
    inputSchema: jsonSchema,
    inputValidator: validator,
    handler,
    annotations: options.annotations,
  };
  assertTool(candidate);
  const schema = Object.freeze(copyJson(candidate.inputSchema, `the input schema of tool ${name}`));
  const annotations = options.annotations === undefined
    ? undefined
    : Object.freeze(copyJson(options.annotations, `the annotations of tool ${name}`));
  return Object.freeze({
    name,
    description,
    inputSchema: schema,
    inputValidator: validator,
    annotations,
    handler: candidate.handler,
  });
}
