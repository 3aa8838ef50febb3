// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The `system` frames that tell the host something to show or act on:
 * banners, notifications, denied tools, slash-command output, a changed
 * command list, recalled memories, a finished elicitation.
 *
 * Fields the guards check are required; every other field is optional.
 *
 * @module
 */

import type { SlashCommandInfo } from "./control_requests.ts";
import type { FrameCommon } from "./messages.ts";

/**
 * `system/informational`: a banner line (a hook's feedback, a warning, a
 * slash command's output). Seen on 2.1.332 when a hook callback fails:
 * `level: "warning"`, `tag: "hook_callback_failed"`.
 */
export interface SystemInformationalFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"informational"`. */
  subtype: "informational";
  /** The text to show. */
  content: string;
  /** How prominent: `"info"`, `"notice"`, `"suggestion"` or `"warning"`. */
  level: "info" | "notice" | "suggestion" | "warning";
  /** The tool use the line is about, when there is one. */
  tool_use_id?: string;
  /** `true` when the agent stops after this line (a Stop hook refused to go on). */
  prevent_continuation?: boolean;
  /** A feature tag, for example `"hook_callback_failed"`; ignore tags you do not know. */
  tag?: string;
}

/** `system/notification`: a notification the interactive CLI would show in its queue. */
export interface SystemNotificationFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"notification"`. */
  subtype: "notification";
  /** Identifies the notification (a later one with the same key replaces it). */
  key: string;
  /** The text. */
  text: string;
  /** `"low"`, `"medium"`, `"high"` or `"immediate"`. */
  priority: "low" | "medium" | "high" | "immediate";
  /** A colour name, when the CLI gives one. */
  color?: string;
  /** How long to show it, in milliseconds. */
  timeout_ms?: number;
}

/** `system/permission_denied`: a tool call was denied without asking (a rule, a mode, a classifier). */
export interface SystemPermissionDeniedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"permission_denied"`. */
  subtype: "permission_denied";
  /** The denied tool. */
  tool_name: string;
  /** The denied `tool_use` block. */
  tool_use_id: string;
  /** What the model is told in the tool result. */
  message: string;
  /** The sub-agent that made the call, when one did. */
  agent_id?: string;
  /** What decided, for example `"mode"`, `"rule"` or `"classifier"`. */
  decision_reason_type?: string;
  /** Why, in words, when the deciding part says. */
  decision_reason?: string;
}

/** `system/local_command_output`: the output of a local slash command (for example `/usage`). */
export interface SystemLocalCommandOutputFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"local_command_output"`. */
  subtype: "local_command_output";
  /** The output, shown like assistant text. */
  content: string;
}

/** `system/commands_changed`: the slash commands changed; replace your list with this one. */
export interface SystemCommandsChangedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"commands_changed"`. */
  subtype: "commands_changed";
  /** Every slash command now available. */
  commands: SlashCommandInfo[];
}

/** `system/memory_recall`: memories the CLI brought into the turn. */
export interface SystemMemoryRecallFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"memory_recall"`. */
  subtype: "memory_recall";
  /** `"select"` (whole files) or `"synthesize"` (a summary paragraph). */
  mode: "select" | "synthesize";
  /** The memories: a path (or URL), a scope, and the text when it has no file. */
  memories: { path: string; scope: "personal" | "team" | "organization"; content?: string }[];
}

/** `system/elicitation_complete`: an MCP server says a URL-mode elicitation is done. */
export interface SystemElicitationCompleteFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"elicitation_complete"`. */
  subtype: "elicitation_complete";
  /** The MCP server that asked. */
  mcp_server_name: string;
  /** The elicitation that is complete. */
  elicitation_id: string;
}
