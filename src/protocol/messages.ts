// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The frames the CLI writes on stdout, as a discriminated union on `type`.
 *
 * Only the fields the library or its users commonly read are named; every
 * other field the CLI sends is still there at run time (frames are passed on
 * as parsed, never rebuilt).
 *
 * @module
 */

import type { ContentBlock, Usage } from "./content.ts";
import type {
  ControlCancelRequestFrame,
  ControlRequestFrame,
  ControlResponseFrame,
  KeepAliveFrame,
  PermissionMode,
} from "./control.ts";

/** Fields every conversation frame carries. */
export interface FrameCommon {
  uuid?: string;
  session_id?: string;
}

/** `system/init`: sent at the start of every turn; carries the session id. */
export interface SystemInitFrame extends FrameCommon {
  type: "system";
  subtype: "init";
  session_id: string;
  cwd?: string;
  tools?: string[];
  mcp_servers?: { name: string; status: string; source?: string }[];
  model?: string;
  permissionMode?: PermissionMode | string;
  slash_commands?: string[];
  apiKeySource?: string;
  claude_code_version?: string;
  output_style?: string;
  agents?: string[];
  skills?: string[];
  plugins?: { name: string; path: string; source?: string }[];
  capabilities?: string[];
}

/** `system/status`: `requesting`, `compacting`, or a permission mode change. */
export interface SystemStatusFrame extends FrameCommon {
  type: "system";
  subtype: "status";
  status: "requesting" | "compacting" | null;
  permissionMode?: PermissionMode | string;
}

/** `system/api_retry`: the CLI retries a failed API call. */
export interface SystemApiRetryFrame extends FrameCommon {
  type: "system";
  subtype: "api_retry";
  attempt: number;
  max_retries: number;
  retry_delay_ms: number;
  error_status: number | null;
  error: unknown;
}

/** `system/session_state_changed` (with `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`). */
export interface SystemSessionStateFrame extends FrameCommon {
  type: "system";
  subtype: "session_state_changed";
  state: "idle" | "running" | "requires_action";
}

/** `system/compact_boundary`: the conversation was compacted. */
export interface SystemCompactBoundaryFrame extends FrameCommon {
  type: "system";
  subtype: "compact_boundary";
  compact_metadata: { trigger: "manual" | "auto"; pre_tokens: number; [field: string]: unknown };
}

/** Any other `system` subtype (hooks, tasks, notifications, …), kept as sent. */
export interface SystemOtherFrame extends FrameCommon {
  type: "system";
  subtype: string;
  [field: string]: unknown;
}

/** A `system` frame. Narrow by `subtype` with {@linkcode isSystemInit} and friends. */
export type SystemFrame =
  | SystemInitFrame
  | SystemStatusFrame
  | SystemApiRetryFrame
  | SystemSessionStateFrame
  | SystemCompactBoundaryFrame
  | SystemOtherFrame;

/** A Messages-API message inside an `assistant` frame. */
export interface AssistantMessage {
  id: string;
  type?: "message";
  role: "assistant";
  model: string;
  content: ContentBlock[];
  stop_reason: string | null;
  usage?: Usage;
}

/** `assistant`: one completed content block of the model's reply. */
export interface AssistantFrame extends FrameCommon {
  type: "assistant";
  message: AssistantMessage;
  parent_tool_use_id: string | null;
  aborted?: boolean;
  error?: unknown;
  user_message_uuid?: string;
}

/** `user`: tool results, interrupt markers, and replayed user lines. */
export interface UserFrame extends FrameCommon {
  type: "user";
  message: { role: "user"; content: string | ContentBlock[] };
  parent_tool_use_id: string | null;
  tool_use_result?: unknown;
  isReplay?: boolean;
  isSynthetic?: boolean;
}

/** `stream_event`: a raw Messages SSE event (with `--include-partial-messages`). */
export interface StreamEventFrame extends FrameCommon {
  type: "stream_event";
  event: { type: string; [field: string]: unknown };
  parent_tool_use_id: string | null;
  ttft_ms?: number;
}

/** The subtypes of a `result` frame. */
export type ResultSubtype =
  | "success"
  | "error_during_execution"
  | "error_max_turns"
  | "error_max_budget_usd"
  | "error_max_structured_output_retries";

/** Per-model token and cost totals in a `result`. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  webSearchRequests?: number;
  costUSD: number;
  contextWindow?: number;
  [field: string]: unknown;
}

/** A tool use the CLI denied during the turn. */
export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

/** `result`: the end of a turn. Classify by `is_error`, not by `subtype`. */
export interface ResultFrame extends FrameCommon {
  type: "result";
  subtype: ResultSubtype | string;
  is_error: boolean;
  /** The final text (success subtype only). */
  result?: string;
  /** Error details (error subtypes). */
  errors?: string[];
  num_turns?: number;
  duration_ms?: number;
  duration_api_ms?: number;
  /** Cumulative for the process, not per turn. */
  total_cost_usd?: number;
  /** This turn's main-loop usage. */
  usage?: Usage;
  /** Cumulative per model. */
  modelUsage?: Record<string, ModelUsage>;
  permission_denials?: PermissionDenial[];
  stop_reason?: string | null;
  terminal_reason?: string;
  api_error_status?: number | null;
  structured_output?: unknown;
  result_index?: number;
  user_message_uuid?: string;
  user_message_uuids?: string[];
}

/** `command_lifecycle`: a user line carrying a `uuid` was queued, started, completed. */
export interface CommandLifecycleFrame extends FrameCommon {
  type: "command_lifecycle";
  command_uuid: string;
  state: "queued" | "started" | "completed" | string;
}

/** `tool_progress`: a long-running tool is still running. */
export interface ToolProgressFrame extends FrameCommon {
  type: "tool_progress";
  tool_use_id: string;
  tool_name: string;
  parent_tool_use_id: string | null;
  elapsed_time_seconds: number;
}

/** `auth_status`: authentication progress. */
export interface AuthStatusFrame extends FrameCommon {
  type: "auth_status";
  isAuthenticating: boolean;
  output: string[];
  error?: string;
}

/** `rate_limit_event`: rate limit information. */
export interface RateLimitFrame extends FrameCommon {
  type: "rate_limit_event";
  [field: string]: unknown;
}

/**
 * A frame whose `type` this version does not know (or a known type that lacks
 * its required fields). Passed through, never dropped.
 */
export interface UnknownFrame {
  type: "unknown";
  /** The `type` the frame carried, or `""` when it had none. */
  frameType: string;
  /** The frame as it was parsed. */
  frame: Record<string, unknown>;
}

/** A conversation frame from the CLI (everything but the control protocol). */
export type ConversationFrame =
  | SystemFrame
  | AssistantFrame
  | UserFrame
  | StreamEventFrame
  | ResultFrame
  | CommandLifecycleFrame
  | ToolProgressFrame
  | AuthStatusFrame
  | RateLimitFrame;

/** Any frame the CLI writes. */
export type CliFrame =
  | ConversationFrame
  | ControlRequestFrame
  | ControlResponseFrame
  | ControlCancelRequestFrame
  | KeepAliveFrame
  | UnknownFrame;

/** The user line the host writes to start a turn. */
export interface UserInputFrame {
  type: "user";
  session_id: string;
  parent_tool_use_id: null;
  message: { role: "user"; content: string | readonly unknown[] };
  uuid?: string;
  priority?: "now" | "next" | "later";
  [field: string]: unknown;
}
