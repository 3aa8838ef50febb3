// This module is browser compatible.
/**
 * The Claude Code CLI's stream-json protocol as types: every frame the CLI
 * writes and reads, the control requests both ways with their payloads, the
 * content blocks, the hook inputs and outputs, the MCP content and JSON-RPC
 * shapes of in-process tools, and the guards that narrow parsed JSON into
 * frames (by checks, never casts). Session events carry these frames; import
 * their types from here to switch on them.
 *
 * @example Narrow a parsed line
 * ```ts
 * import { classifyFrame, isSystemInit } from "@duplex/claude/protocol";
 * import assert from "node:assert/strict";
 *
 * const frame = classifyFrame(JSON.parse('{"type":"system","subtype":"init","session_id":"s1"}'));
 * assert.ok(isSystemInit(frame));
 * assert.equal(frame.session_id, "s1");
 * const later = classifyFrame({ type: "hologram", beam: 1 });
 * assert.equal(later.type, "unknown");
 * ```
 *
 * @module
 */

export type * from "./content.ts";
export type * from "./control.ts";
export type * from "./control_requests.ts";
export type * from "./messages.ts";
export type * from "./user_dialog.ts";
export type { HookFailurePolicy, HookResult } from "../hooks/hooks.ts";
export type * from "../hooks/hook_inputs.ts";
export type * from "../hooks/hook_outputs.ts";
export type * from "../hooks/session_hook_inputs.ts";
export type * from "../hooks/workspace_hook_inputs.ts";
export type {
  AudioContent,
  EmbeddedResourceContent,
  ImageContent,
  JsonSchema,
  McpContent,
  ResourceLinkContent,
  TextContent,
  ToolAnnotations,
  ToolInputSchema,
} from "../mcp/tool.ts";
export type {
  InferSchemaInput,
  InferSchemaOutput,
  StandardSchemaIssue,
  StandardSchemaProps,
  StandardSchemaResult,
  StandardSchemaV1,
} from "../mcp/standard_schema.ts";
export type {
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcResponse,
  JsonRpcSuccessResponse,
  McpHandleContext,
} from "../mcp/mcp_server.ts";
export {
  classifyFrame,
  isCanUseToolRequest,
  isControlFailure,
  isSystemFrame,
  isSystemInit,
} from "./guards.ts";
