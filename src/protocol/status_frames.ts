// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Top-level frames beside the conversation: tool progress, authentication,
 * rate limits, tool-use summaries, prompt suggestions, conversation resets,
 * the active `/goal`, and transcript lines for a session store.
 *
 * @module
 */

import type { FrameCommon } from "./messages.ts";

/** `tool_progress`: a long-running tool is still running. */
export interface ToolProgressFrame extends FrameCommon {
  /** Always `"tool_progress"`. */
  type: "tool_progress";
  /** The id of the running `tool_use` block. */
  tool_use_id: string;
  /** The running tool's name. */
  tool_name: string;
  /** The tool use id of the sub-agent call this frame belongs to; `null` in the main loop. */
  parent_tool_use_id: string | null;
  /** How long the tool has been running, in seconds. */
  elapsed_time_seconds: number;
  /** The background task the tool runs in, when it does. */
  task_id?: string;
  /** `true` on a keep-alive report with nothing new. */
  heartbeat?: boolean;
  /** The sub-agent type, when a sub-agent runs the tool. */
  subagent_type?: string;
  /** The sub-agent is retrying a failed API call: which attempt, the wait, the error. */
  subagent_retry?: {
    agent_id: string;
    attempt: number;
    max_retries: number;
    retry_delay_ms: number;
    error_status: number | null;
    error_category: string;
  };
  /** What the tool call does. */
  description?: string;
}

/** `auth_status`: authentication progress. */
export interface AuthStatusFrame extends FrameCommon {
  /** Always `"auth_status"`. */
  type: "auth_status";
  /** Whether authentication is still in progress. */
  isAuthenticating: boolean;
  /** Output lines of the authentication step. */
  output: string[];
  /** What went wrong, when authentication failed. */
  error?: string;
}

/** Rate limit state of a claude.ai subscription, in a `rate_limit_event`. */
export interface RateLimitInfo {
  /** Whether requests are allowed now. */
  status: "allowed" | "allowed_warning" | "rejected";
  /** When the limit resets, in Unix seconds. */
  resetsAt?: number;
  /** Which window, for example `"five_hour"`. */
  rateLimitType?: string;
  /** How much of the window is used, 0 to 1. */
  utilization?: number;
  /** Other fields (`overageStatus`, `isUsingOverage`, …), as sent. */
  [field: string]: unknown;
}

/** `rate_limit_event`: the subscription's rate limit state changed. */
export interface RateLimitFrame extends FrameCommon {
  /** Always `"rate_limit_event"`. */
  type: "rate_limit_event";
  /** The new state. */
  rate_limit_info: RateLimitInfo;
}

/** `tool_use_summary`: a short summary of the tool calls before it. */
export interface ToolUseSummaryFrame extends FrameCommon {
  /** Always `"tool_use_summary"`. */
  type: "tool_use_summary";
  /** The summary. */
  summary: string;
  /** The tool uses it summarises. */
  preceding_tool_use_ids: string[];
}

/** `prompt_suggestion`: a guess at the user's next prompt (with `promptSuggestions`; after the `result`). */
export interface PromptSuggestionFrame extends FrameCommon {
  /** Always `"prompt_suggestion"`. */
  type: "prompt_suggestion";
  /** The suggested prompt. */
  suggestion: string;
}

/** `conversation_reset`: the conversation was discarded (`/clear`, leaving plan mode, …). */
export interface ConversationResetFrame extends FrameCommon {
  /** Always `"conversation_reset"`. */
  type: "conversation_reset";
  /** The id of the fresh conversation; show a new transcript under it. */
  new_conversation_id: string;
  /** What reset it: `"clear"`, `"plan_mode_exit"`, `"fresh_session"`, `"onboarding"`. */
  trigger?: string;
  /** With `"clear"`: the `uuid` of the user line that ran `/clear`. */
  user_message_uuid?: string;
  /** When, as an ISO 8601 string. */
  timestamp?: string;
}

/** The goal `/goal` set, in an `active_goal` frame. */
export interface ActiveGoal {
  /** The condition that ends the goal. */
  condition: string;
  /** How many times the Stop hook found it not yet met. */
  iterations: number;
  /** When it was set, in Unix milliseconds. */
  set_at: number;
  /** The context size in tokens when it was set. */
  tokens_at_start: number;
  /** Why it was last found not met. */
  last_reason?: string;
}

/** `active_goal`: the `/goal` changed; `value` is `null` once it is met or cleared. */
export interface ActiveGoalFrame extends FrameCommon {
  /** Always `"active_goal"`. */
  type: "active_goal";
  /** The goal in force, or `null`. */
  value: ActiveGoal | null;
}

/**
 * `transcript_mirror`: transcript lines for a session store (with
 * `--session-mirror`). The official SDK consumes these and never shows them;
 * here they are delivered like any frame.
 */
export interface TranscriptMirrorFrame {
  /** Always `"transcript_mirror"`. */
  type: "transcript_mirror";
  /** The transcript file the lines belong to. */
  filePath: string;
  /** The lines, as the CLI writes them to the file. */
  entries: unknown[];
}
