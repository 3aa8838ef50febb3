// This module is browser compatible.
/**
 * Drive one long-lived Claude Code CLI (`claude`) process across many turns
 * over its stream-json duplex protocol: typed events you iterate with
 * `for await`, tool permissions answered by code or by a person later,
 * cancellation with `AbortSignal`, and bounded fan-out to many subscribers.
 *
 * This entry point is the Web-standard core: it runs anywhere. Pair it with a
 * transport: `@duplex/claude/subprocess` spawns `claude` (Deno), and
 * `@duplex/claude/testing` has scripted and replay transports.
 *
 * @example A turn against a scripted CLI
 * ```ts
 * import { DuplexSession } from "@duplex/claude";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ echo: true });
 * await using session = await DuplexSession.start({ transport: cli.transport });
 * const turn = await session.send("Say hi.");
 * assert.equal(turn.result.text, "Echo: Say hi.");
 * assert.equal(turn.result.isError, false);
 * ```
 *
 * @module
 */

export { DuplexSession } from "./src/session/duplex_session.ts";
export type {
  DuplexSessionOptions,
  InterruptReceipt,
  SendOptions,
  SubscribeOptions,
  Turn,
  WaitOptions,
} from "./src/session/session_options.ts";
export type { ControlRequestOptions } from "./src/session/_control_channel.ts";
export { readSessionInfo, type SessionInfo } from "./src/session/session_info.ts";
export type {
  ElicitationHandler,
  ElicitationRequest,
  ElicitationResult,
} from "./src/session/elicitation.ts";
export {
  type AsyncHookOutput,
  type ContextSpecificOutput,
  HOOK_EVENTS,
  type HookCallback,
  type HookContext,
  type HookEvent,
  type HookInputBase,
  type HookInputs,
  type HookMatcher,
  type HookOutput,
  type HookRegistry,
  type HooksOptions,
  type PreToolUseSpecificOutput,
  registerHooks,
} from "./src/hooks/hooks.ts";
export { readTurnResult, type TurnResult } from "./src/session/turn_result.ts";
export {
  isUsable,
  type SessionState,
  type SessionStateEvent,
  transition,
} from "./src/session/session_state.ts";
export type {
  DiagnosticEvent,
  ExitEvent,
  ExitStatus,
  LaggedEvent,
  PermissionRequestEvent,
  PermissionResolvedEvent,
  SessionEvent,
  StderrEvent,
} from "./src/session/events.ts";
export {
  allow,
  type AllowDecision,
  defer,
  type DeferDecision,
  deny,
  type DenyDecision,
  type FinalPermissionDecision,
  type PermissionDecision,
  type PermissionHandler,
  type PermissionRequest,
} from "./src/permissions/permission.ts";
export {
  type OverflowPolicy,
  Subscription,
  type SubscriptionOptions,
} from "./src/subscriptions/subscription.ts";
export {
  describeExit,
  DuplexError,
  type DuplexErrorKind,
  type DuplexErrorOptions,
  isDuplexError,
  type TransportExit,
} from "./src/errors.ts";
export type {
  Transport,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "./src/transport/transport.ts";
export {
  type DecodeDiagnostic,
  DEFAULT_MAX_LINE_BYTES,
  FrameDecoder,
  type FrameDecoderOptions,
} from "./src/codec/frame_decoder.ts";
export {
  NdjsonDecodeStream,
  type NdjsonDecodeStreamOptions,
} from "./src/codec/ndjson_decode_stream.ts";
export { encodeLine, NdjsonEncodeStream } from "./src/codec/ndjson_encode_stream.ts";
export { classifyFrame, isControlFailure, isRecord, isSystemInit } from "./src/protocol/guards.ts";
export {
  type AudioContent,
  type EmbeddedResourceContent,
  type ImageContent,
  type JsonSchema,
  type McpContent,
  type ResourceLinkContent,
  type SdkMcpTool,
  type TextContent,
  tool,
  type ToolAnnotations,
  type ToolContext,
  type ToolHandler,
  type ToolInputSchema,
  type ToolOptions,
  type ToolResult,
} from "./src/mcp/tool.ts";
export {
  type JsonRpcErrorResponse,
  type JsonRpcId,
  type JsonRpcResponse,
  type JsonRpcSuccessResponse,
  type McpHandleContext,
  mcpServer,
  type McpServerOptions,
  type SdkMcpServer,
} from "./src/mcp/mcp_server.ts";
export type * from "./src/protocol/content.ts";
export type * from "./src/protocol/control.ts";
export type * from "./src/protocol/messages.ts";
export type * from "./src/protocol/control_requests.ts";
