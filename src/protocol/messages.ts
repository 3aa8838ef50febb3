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
import type { ResultFrame } from "./result_frame.ts";
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
export type * from "./result_frame.ts";

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
