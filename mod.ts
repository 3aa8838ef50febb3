// This module is browser compatible.
/**
 * Drive one long-lived Claude Code CLI (`claude`) process across many turns
 * over its stream-json duplex protocol: typed events you iterate with
 * `for await`, tool permissions answered by code or by a person later,
 * cancellation with `AbortSignal`, and bounded fan-out to many subscribers.
 *
 * This entry point is the Web-standard core: it runs anywhere. Pair it with a
 * transport: `@duplex/claude/subprocess` spawns `claude` (Deno),
 * `@duplex/claude/remote` drives one a relay runs elsewhere, and
 * `@duplex/claude/testing` has scripted and replay transports. The CLI's frame
 * types (what events carry) are in `@duplex/claude/protocol`, the shapes of
 * `@opentelemetry/api` the `telemetry` option takes in
 * `@duplex/claude/telemetry`.
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
export { type Reply, SessionControls } from "./src/session/session_controls.ts";
export { SessionHandshake } from "./src/session/session_handshake.ts";
export type {
  ControlRequestOptions,
  DuplexSessionOptions,
  InterruptOptions,
  InterruptReceipt,
  ReloadPluginsOptions,
  SendOptions,
  SubscribeOptions,
  SystemPromptCustom,
  SystemPromptPreset,
  WaitOptions,
} from "./src/session/session_options.ts";
export type { Turn, TurnModelUsage, TurnResult, TurnTokens } from "./src/session/turn.ts";
export type {
  UserDialogHandler,
  UserDialogRequest,
  UserDialogResult,
} from "./src/protocol/user_dialog.ts";
export type { MessageOrigin } from "./src/protocol/messages.ts";
export type { PluginConfig } from "./src/protocol/control_requests.ts";
export type {
  McpExternalServerConfig,
  McpRemoteServerConfig,
  McpServers,
  McpSetServersResult,
  McpStdioServerConfig,
} from "./src/session/mcp_servers.ts";
export type { SessionInfo } from "./src/session/session_info.ts";
export type {
  StreamInputItem,
  StreamInputMessage,
  StreamInputOptions,
  StreamInputResult,
} from "./src/session/stream_input.ts";
export type { ClaimOptions, ClaimResult } from "./src/session/claim.ts";
export type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
  StoredSessionRef,
} from "./src/store/session_store.ts";
export { foldSessionSummary, type SessionSummaryEntry } from "./src/store/session_summary.ts";
export type { MirrorEvent, MirrorOptions, MirrorTarget } from "./src/store/mirror_target.ts";
export { keyOfTranscriptPath, projectKeyOf } from "./src/store/project_key.ts";
export {
  InMemorySessionStore,
  type InMemorySessionStoreOptions,
} from "./src/store/in_memory_session_store.ts";
export type {
  DiagnosticEvent,
  ExitEvent,
  ExitStatus,
  LaggedEvent,
  PermissionRequestEvent,
  PermissionResolvedEvent,
  SessionEvent,
  SessionState,
  StderrEvent,
  TurnQueuedEvent,
  TurnStartedEvent,
} from "./src/session/events.ts";
export type { SessionStats, SpanRecord, TelemetryOptions } from "./src/telemetry/mod.ts";
export {
  DuplexError,
  type DuplexErrorKind,
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
  allow,
  type AllowDecision,
  type AllowOptions,
  defer,
  type DeferDecision,
  deny,
  type DenyDecision,
  type FinalPermissionDecision,
  type MatchedAskRule,
  type PermissionDecision,
  type PermissionDecisionClassification,
  type PermissionHandler,
  type PermissionMcpServer,
  type PermissionRequest,
} from "./src/permissions/permission.ts";
export {
  HOOK_EVENTS,
  type HookCallback,
  type HookContext,
  type HookEvent,
  type HookFailurePolicy,
  type HookMatcher,
  type HookResult,
  type HooksOptions,
} from "./src/hooks/hooks.ts";
export { EXIT_REASONS, type ExitReason } from "./src/hooks/session_hook_inputs.ts";
export { SYSTEM_PROMPT_DYNAMIC_BOUNDARY } from "./src/session/system_prompt_boundary.ts";
export type {
  ElicitationHandler,
  ElicitationRequest,
  ElicitationResult,
} from "./src/session/elicitation.ts";
export {
  type OverflowPolicy,
  Subscription,
  type SubscriptionOptions,
} from "./src/subscriptions/subscription.ts";
export {
  type SdkMcpTool,
  tool,
  type ToolContext,
  type ToolHandler,
  type ToolOptions,
  type ToolResult,
} from "./src/mcp/tool.ts";
export {
  CLI_WINDOW,
  type CliVersion,
  compareCliVersions,
  parseCliVersion,
} from "./src/compat/cli_versions.ts";
export {
  CLI_FEATURES,
  type CliFeature,
  type CliFeatureName,
  hasFeature,
} from "./src/compat/cli_features.ts";
export type { LaunchedCli } from "./src/compat/cli_check.ts";
export type { InferSchemaOutput, StandardSchemaV1 } from "./src/mcp/standard_schema.ts";
export { mcpServer, type McpServerOptions, type SdkMcpServer } from "./src/mcp/mcp_server.ts";

// The structural OpenTelemetry types moved to `@duplex/claude/telemetry`; these aliases keep the
// old import path working through 0.3 and go in 0.4 (docs/upgrading.md).
import type * as telemetry from "./src/telemetry/mod.ts";
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type Attributes = telemetry.Attributes;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type AttributeValue = telemetry.AttributeValue;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelApi = telemetry.OtelApi;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelCounter = telemetry.OtelCounter;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelHistogram = telemetry.OtelHistogram;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelMeter = telemetry.OtelMeter;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelSpan = telemetry.OtelSpan;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelSpanContext = telemetry.OtelSpanContext;
/** @deprecated Import it from `@duplex/claude/telemetry`; this path goes in 0.4. */
export type OtelTracer = telemetry.OtelTracer;
