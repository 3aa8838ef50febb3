// This module is browser compatible.
/**
 * The frames of a turn, as Claude Code 2.1.332 writes them: `system/init`,
 * `assistant` (text or a tool use), the `user` frame of a tool result, the
 * `result` that ends the turn, and `command_lifecycle` for user lines.
 * Part of the frame builders catalogue (`frames.ts`).
 *
 * @module
 */

import type { Usage } from "../protocol/content.ts";
import type {
  AssistantFrame,
  CommandLifecycleFrame,
  ResultFrame,
  SystemInitFrame,
  UserFrame,
} from "../protocol/messages.ts";
import {
  DEFAULT_CWD,
  DEFAULT_MODEL,
  DEFAULT_SESSION_ID,
  DEFAULT_TOOLS,
  messageUsage,
  nextId,
  timestamp,
  TURN_COST_USD,
} from "./_frame_defaults.ts";

/** Options of {@linkcode initFrame}. */
export interface InitFrameOptions {
  /** The session id. @default {DEFAULT_SESSION_ID} */
  sessionId?: string;
  /** The model. @default {"claude-opus-5-5"} */
  model?: string;
  /** The working directory. @default {"/home/user/project"} */
  cwd?: string;
  /** Tool names. @default {a subset of the real list} */
  tools?: string[];
  /** The permission mode. @default {"default"} */
  permissionMode?: string;
  /** The `uuid`s of the user lines this turn answers (`user_message_uuids`). */
  userMessageUuids?: string[];
}

/**
 * Builds the `system/init` frame the CLI writes at the start of every turn.
 *
 * @param options Session id, model, cwd, tools, permission mode.
 * @returns A `system/init` frame.
 *
 * @example Build an init frame
 * ```ts
 * import { initFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = initFrame({ sessionId: "s-1", model: "claude-sonnet-5-5" });
 * assert.equal(frame.type, "system");
 * assert.equal(frame.subtype, "init");
 * assert.equal(frame.session_id, "s-1");
 * ```
 */
export function initFrame(options: InitFrameOptions = {}): SystemInitFrame {
  const frame = {
    type: "system" as const,
    subtype: "init" as const,
    cwd: options.cwd ?? DEFAULT_CWD,
    "session_id": options.sessionId ?? DEFAULT_SESSION_ID,
    tools: options.tools ?? [...DEFAULT_TOOLS],
    "mcp_servers": [],
    model: options.model ?? DEFAULT_MODEL,
    permissionMode: options.permissionMode ?? "default",
    "slash_commands": ["compact", "context", "init", "model", "review"],
    apiKeySource: "ANTHROPIC_API_KEY",
    "claude_code_version": "2.1.332",
    "output_style": "default",
    agents: ["claude", "Explore", "general-purpose", "Plan"],
    skills: [],
    plugins: [],
    capabilities: ["interrupt_receipt_v1", "msg_lifecycle_v1"],
    uuid: crypto.randomUUID(),
    ...(options.userMessageUuids ? { user_message_uuids: [...options.userMessageUuids] } : {}),
  };
  return frame;
}

/** Options of {@linkcode assistantTextFrame} and {@linkcode assistantToolUseFrame}. */
export interface AssistantFrameOptions {
  /** The session id. @default {DEFAULT_SESSION_ID} */
  sessionId?: string;
  /** The Messages-API message id. @default {a fresh "msg_scripted_N"} */
  messageId?: string;
  /** The `uuid` of the user line this answers (`user_message_uuid`). */
  userMessageUuid?: string;
  /** The model. @default {"claude-opus-5-5"} */
  model?: string;
  /** Set for frames of a subagent. @default {null} */
  parentToolUseId?: string | null;
}

function assistantFrame(content: unknown[], options: AssistantFrameOptions): AssistantFrame {
  const frame = {
    type: "assistant" as const,
    message: {
      id: options.messageId ?? nextId("msg_scripted"),
      type: "message" as const,
      role: "assistant" as const,
      model: options.model ?? DEFAULT_MODEL,
      content: content as AssistantFrame["message"]["content"],
      stop_reason: null,
      stop_sequence: null,
      usage: messageUsage(),
      context_management: null,
    },
    "parent_tool_use_id": options.parentToolUseId ?? null,
    "session_id": options.sessionId ?? DEFAULT_SESSION_ID,
    uuid: crypto.randomUUID(),
    timestamp: timestamp(),
    ...(options.userMessageUuid === undefined ? {} : {
      user_message_uuid: options.userMessageUuid,
      user_message_uuids: [options.userMessageUuid],
    }),
  };
  return frame;
}

/**
 * Builds an `assistant` frame holding one text block.
 *
 * @param text The text of the block.
 * @param options Session id, message id, the user line's uuid, model.
 * @returns An `assistant` frame.
 *
 * @example Build an assistant reply
 * ```ts
 * import { assistantTextFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = assistantTextFrame("Hello", { messageId: "msg_1" });
 * assert.deepEqual(frame.message.content, [{ type: "text", text: "Hello" }]);
 * assert.equal(frame.message.id, "msg_1");
 * ```
 */
export function assistantTextFrame(
  text: string,
  options: AssistantFrameOptions = {},
): AssistantFrame {
  return assistantFrame([{ type: "text", text }], options);
}

/** Options of {@linkcode assistantToolUseFrame}. */
export interface ToolUseFrameOptions extends AssistantFrameOptions {
  /** The tool use id. @default {a fresh "toolu_scripted_N"} */
  id?: string;
  /** The tool name, for example `"Bash"`. */
  name: string;
  /** The tool input. */
  input: Record<string, unknown>;
}

/**
 * Builds an `assistant` frame holding one `tool_use` block.
 *
 * @param options The tool use (`id`, `name`, `input`) and frame options.
 * @returns An `assistant` frame.
 *
 * @example Build a tool use
 * ```ts
 * import { assistantToolUseFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = assistantToolUseFrame({ id: "toolu_1", name: "Bash", input: { command: "ls" } });
 * assert.equal(frame.message.content[0]?.type, "tool_use");
 * ```
 */
export function assistantToolUseFrame(options: ToolUseFrameOptions): AssistantFrame {
  const block = {
    type: "tool_use",
    id: options.id ?? nextId("toolu_scripted"),
    name: options.name,
    input: options.input,
  };
  return assistantFrame([block], options);
}

/** Options of {@linkcode userToolResultFrame}. */
export interface ToolResultFrameOptions {
  /** The id of the tool use this answers. */
  toolUseId: string;
  /** The tool's output. */
  content: string;
  /** Whether the tool failed. @default {false} */
  isError?: boolean;
  /** The session id. @default {DEFAULT_SESSION_ID} */
  sessionId?: string;
}

/**
 * Builds the `user` frame carrying a tool result, as the CLI writes after
 * running (or refusing) a tool.
 *
 * @param options The tool use id, the output, whether it failed.
 * @returns A `user` frame.
 *
 * @example Build a tool result
 * ```ts
 * import { userToolResultFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = userToolResultFrame({ toolUseId: "toolu_1", content: "done" });
 * assert.equal(frame.type, "user");
 * ```
 */
export function userToolResultFrame(options: ToolResultFrameOptions): UserFrame {
  const isError = options.isError ?? false;
  const frame = {
    type: "user" as const,
    message: {
      role: "user" as const,
      content: [{
        tool_use_id: options.toolUseId,
        type: "tool_result" as const,
        content: options.content,
        is_error: isError,
      }],
    },
    "parent_tool_use_id": null,
    "session_id": options.sessionId ?? DEFAULT_SESSION_ID,
    uuid: crypto.randomUUID(),
    timestamp: timestamp(),
    "tool_use_result": isError
      ? `Error: ${options.content}`
      : { stdout: options.content, stderr: "", interrupted: false, isImage: false },
  };
  return frame;
}

/** Options of {@linkcode resultFrame}. */
export interface ResultFrameOptions {
  /** The final text (`result`). @default {"" for success, absent for errors} */
  text?: string;
  /** `is_error`, which decides whether the turn failed. @default {subtype !== "success"} */
  isError?: boolean;
  /** The result subtype, for example `"error_during_execution"`. @default {"success"} */
  subtype?: string;
  /** Cumulative cost of the process so far. @default {0.000308} */
  totalCostUsd?: number;
  /** This turn's usage. @default {42 input, 7 output tokens} */
  usage?: Usage;
  /** `num_turns`. @default {1} */
  numTurns?: number;
  /** The session id. @default {DEFAULT_SESSION_ID} */
  sessionId?: string;
  /** The `uuid` of the user line this turn answers. */
  userMessageUuid?: string;
  /** `terminal_reason`. @default {"completed" for success, absent otherwise} */
  terminalReason?: string;
  /** Error details (error subtypes). @default {[] for error subtypes} */
  errors?: string[];
  /** The model `modelUsage` is keyed by. @default {"claude-opus-5-5"} */
  model?: string;
  /** Tools denied during the turn. @default {[]} */
  permissionDenials?: {
    tool_name: string;
    tool_use_id: string;
    tool_input: Record<string, unknown>;
  }[];
}

/**
 * Builds the `result` frame that ends a turn.
 *
 * @param options Text, error flag and subtype, costs, usage, ids.
 * @returns A `result` frame.
 *
 * @example A success and an interrupted turn
 * ```ts
 * import { resultFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const ok = resultFrame({ text: "Done", totalCostUsd: 0.01 });
 * assert.equal(ok.is_error, false);
 * assert.equal(ok.result, "Done");
 * const interrupted = resultFrame({ subtype: "error_during_execution" });
 * assert.equal(interrupted.is_error, true);
 * ```
 */
export function resultFrame(options: ResultFrameOptions = {}): ResultFrame {
  const subtype = options.subtype ?? "success";
  const success = subtype === "success";
  const usage: Usage = options.usage ?? {
    input_tokens: 42,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 7,
  };
  const cost = options.totalCostUsd ?? TURN_COST_USD;
  const model = options.model ?? DEFAULT_MODEL;
  const terminalReason = options.terminalReason ?? (success ? "completed" : undefined);
  const text = options.text ?? (success ? "" : undefined);
  const uuid = options.userMessageUuid;
  const frame = {
    type: "result" as const,
    subtype,
    "is_error": options.isError ?? !success,
    "duration_ms": 189,
    "duration_api_ms": 59,
    "num_turns": options.numTurns ?? 1,
    ...(text === undefined ? {} : { result: text }),
    "stop_reason": success ? "end_turn" : null,
    "session_id": options.sessionId ?? DEFAULT_SESSION_ID,
    "total_cost_usd": cost,
    usage,
    modelUsage: {
      [model]: {
        inputTokens: usage.input_tokens ?? 0,
        outputTokens: usage.output_tokens ?? 0,
        cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
        cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
        webSearchRequests: 0,
        costUSD: cost,
        contextWindow: 1000000,
      },
    },
    "permission_denials": options.permissionDenials ?? [],
    ...(terminalReason === undefined ? {} : { terminal_reason: terminalReason }),
    ...(options.errors !== undefined || !success ? { errors: options.errors ?? [] } : {}),
    uuid: crypto.randomUUID(),
    ...(uuid === undefined ? {} : { user_message_uuid: uuid, user_message_uuids: [uuid] }),
  };
  return frame;
}

/**
 * Builds a `command_lifecycle` frame, which the CLI writes for user lines
 * that carry a `uuid`.
 *
 * @param commandUuid The `uuid` of the user line.
 * @param state `"queued"`, `"started"` or `"completed"`.
 * @param options The session id.
 * @returns A `command_lifecycle` frame.
 *
 * @example Report a queued line
 * ```ts
 * import { commandLifecycleFrame } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = commandLifecycleFrame("u-1", "queued");
 * assert.equal(frame.command_uuid, "u-1");
 * assert.equal(frame.state, "queued");
 * ```
 */
export function commandLifecycleFrame(
  commandUuid: string,
  state: "queued" | "started" | "completed" | (string & Record<never, never>),
  options: { sessionId?: string } = {},
): CommandLifecycleFrame {
  return {
    type: "command_lifecycle",
    command_uuid: commandUuid,
    state,
    uuid: crypto.randomUUID(),
    session_id: options.sessionId ?? DEFAULT_SESSION_ID,
  };
}
