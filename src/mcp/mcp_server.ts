// This module is browser compatible.
/**
 * An in-process (SDK) MCP server: the host answers the CLI's MCP JSON-RPC
 * messages (carried by `mcp_message` control requests) itself, so tools run
 * in the host process with no MCP library and no extra process.
 *
 * Why one file of ~420 lines: one JSON-RPC server (the method table, its
 * handlers and their error shapes); about 110 lines are JSDoc.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import { validateJsonSchema } from "./_json_schema.ts";
import { validateWith, type Validation } from "./standard_schema.ts";
import {
  assertTool,
  type McpContent,
  type SdkMcpTool,
  type ToolInputSchema,
  type ToolResult,
} from "./tool.ts";

/** A JSON-RPC request id (MCP forbids `null` in requests; responses to unreadable requests carry it). */
export type JsonRpcId = string | number | null;

/** A successful JSON-RPC 2.0 response. */
export interface JsonRpcSuccessResponse {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The request's id. */
  id: JsonRpcId;
  /** The method's result. */
  result: Record<string, unknown>;
}

/** A failed JSON-RPC 2.0 response. */
export interface JsonRpcErrorResponse {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The request's id, or `null` when it could not be read. */
  id: JsonRpcId;
  /** What went wrong. */
  error: { code: number; message: string; data?: unknown };
}

/** A JSON-RPC 2.0 response. */
export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse;

/** JSON-RPC error codes the server uses. */
export const JSON_RPC_ERRORS = {
  /** The message is not a valid JSON-RPC 2.0 request. */
  invalidRequest: -32600,
  /** The method is not one the server has. */
  methodNotFound: -32601,
  /** The params are malformed, or `tools/call` names an unknown tool. */
  invalidParams: -32602,
  /** The server failed unexpectedly. */
  internalError: -32603,
} as const;

/** The MCP protocol versions the server speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
]);

/** Options of {@linkcode mcpServer}. */
export interface McpServerOptions {
  /**
   * The server's name: non-empty, without `"__"`. The model sees its tools
   * as `mcp__<name>__<tool>`.
   */
  name: string;
  /**
   * The version reported in `serverInfo`.
   *
   * @default {"1.0.0"}
   */
  version?: string;
  /** The tools, with unique names. */
  tools: readonly SdkMcpTool[];
  /** Instructions for the model, returned by `initialize`. */
  instructions?: string;
}

/** What {@linkcode SdkMcpServer.handle} gets besides the message. */
export interface McpHandleContext {
  /** Aborts the handler of a `tools/call` (with the per-call cancellations of the CLI). */
  readonly signal: AbortSignal;
}

/** An in-process MCP server, made by {@linkcode mcpServer}. */
export interface SdkMcpServer {
  /** Always `"sdk"`: the server runs in the host and is reached through the control protocol. */
  readonly type: "sdk";
  /** The server's name. */
  readonly name: string;
  /** The version reported in `serverInfo`. */
  readonly version: string;
  /** The tools. */
  readonly tools: readonly SdkMcpTool[];
  /** Instructions for the model, if any. */
  readonly instructions: string | undefined;
  /**
   * Answers one MCP JSON-RPC message. Never throws and never rejects.
   *
   * - Requests get a response: `initialize`, `ping`, `tools/list`,
   *   `tools/call`; any other method gets error -32601, a malformed message
   *   -32600 (with the request id echoed when it can be read).
   * - Notifications (no `id`) get `undefined`. `notifications/cancelled`
   *   aborts the signal of the `tools/call` it names.
   * - `tools/call` checks the arguments against the tool's JSON Schema, or
   *   with its Standard Schema validator (whose output the handler gets); a
   *   mismatch, a handler throw or an invalid handler return is a result with
   *   `isError: true` that the model sees. An unknown tool is error -32602
   *   (what the MCP specification and the current MCP TypeScript SDK do).
   *
   * @param message The JSON-RPC message, as parsed.
   * @param context `signal` aborts running tool handlers.
   * @returns The response, or `undefined` for notifications and responses.
   */
  handle(message: unknown, context: McpHandleContext): Promise<JsonRpcResponse | undefined>;
}

function rpcError(id: JsonRpcId, code: number, message: string): JsonRpcErrorResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/* Not messageOf(): an Error without a message is named by its name. */
function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

function errorResult(text: string): ToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** Checks a handler's return value and turns it into a `CallToolResult`. */
function toResult(name: string, value: unknown): ToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  const bad = (why: string): ToolResult =>
    errorResult(`Tool ${name} returned an invalid result: ${why}`);
  if (!isRecord(value)) {
    return bad("expected a string or an object with a content array");
  }
  if (!Array.isArray(value.content)) return bad("content must be an array of content blocks");
  const index = value.content.findIndex((b) => !isRecord(b) || typeof b.type !== "string");
  if (index >= 0) return bad(`content[${index}] must be an object with a string type`);
  if (value.isError !== undefined && typeof value.isError !== "boolean") {
    return bad("isError must be a boolean");
  }
  if (value.structuredContent !== undefined && !isRecord(value.structuredContent)) {
    return bad("structuredContent must be an object");
  }
  const result: ToolResult = { content: value.content as McpContent[] };
  if (value.isError === true) result.isError = true;
  if (value.structuredContent !== undefined) {
    result.structuredContent = value.structuredContent as Record<string, unknown>;
  }
  if (isRecord(value._meta)) result._meta = value._meta;
  return result;
}

function checkJson(schema: Readonly<ToolInputSchema>, input: Record<string, unknown>): Validation {
  const problems = validateJsonSchema(schema, input);
  return problems.length === 0 ? { ok: true, value: input } : { ok: false, problems };
}

function idKey(id: string | number): string {
  return `${typeof id}:${id}`;
}

class InProcessMcpServer implements SdkMcpServer {
  readonly type = "sdk" as const;
  readonly name: string;
  readonly version: string;
  readonly tools: readonly SdkMcpTool[];
  readonly instructions: string | undefined;
  #byName: Map<string, SdkMcpTool>;
  #running = new Map<string, AbortController>();

  constructor(options: McpServerOptions) {
    this.name = options.name;
    this.version = options.version ?? "1.0.0";
    this.tools = Object.freeze([...options.tools]);
    this.instructions = options.instructions;
    this.#byName = new Map(this.tools.map((t) => [t.name, t]));
  }

  async handle(message: unknown, context: McpHandleContext): Promise<JsonRpcResponse | undefined> {
    if (Array.isArray(message)) {
      return rpcError(null, JSON_RPC_ERRORS.invalidRequest, "Batch messages are not supported");
    }
    if (!isRecord(message)) {
      return rpcError(null, JSON_RPC_ERRORS.invalidRequest, "Invalid request: not an object");
    }
    const rawId = message.id;
    const hasId = Object.hasOwn(message, "id") && rawId !== undefined;
    const id: JsonRpcId = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
    const invalid = (why: string): JsonRpcErrorResponse =>
      rpcError(id, JSON_RPC_ERRORS.invalidRequest, `Invalid request: ${why}`);
    if (message.jsonrpc !== "2.0") return invalid('jsonrpc must be "2.0"');
    if (!Object.hasOwn(message, "method")) {
      // A response (to a request we never send): nothing to answer.
      if (hasId && (Object.hasOwn(message, "result") || Object.hasOwn(message, "error"))) {
        return undefined;
      }
      return invalid("method is missing");
    }
    if (typeof message.method !== "string") return invalid("method must be a string");
    const params = message.params;
    if (!hasId) {
      // A notification: never answered, even when malformed.
      this.#notify(message.method, isRecord(params) ? params : undefined);
      return undefined;
    }
    if (id === null) return invalid("id must be a string or a number");
    if (params !== undefined && !isRecord(params)) return invalid("params must be an object");
    try {
      return await this.#request(id, message.method, params ?? {}, context);
    } catch (error) {
      return rpcError(id, JSON_RPC_ERRORS.internalError, `Internal error: ${errorText(error)}`);
    }
  }

  #notify(method: string, params: Record<string, unknown> | undefined): void {
    if (method !== "notifications/cancelled" || params === undefined) return;
    const requestId = params.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const reason = typeof params.reason === "string" ? params.reason : "Cancelled by the client";
    this.#running.get(idKey(requestId))?.abort(
      new DOMException(`The tool call was cancelled: ${reason}`, "AbortError"),
    );
  }

  #request(
    id: string | number,
    method: string,
    params: Record<string, unknown>,
    context: McpHandleContext,
  ): Promise<JsonRpcResponse> | JsonRpcResponse {
    switch (method) {
      case "initialize":
        return { jsonrpc: "2.0", id, result: this.#initialize(params) };
      case "ping":
        return { jsonrpc: "2.0", id, result: {} };
      case "tools/list":
        return { jsonrpc: "2.0", id, result: { tools: this.tools.map(describeTool) } };
      case "tools/call":
        return this.#call(id, params, context);
      default:
        return rpcError(id, JSON_RPC_ERRORS.methodNotFound, `Method not found: ${method}`);
    }
  }

  #initialize(params: Record<string, unknown>): Record<string, unknown> {
    const asked = params.protocolVersion;
    const protocolVersion = typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
      ? asked
      : SUPPORTED_PROTOCOL_VERSIONS[0];
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: this.name, version: this.version },
    };
    if (this.instructions !== undefined) result.instructions = this.instructions;
    return result;
  }

  async #call(
    id: string | number,
    params: Record<string, unknown>,
    context: McpHandleContext,
  ): Promise<JsonRpcResponse> {
    const name = params.name;
    if (typeof name !== "string") {
      return rpcError(id, JSON_RPC_ERRORS.invalidParams, "Invalid params: name must be a string");
    }
    const tool = this.#byName.get(name);
    if (tool === undefined) {
      return rpcError(id, JSON_RPC_ERRORS.invalidParams, `Unknown tool: ${name}`);
    }
    const key = idKey(id);
    if (this.#running.has(key)) {
      return rpcError(
        id,
        JSON_RPC_ERRORS.invalidRequest,
        `Invalid request: id ${JSON.stringify(id)} is already in use by a running call`,
      );
    }
    const result = await this.#run(tool, key, params, context.signal);
    return { jsonrpc: "2.0", id, result: { ...result } };
  }

  async #run(
    tool: SdkMcpTool,
    key: string,
    params: Record<string, unknown>,
    outer: AbortSignal,
  ): Promise<ToolResult> {
    const raw = params.arguments ?? {};
    if (!isRecord(raw)) {
      return errorResult(`Invalid input for tool ${tool.name}: arguments must be an object`);
    }
    const checked = tool.inputValidator === undefined
      ? checkJson(tool.inputSchema, raw)
      : await validateWith(tool.inputValidator, raw);
    if (!checked.ok) {
      return errorResult(
        `Invalid input for tool ${tool.name}:\n${checked.problems.map((p) => `- ${p}`).join("\n")}`,
      );
    }
    // A validator's output (defaults applied, values transformed) is what the handler gets.
    const input = checked.value as Record<string, unknown>;
    if (outer.aborted) {
      return errorResult(`Tool ${tool.name} was not run: ${errorText(outer.reason)}`);
    }
    const meta = params._meta;
    const toolUseId = isRecord(meta) && typeof meta["claudecode/toolUseId"] === "string"
      ? meta["claudecode/toolUseId"]
      : undefined;
    const cancel = new AbortController();
    this.#running.set(key, cancel);
    const signal = AbortSignal.any([outer, cancel.signal]);
    try {
      const value = await tool.handler(
        input,
        toolUseId === undefined ? { signal } : { signal, toolUseId },
      );
      return toResult(tool.name, value);
    } catch (error) {
      return errorResult(errorText(error));
    } finally {
      this.#running.delete(key);
    }
  }
}

function describeTool(tool: SdkMcpTool): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  };
  if (tool.annotations !== undefined) entry.annotations = tool.annotations;
  return entry;
}

/**
 * Makes an in-process MCP server from tools. Hand it to the session (the
 * session declares it to the CLI and routes the CLI's `mcp_message` requests
 * to {@linkcode SdkMcpServer.handle}).
 *
 * @param options `name`, `tools`, and optionally `version` and `instructions`.
 * @returns The server.
 * @throws {TypeError} When the name is empty or contains `"__"`, a tool is
 * invalid, or two tools share a name.
 *
 * @example Answer the CLI's MCP messages
 * ```ts
 * import { mcpServer, tool } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const server = mcpServer({
 *   name: "calc",
 *   tools: [
 *     tool("add", "Adds two numbers", {
 *       type: "object",
 *       properties: { a: { type: "number" }, b: { type: "number" } },
 *       required: ["a", "b"],
 *     }, ({ a, b }) => `${Number(a) + Number(b)}`),
 *   ],
 * });
 * const signal = new AbortController().signal;
 * const ok = await server.handle({
 *   jsonrpc: "2.0",
 *   id: 1,
 *   method: "tools/call",
 *   params: { name: "add", arguments: { a: 1, b: 2 } },
 * }, { signal });
 * assert.deepEqual(ok, { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "3" }] } });
 *
 * const bad = await server.handle({
 *   jsonrpc: "2.0",
 *   id: 2,
 *   method: "tools/call",
 *   params: { name: "add", arguments: { a: "one" } },
 * }, { signal });
 * assert.deepEqual(bad, {
 *   jsonrpc: "2.0",
 *   id: 2,
 *   result: {
 *     content: [{
 *       type: "text",
 *       text: "Invalid input for tool add:\n- /b: is required but missing\n- /a: expected number, got string",
 *     }],
 *     isError: true,
 *   },
 * });
 * ```
 */
export function mcpServer(options: McpServerOptions): SdkMcpServer {
  if (!isRecord(options)) throw new TypeError("Cannot make the MCP server: options are missing");
  const { name, version, tools, instructions } = options;
  if (typeof name !== "string" || name === "" || name.includes("__")) {
    throw new TypeError(
      `Cannot make the MCP server ${
        JSON.stringify(name)
      }: the name must be a non-empty string without "__"`,
    );
  }
  if (version !== undefined && typeof version !== "string") {
    throw new TypeError(`Cannot make the MCP server ${name}: version must be a string`);
  }
  if (instructions !== undefined && typeof instructions !== "string") {
    throw new TypeError(`Cannot make the MCP server ${name}: instructions must be a string`);
  }
  if (!Array.isArray(tools)) {
    throw new TypeError(`Cannot make the MCP server ${name}: tools must be an array of tool()s`);
  }
  const seen = new Set<string>();
  for (const t of tools) {
    assertTool(t);
    if (seen.has(t.name)) {
      throw new TypeError(
        `Cannot make the MCP server ${name}: two tools are named ${t.name}; names must be unique`,
      );
    }
    seen.add(t.name);
  }
  return new InProcessMcpServer(options);
}
