// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The `system` frames about the session itself: its start, its status,
 * retries, compaction, model refusals, thinking estimates, shutdown and
 * storage trouble. Task and hook progress are in `task_frames.ts`, notices
 * for the user in `notice_frames.ts`; {@linkcode SystemFrameMap} joins them.
 *
 * Fields the guards check are required; every other field is optional, as
 * other CLI versions may leave it out.
 *
 * @module
 */

import type { PermissionMode } from "./control.ts";
import type { FastModeDisabledReason, FastModeState, FrameCommon } from "./messages.ts";

/** `system/init`: sent at the start of every turn; carries the session id. */
export interface SystemInitFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"init"`. */
  subtype: "init";
  /** The session id; re-sent unchanged at the start of every turn. */
  session_id: string;
  /** The CLI's working directory. */
  cwd?: string;
  /** Names of the tools the model may call (MCP tools as `mcp__<server>__<tool>`). */
  tools?: string[];
  /** The configured MCP servers and their connection status. */
  mcp_servers?: { name: string; status: string; source?: string }[];
  /** The model the turn runs on, for example `"claude-opus-5-5"`. */
  model?: string;
  /** The current permission mode. */
  permissionMode?: PermissionMode | string;
  /** Names of the slash commands the CLI offers (without the `/`). */
  slash_commands?: string[];
  /** Where the API credential comes from, for example `"ANTHROPIC_API_KEY"`. */
  apiKeySource?: string;
  /** The CLI's version, for example `"2.1.332"`. */
  claude_code_version?: string;
  /** The active output style, for example `"default"`. */
  output_style?: string;
  /** Names of the sub-agents available. */
  agents?: string[];
  /** Names of the skills available. */
  skills?: string[];
  /** The loaded plugins. */
  plugins?: { name: string; path: string; source?: string; version?: string }[];
  /** Plugins that failed to load, with the reason. */
  plugin_errors?: { plugin: string; type: string; message: string; path?: string }[];
  /** Beta features in force. */
  betas?: string[];
  /** The effort level of the next message, or `null`. */
  effort?: string | null;
  /** Feature flags the CLI advertises, for example `"interrupt_receipt_v1"`. */
  capabilities?: string[];
  /** The slash commands bound to the local terminal (`exit`, `statusline`): a remote UI hides them. */
  terminal_slash_commands?: string[];
  /** Whether fast mode is on. */
  fast_mode_state?: FastModeState;
  /** Why fast mode is off. */
  fast_mode_disabled_reason?: FastModeDisabledReason;
  /** `"focus"`: the user sees only the final message of each turn (`/focus`). */
  view_mode?: "focus" | "default";
}

/** `system/status`: `requesting`, `compacting`, or a permission mode change. */
export interface SystemStatusFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"status"`. */
  subtype: "status";
  /** What the CLI is doing: `"requesting"` (calling the API), `"compacting"`, or `null`. */
  status: "requesting" | "compacting" | null;
  /** The new permission mode, when the frame reports a mode change. */
  permissionMode?: PermissionMode | string;
  /** How a compaction ended, on the frame that closes it (seen: `"success"`). */
  compact_result?: "success" | "failed";
  /** Why a compaction failed. */
  compact_error?: string;
}

/** `system/api_retry`: the CLI retries a failed API call. */
export interface SystemApiRetryFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"api_retry"`. */
  subtype: "api_retry";
  /** Which retry this is. */
  attempt: number;
  /** How many retries the CLI makes at most. */
  max_retries: number;
  /** How long the CLI waits before this retry, in milliseconds. */
  retry_delay_ms: number;
  /** The HTTP status of the failed call, or `null` when there was none (a timeout). */
  error_status: number | null;
  /** The error kind, for example `"rate_limit"` or `"server_error"`. */
  error?: unknown;
  /** When the API sent no response headers in time: how long it waited, and the retry will. */
  no_response?: { waited_ms: number; retry_wait_ms: number };
}

/** `system/session_state_changed` (with `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`). */
export interface SystemSessionStateFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"session_state_changed"`. */
  subtype: "session_state_changed";
  /** The CLI's new state: idle, running a turn, or waiting for the host. */
  state: "idle" | "running" | "requires_action";
}

/** `system/compact_boundary`: the conversation was compacted. */
export interface SystemCompactBoundaryFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"compact_boundary"`. */
  subtype: "compact_boundary";
  /** How compaction was triggered, the context size in tokens before and after, and what was kept. */
  compact_metadata: {
    trigger: "manual" | "auto";
    pre_tokens: number;
    post_tokens?: number;
    duration_ms?: number;
    preserved_segment?: { head_uuid: string; anchor_uuid: string; tail_uuid: string };
    preserved_messages?: { anchor_uuid: string; uuids: string[] };
    [field: string]: unknown;
  };
}

/** `system/control_request_progress`: a long control request of the host is under way. */
export interface SystemControlRequestProgressFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"control_request_progress"`. */
  subtype: "control_request_progress";
  /** The `request_id` of the host's request. */
  request_id: string;
  /** `"started"`, or `"api_retry"` with the retry fields. */
  status: "started" | "api_retry";
  /** Which retry this is. */
  attempt?: number;
  /** How many retries at most. */
  max_retries?: number;
  /** The wait before the retry, in milliseconds. */
  retry_delay_ms?: number;
  /** The HTTP status of the failed call, or `null`. */
  error_status?: number | null;
}

/** `system/model_refusal_fallback`: the model refused and the turn is retried on another one. */
export interface SystemModelRefusalFallbackFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"model_refusal_fallback"`. */
  subtype: "model_refusal_fallback";
  /** What set off the fallback: `"refusal"`. */
  trigger?: "refusal";
  /** The API request id of the refused response, or `null`. */
  request_id?: string | null;
  /** The refused response's explanation (display only), or `null`. */
  api_refusal_explanation?: string | null;
  /** The `uuid` of the user message the refused request was for (the edit-and-retry target). */
  refused_user_message_uuid?: string | null;
  /** The model that refused. */
  original_model: string;
  /** The model the turn is retried on. */
  fallback_model: string;
  /** Text to show the user. */
  content: string;
  /** `"retry"`, `"revert"` or `"sticky"`. */
  direction?: "retry" | "revert" | "sticky";
  /** `"session"` (the session model changed) or `"local"` (one sub-request). */
  scope?: "session" | "local";
  /** The `uuid`s of frames this fallback takes back. */
  retracted_message_uuids?: string[];
  /** The refusal category, for example `"cyber"`. */
  api_refusal_category?: string | null;
}

/** `system/model_refusal_no_fallback`: the model refused and nothing retries the turn. */
export interface SystemModelRefusalNoFallbackFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"model_refusal_no_fallback"`. */
  subtype: "model_refusal_no_fallback";
  /** The API request id of the refused response, or `null`. */
  request_id?: string | null;
  /** The refused response's explanation (display only), or `null`. */
  api_refusal_explanation?: string | null;
  /** The `uuid` of the user message the refused request was for. */
  refused_user_message_uuid?: string | null;
  /** The model that refused. */
  original_model: string;
  /** Text to show the user. */
  content: string;
  /** The refusal category, for example `"cyber"`. */
  api_refusal_category?: string | null;
}

/** `system/thinking_tokens`: a live estimate of the model's thinking so far. */
export interface SystemThinkingTokensFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"thinking_tokens"`. */
  subtype: "thinking_tokens";
  /** Thinking tokens so far (an estimate). */
  estimated_tokens: number;
  /** Tokens since the previous frame. */
  estimated_tokens_delta: number;
  /** The `uuid` of the user line whose turn this is. */
  user_message_uuid?: string;
}

/** `system/worker_shutting_down`: the CLI is shutting down on purpose. */
export interface SystemWorkerShuttingDownFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"worker_shutting_down"`. */
  subtype: "worker_shutting_down";
  /** A short snake_case reason, for example `"host_exit"`. */
  reason: string;
}

/** `system/plugin_install`: progress of a headless plugin installation. */
export interface SystemPluginInstallFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"plugin_install"`. */
  subtype: "plugin_install";
  /** Where the installation is. */
  status: "started" | "installed" | "failed" | "completed";
  /** The plugin or marketplace, on `installed` and `failed`. */
  name?: string;
  /** What went wrong, on `failed`. */
  error?: string;
}

/** `system/files_persisted`: files the session uploaded (and those that failed). */
export interface SystemFilesPersistedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"files_persisted"`. */
  subtype: "files_persisted";
  /** The files stored, with their ids. */
  files: { filename: string; file_id: string }[];
  /** The files that failed, with the reason. */
  failed: { filename: string; error: string }[];
  /** When, as an ISO 8601 string. */
  processed_at?: string;
}

/** `system/mirror_error`: a session store refused a batch of transcript lines (they are lost). */
export interface SystemMirrorErrorFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"mirror_error"`. */
  subtype: "mirror_error";
  /** What the store said. */
  error: string;
  /** Which transcript the batch was for. */
  key?: { projectKey: string; sessionId: string; subpath?: string };
}

/** `system/session_writes_lost`: the disk was full, so transcript lines (or config) were not saved. */
export interface SystemSessionWritesLostFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"session_writes_lost"`. */
  subtype: "session_writes_lost";
  /** `"ENOSPC"` (disk full) or `"EDQUOT"` (quota used up). */
  error_code: string;
  /** What was not saved: `"transcript"`, `"global_config"`. */
  lost: string[];
  /** The sessions whose transcripts lost lines. */
  transcript_session_ids?: string[];
}
