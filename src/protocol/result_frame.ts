// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The `result` frame that ends each turn, and its parts: subtypes, per-model
 * usage, permission denials, deferred tool uses, startup failures, what a
 * queued line waited behind. `messages.ts` re-exports every name.
 *
 * @module
 */

import type { Usage } from "./content.ts";
import type {
  FastModeDisabledReason,
  FastModeState,
  FrameCommon,
  MessageOrigin,
} from "./messages.ts";

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
