// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The frames the CLI writes on stdout, as a discriminated union on `type`.
 *
 * Every member of the official SDK's message union (0.3.333) is typed here
 * or in the files this one imports (`system_frames.ts`, `notice_frames.ts`,
 * `task_frames.ts`), with every field the SDK types (checked field by field
 * by `tests/compat/frame_fields_test.ts`). The fields the guards of
 * `classifyFrame` check are required; the others are optional, and every
 * field the CLI sends is still there at run time (frames are passed on as
 * parsed, never rebuilt).
 *
 * @module
 */

import type { ContentBlock, Usage } from "./content.ts";
import type {
  ControlCancelRequestFrame,
  ControlRequestFrame,
  ControlResponseFrame,
  KeepAliveFrame,
} from "./control.ts";
import type {
  ActiveGoalFrame,
  AuthStatusFrame,
  ConversationResetFrame,
  PromptSuggestionFrame,
  RateLimitFrame,
  ToolProgressFrame,
  ToolUseSummaryFrame,
  TranscriptMirrorFrame,
} from "./status_frames.ts";
import type { SystemFrame } from "./system_frame.ts";

export type * from "./notice_frames.ts";
export type * from "./status_frames.ts";
export type * from "./system_frame.ts";
export type * from "./system_frames.ts";
export type * from "./task_frames.ts";

/** Fields every conversation frame carries. */
export interface FrameCommon {
  /** This frame's own id (a UUID). */
  uuid?: string;
  /** The CLI's session id (a UUID); the same on every frame of the session. */
  session_id?: string;
}

/**
 * Who a user-role message comes from (the SDK's `SDKMessageOrigin`). A host
 * that sends what a person typed stamps `{ kind: "human" }`: the CLI treats
 * a message without an origin as unattributed. The other kinds are stamped
 * by the CLI itself (a channel, a peer session, a task notification, …);
 * their further fields pass through as sent.
 */
export type MessageOrigin =
  | { readonly kind: "human" }
  | { readonly kind: "channel"; readonly server: string }
  | {
    readonly kind: "peer";
    /** The sender's address (sender-authored: for replies, never for trust). */
    readonly from: string;
    /** The sending session's permission class, as its host declared it. */
    readonly fromMode?: "bypass" | "prompting";
    /** The sender's display name, normalized by the CLI. */
    readonly name?: string;
    /** The sender's session id, for a link back to it. */
    readonly fromSession?: string;
    /** The in-process background sub-agent that sent it. */
    readonly senderTaskId?: string;
    /** The message body without the peer envelope. */
    readonly body?: string;
    /** The pid of the process that connected to the messaging socket. */
    readonly verifiedPeerPid?: number;
  }
  | { readonly kind: string; readonly [field: string]: unknown };

/** Whether fast mode is off, cooling down after a rate limit, or on. */
export type FastModeState = "off" | "cooldown" | "on";

/** Why fast mode is off, for example `"free"` (the plan lacks it) or `"disabled_by_env"`. */
export type FastModeDisabledReason =
  | "free"
  | "preference"
  | "extra_usage_disabled"
  | "network_error"
  | "unknown"
  | "not_first_party"
  | "disabled_by_env"
  | "model_not_allowed"
  | "sdk_opt_in_required"
  | "pending"
  | (string & Record<never, never>);

/** A Messages-API message inside an `assistant` frame. */
export interface AssistantMessage {
  /** The API message id; shared by every `assistant` frame of one API response. */
  id: string;
  /** Always `"message"` when present. */
  type?: "message";
  /** Always `"assistant"`. */
  role: "assistant";
  /** The model that produced the message. */
  model: string;
  /** The content: usually the one completed block this frame delivers. */
  content: ContentBlock[];
  /** Why the model stopped; `null` on streamed frames (the final value is in `result`). */
  stop_reason: string | null;
  /** Token counts of this API response so far (not final on streamed frames). */
  usage?: Usage;
}

/** `assistant`: one completed content block of the model's reply. */
export interface AssistantFrame extends FrameCommon {
  /** Always `"assistant"`. */
  type: "assistant";
  /** The Messages-API message, holding the completed block. */
  message: AssistantMessage;
  /** The tool use id of the sub-agent call this frame belongs to; `null` in the main loop. */
  parent_tool_use_id: string | null;
  /** `true` when an interrupt cut the message short (`stop_reason` stays `null`). */
  aborted?: boolean;
  /** An error code when the message reports an API failure, for example `"rate_limit"`. */
  error?: unknown;
  /** The `uuid` of the user line this turn answers, when that line carried one. */
  user_message_uuid?: string;
  /** The `uuid`s of every user line the turn consumed so far (with `user_message_uuid`). */
  user_message_uuids?: string[];
  /** The sub-agent that produced the frame (its task id); absent in the main loop. */
  agent_id?: string;
  /** The `uuid`s of earlier frames this one replaces (after a refusal fallback). */
  supersedes?: string[];
  /** The API request id of the response this message comes from. */
  request_id?: string;
  /** Why this turn continues one a worker restart interrupted (the host's reason, or the CLI's). */
  resume_reason?: string;
  /** `true`: this turn continued a truncated turn inside its trailing thinking block. */
  resumed_from_incomplete_thinking?: true;
  /** The sub-agent type that produced the frame. */
  subagent_type?: string;
  /** The description of the sub-agent task that produced the frame. */
  task_description?: string;
  /** When the message was created, as an ISO 8601 string. */
  timestamp?: string;
  /** The structured `/context` report, on the message that delivers its table. */
  context_usage?: Record<string, unknown>;
  /** The structured `/usage` report, on the message that delivers its text. */
  usage_report?: Record<string, unknown>;
}

/** `user`: tool results, interrupt markers, and replayed user lines. */
export interface UserFrame extends FrameCommon {
  /** Always `"user"`. */
  type: "user";
  /** The user message: `tool_result` blocks, marker text, or the replayed input. */
  message: { role: "user"; content: string | ContentBlock[] };
  /** The tool use id of the sub-agent call this frame belongs to; `null` in the main loop. */
  parent_tool_use_id: string | null;
  /** The tool's structured output (shape depends on the tool), next to its `tool_result`. */
  tool_use_result?: unknown;
  /** `true` on user lines echoed back by `--replay-user-messages`. */
  isReplay?: boolean;
  /** Marks a message the CLI generated rather than one a user typed (not documented further). */
  isSynthetic?: boolean;
  /** When it runs relative to the running turn (on replayed lines). */
  priority?: "now" | "next" | "later";
  /** `false`: appended to the conversation without a turn. */
  shouldQuery?: boolean;
  /** Who the message comes from, for example `{ kind: "human" }` or `{ kind: "task-notification" }`. */
  origin?: MessageOrigin;
  /** The sub-agent that produced the frame; absent in the main loop. */
  agent_id?: string;
  /** The sub-agent type that produced the frame. */
  subagent_type?: string;
  /** The description of the sub-agent task that produced the frame. */
  task_description?: string;
  /** When the message was created, as an ISO 8601 string (older CLIs leave it out). */
  timestamp?: string;
  /** `true`: the text was delivered as written (no `@`-mention or slash-command expansion). */
  client_composed?: true;
  /** Content the user pasted rather than typed, one entry a paste (appended after the text). */
  pasted_content?: (string | ContentBlock[])[];
  /** Pastes still inside `message.content`, one entry a paste. */
  inline_pastes?: string[];
  /** Files attached to a replayed user line. */
  file_attachments?: unknown[];
}

/** `stream_event`: a raw Messages SSE event (with `--include-partial-messages`). */
export interface StreamEventFrame extends FrameCommon {
  /** Always `"stream_event"`. */
  type: "stream_event";
  /** The SSE event as the API sent it (`message_start`, `content_block_delta`, …). */
  event: { type: string; [field: string]: unknown };
  /** The tool use id of the sub-agent call this frame belongs to; `null` in the main loop. */
  parent_tool_use_id: string | null;
  /** Time to first token, in milliseconds (seen on `message_start` events). */
  ttft_ms?: number;
  /** The `uuid` of the user line this turn answers, on the turn's first event. */
  user_message_uuid?: string;
  /** The `uuid`s of every user line the turn consumed so far. */
  user_message_uuids?: string[];
  /** Why this turn continues one a worker restart interrupted. */
  resume_reason?: string;
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
  /** Input tokens. */
  inputTokens: number;
  /** Output tokens. */
  outputTokens: number;
  /** Input tokens read from the prompt cache. */
  cacheReadInputTokens: number;
  /** Input tokens written to the prompt cache. */
  cacheCreationInputTokens: number;
  /** Web searches made. */
  webSearchRequests?: number;
  /** Estimated cost in USD. */
  costUSD: number;
  /** The model's context window, in tokens. */
  contextWindow?: number;
  /** Other per-model fields (`maxOutputTokens`, `thinkingTokens`, …), as sent. */
  [field: string]: unknown;
}

/** A tool use the CLI denied during the turn. */
export interface PermissionDenial {
  /** The denied tool's name. */
  tool_name: string;
  /** The id of the denied `tool_use` block. */
  tool_use_id: string;
  /** The input the tool would have run with. */
  tool_input: Record<string, unknown>;
}

/** A tool call a `PreToolUse` hook deferred (`permissionDecision: "defer"`): the turn ended on it. */
export interface DeferredToolUse {
  /** The `tool_use` block's id. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The input it would run with. */
  input: Record<string, unknown>;
}

/** Why a run failed at startup, for example `"config_file_invalid"` or `"cwd_unavailable"`. */
export type StartupFailureReason =
  | "org_pin_api_key_conflict"
  | "provider_not_allowed"
  | "org_verify_failed"
  | "org_pin_mismatch"
  | "managed_settings_invalid"
  | "remote_settings_required_unavailable"
  | "gateway_signin_required"
  | "gateway_access_denied"
  | "proxy_invalid"
  | "temp_dir_unusable"
  | "cwd_unavailable"
  | "shell_tool_missing"
  | "session_held_by_background"
  | "worktree_resume_refused"
  | "worktree_unverified"
  | "cli_version_too_old"
  | "bypass_root"
  | "org_config_required_unavailable"
  | "org_config_refused"
  | "sandbox_required_unavailable"
  | "initialize_not_first"
  | "config_file_invalid"
  | "managed_settings_not_delivered"
  | "initialize_fields_not_delivered"
  | "sideload_flags_disabled"
  | (string & Record<never, never>);

/** What a stream post of a remote session waited behind (`first_*_queued_behind`). */
export type QueuedBehind = "durable_post" | "ephemeral_post" | "retry_backoff" | "hold" | "none";

/** `result`: the end of a turn. Classify by `is_error`, not by `subtype`. */
export interface ResultFrame extends FrameCommon {
  /** Always `"result"`. */
  type: "result";
  /** `"success"` or an `error_*` subtype; an API error still has `"success"`. */
  subtype: ResultSubtype | string;
  /** Whether the turn failed; `true` also on API errors reported as `"success"`. */
  is_error: boolean;
  /** The final text (success subtype only). */
  result?: string;
  /** Error details (error subtypes). */
  errors?: string[];
  /** Model round-trips in this turn (1 for a plain reply, more with tool calls). */
  num_turns?: number;
  /** Wall-clock time of this turn, in milliseconds. */
  duration_ms?: number;
  /** Time spent in API calls, in milliseconds (cumulative for the process in recorded runs). */
  duration_api_ms?: number;
  /** Estimated cost in USD, cumulative for the process (and across `--resume`), not per turn. */
  total_cost_usd?: number;
  /** This turn's main-loop token usage. */
  usage?: Usage;
  /** Tokens and cost keyed by model name, cumulative for the process (not per turn). */
  modelUsage?: Record<string, ModelUsage>;
  /** Tool uses denied during this turn. */
  permission_denials?: PermissionDenial[];
  /** The model's last stop reason, for example `"end_turn"`; `null` after an interrupt. */
  stop_reason?: string | null;
  /** Why the turn ended, for example `"completed"`, `"aborted_tools"`, `"api_error"`. */
  terminal_reason?: string;
  /** The HTTP status of the API error that ended the turn, else `null`. */
  api_error_status?: number | null;
  /** The structured output, when a JSON schema was requested. */
  structured_output?: unknown;
  /** 0-based count of `result` frames this process wrote before this one. */
  result_index?: number;
  /** The `uuid` of the user line this result answers, when that line carried one. */
  user_message_uuid?: string;
  /** The `uuid`s of every user line this turn consumed, when they carried one. */
  user_message_uuids?: string[];
  /** The tool call a hook deferred, when the turn ended on one (success subtype). */
  deferred_tool_use?: DeferredToolUse;
  /** User sends still queued when the result was written (more than 0: another turn follows). */
  queued_turn_count?: number;
  /** Who the message that started the turn came from. */
  origin?: MessageOrigin;
  /** Why this turn continues one a worker restart interrupted. */
  resume_reason?: string;
  /** The local slash command the turn ran, when it ran one (success subtype). */
  local_command?: string;
  /** When the claude.ai credential ends for good, as an ISO 8601 instant. */
  credential_expires_at?: string;
  /** Whether fast mode is on. */
  fast_mode_state?: FastModeState;
  /** Why fast mode is off. */
  fast_mode_disabled_reason?: FastModeDisabledReason;
  /** Why the run failed at startup (on the error result it writes before exiting). */
  startup_failure_reason?: StartupFailureReason;
  /** The config file that did not parse, with `startup_failure_reason: "config_file_invalid"`. */
  invalid_config_file?: {
    path: string;
    is_global: boolean;
    backup_searched: boolean;
    backup_path?: string;
  };
  /** Time to the first token, in milliseconds (success subtype). */
  ttft_ms?: number;
  /** Time to the first streamed token, in milliseconds. */
  ttft_stream_ms?: number;
  /** Time from the user line to the API request, in milliseconds. */
  time_to_request_ms?: number;
  /** Time from the process start to the first API request, in milliseconds. */
  time_to_request_from_spawn_ms?: number;
  /** Wall-clock time the API request was sent (ms since the epoch). */
  request_sent_wall_ms?: number;
  /** The origin of the timing fields (ms since the epoch). */
  time_origin_ms?: number;
  /** Whether this process was a parked spare claimed for the session. */
  warm_spare_claimed?: boolean;
  /** Time to the first content frame, in milliseconds. */
  first_content_frame_ms?: number;
  /** Remote sessions: time to the first stream post, in milliseconds. */
  first_stream_post_ms?: number;
  /** Remote sessions: time to the first stream post's acknowledgement, in milliseconds. */
  first_stream_post_ack_ms?: number;
  /** Remote sessions: how long the first stream post waited in the queue, in milliseconds. */
  first_stream_post_queue_wait_ms?: number;
  /** Remote sessions: what the first stream post waited behind. */
  first_stream_post_queued_behind?: QueuedBehind;
  /** Remote sessions: wall-clock time of the first stream post (ms since the epoch). */
  first_stream_post_wall_ms?: number;
  /** Remote sessions: time to the first text post, in milliseconds. */
  first_text_post_ms?: number;
  /** Remote sessions: how long the first text post waited in the queue, in milliseconds. */
  first_text_post_queue_wait_ms?: number;
  /** Remote sessions: what the first text post waited behind. */
  first_text_post_queued_behind?: QueuedBehind;
  /** Remote sessions: wall-clock time of the first text post (ms since the epoch). */
  first_text_post_wall_ms?: number;
}

/** `command_lifecycle`: a user line carrying a `uuid` was queued, started, completed. */
export interface CommandLifecycleFrame extends FrameCommon {
  /** Always `"command_lifecycle"`. */
  type: "command_lifecycle";
  /** The `uuid` of the user line this is about. */
  command_uuid: string;
  /** The line's new state; `"completed"` arrives after the turn's `result`. */
  state: "queued" | "started" | "completed" | string;
}

/**
 * A frame whose `type` this version does not know (or a known type that lacks
 * its required fields). Passed through, never dropped.
 */
export interface UnknownFrame {
  /** Always `"unknown"` (set by the library; the CLI's own `type` is in `frameType`). */
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
  | RateLimitFrame
  | ToolUseSummaryFrame
  | PromptSuggestionFrame
  | ConversationResetFrame
  | ActiveGoalFrame
  | TranscriptMirrorFrame;

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
  /** Always `"user"`. */
  type: "user";
  /** Ignored by the CLI; sent as `""`. */
  session_id: string;
  /** Always `null` for a host's line. */
  parent_tool_use_id: null;
  /** The prompt: a string, or Messages-API content blocks. */
  message: { role: "user"; content: string | readonly unknown[] };
  /** Optional id; the CLI stamps it on the reply frames as `user_message_uuid`. */
  uuid?: string;
  /** When to run the line relative to the running turn. */
  priority?: "now" | "next" | "later";
  /** Who the message comes from, for example `{ kind: "human" }`. */
  origin?: MessageOrigin;
  /** When the message was written, as an ISO 8601 string. */
  timestamp?: string;
  /** Content the user pasted rather than typed, one entry a paste. */
  pasted_content?: readonly (string | readonly ContentBlock[])[];
  /** Pastes still inside `message.content`, one entry a paste. */
  inline_pastes?: readonly string[];
  /** `true`: the program wrote the line, not a person. */
  isSynthetic?: boolean;
  /** `false`: append the content without a turn. */
  shouldQuery?: boolean;
  /** `true`: deliver the text as written (no `@`-mention or slash-command expansion). */
  client_composed?: true;
  /** Other fields the CLI accepts, passed as given. */
  [field: string]: unknown;
}
