// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The frames the CLI writes on stdout, as a discriminated union on `type`.
 *
 * Every member of the official SDK's message union (0.3.332) is typed here
 * or in the files this one imports (`system_frames.ts`, `notice_frames.ts`,
 * `task_frames.ts`). The fields the guards of `classifyFrame` check are
 * required; the others are optional, and every field the CLI sends is still
 * there at run time (frames are passed on as parsed, never rebuilt).
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
  origin?: { kind: string; [field: string]: unknown };
  /** The sub-agent that produced the frame; absent in the main loop. */
  agent_id?: string;
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
  /** Other fields the CLI accepts (`shouldQuery`, `isSynthetic`, …), passed as given. */
  [field: string]: unknown;
}
