// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Inputs of the hook events of the conversation's course: prompts, the
 * session's start and end, stopping, sub-agents, compaction, model switches,
 * setup, notifications and message display.
 *
 * @module
 */

import type { HookInputBase } from "./hook_inputs.ts";

/** Background work still in flight when a turn stops. */
export interface BackgroundTaskSummary {
  /** The task's id. */
  id: string;
  /** Its kind, for example `"shell"` or `"subagent"`. */
  type: string;
  /** Its status. */
  status: string;
  /** What it does (capped at 1000 characters). */
  description: string;
  /** For shell tasks: the command. */
  command?: string;
  /** For sub-agent tasks: the agent type. */
  agent_type?: string;
}

/** A scheduled wake-up of the session (`CronCreate`, `/loop`). */
export interface SessionCronSummary {
  /** The schedule's id. */
  id: string;
  /** A cron expression, for example `"0 9 * * 1-5"`. */
  schedule: string;
  /** Whether it fires again after the next time. */
  recurring: boolean;
  /** The prompt it submits. */
  prompt: string;
}

/** When a prompt is submitted, before the turn starts (before `system/init`). */
export interface UserPromptSubmitHookInput extends HookInputBase {
  /** Always `"UserPromptSubmit"`. */
  hook_event_name: "UserPromptSubmit";
  /** The prompt's text. */
  prompt: string;
  /** Who submitted it: `"user"`, `"sdk"`, `"system"`, … (may be absent). */
  source?: string;
  /** The session's title, when it has one. */
  session_title?: string;
}

/** When a slash command or MCP prompt is expanded into a prompt. */
export interface UserPromptExpansionHookInput extends HookInputBase {
  /** Always `"UserPromptExpansion"`. */
  hook_event_name: "UserPromptExpansion";
  /** `"slash_command"` or `"mcp_prompt"`. */
  expansion_type: "slash_command" | "mcp_prompt";
  /** The command's name. */
  command_name: string;
  /** Its arguments. */
  command_args: string;
  /** Where it comes from. */
  command_source?: string;
  /** The expanded prompt. */
  prompt: string;
}

/** When a session starts: `source` says how (seen on 2.1.332: `"compact"`, after `/compact`). */
export interface SessionStartHookInput extends HookInputBase {
  /** Always `"SessionStart"`. */
  hook_event_name: "SessionStart";
  /** `"startup"`, `"resume"`, `"clear"`, `"compact"` or `"fork"`. */
  source: "startup" | "resume" | "clear" | "compact" | "fork";
  /** The model, for example `"claude-opus-5-5"`. */
  model?: string;
  /** The session's title. */
  session_title?: string;
  /** On resume or fork: seconds since the last response. */
  seconds_since_last_response?: number;
  /** On resume or fork: the context size in tokens. */
  context_tokens?: number;
}

/** When a session ends; `reason` says why. */
export interface SessionEndHookInput extends HookInputBase {
  /** Always `"SessionEnd"`. */
  hook_event_name: "SessionEnd";
  /** Why the session ended: one of {@linkcode EXIT_REASONS}, or a newer CLI's own word. */
  reason: string;
}

/** Why a session ended, as the `SessionEnd` hook's `reason` says (the official SDK's list). */
export const EXIT_REASONS: readonly ["clear", "resume", "logout", "prompt_input_exit", "other"] =
  Object.freeze(["clear", "resume", "logout", "prompt_input_exit", "other"] as const);

/** One of {@linkcode EXIT_REASONS}. */
export type ExitReason = typeof EXIT_REASONS[number];

/** When the turn stops, before its `result`. */
export interface StopHookInput extends HookInputBase {
  /** Always `"Stop"`. */
  hook_event_name: "Stop";
  /** `true` when a Stop hook already kept this turn going once. */
  stop_hook_active: boolean;
  /** The text of the last assistant message. */
  last_assistant_message?: string;
  /** Background work still in flight (empty when none). */
  background_tasks?: BackgroundTaskSummary[];
  /** Scheduled wake-ups of the session (empty when none). */
  session_crons?: SessionCronSummary[];
}

/** When the turn stopped on an API error. */
export interface StopFailureHookInput extends HookInputBase {
  /** Always `"StopFailure"`. */
  hook_event_name: "StopFailure";
  /** The error kind, for example `"rate_limit"` or `"server_error"`. */
  error: string;
  /** More about it. */
  error_details?: string;
  /** The text of the last assistant message. */
  last_assistant_message?: string;
}

/** When a sub-agent starts. */
export interface SubagentStartHookInput extends HookInputBase {
  /** Always `"SubagentStart"`. */
  hook_event_name: "SubagentStart";
  /** The sub-agent's id. */
  agent_id: string;
  /** Its type, for example `"general-purpose"`. */
  agent_type: string;
}

/** When a sub-agent stops (also the one that writes a compaction's summary). */
export interface SubagentStopHookInput extends HookInputBase {
  /** Always `"SubagentStop"`. */
  hook_event_name: "SubagentStop";
  /** `true` when a hook already kept it going once. */
  stop_hook_active: boolean;
  /** The sub-agent's id. */
  agent_id: string;
  /** Its transcript file. */
  agent_transcript_path: string;
  /** Its type (`""` for the CLI's own helpers). */
  agent_type: string;
  /** The text of its last message. */
  last_assistant_message?: string;
  /** Background work still in flight. */
  background_tasks?: BackgroundTaskSummary[];
  /** Scheduled wake-ups. */
  session_crons?: SessionCronSummary[];
}

/** Before the conversation is compacted, manually or automatically. */
export interface PreCompactHookInput extends HookInputBase {
  /** Always `"PreCompact"`. */
  hook_event_name: "PreCompact";
  /** `"manual"` (`/compact`) or `"auto"`. */
  trigger: "manual" | "auto";
  /** The instructions given with `/compact`, or `null`. */
  custom_instructions: string | null;
}

/** After the conversation was compacted. */
export interface PostCompactHookInput extends HookInputBase {
  /** Always `"PostCompact"`. */
  hook_event_name: "PostCompact";
  /** `"manual"` or `"auto"`. */
  trigger: "manual" | "auto";
  /** The summary that replaced the conversation. */
  compact_summary: string;
}

/** What a model switch is about, in `PreModelSwitch` and `PostModelSwitch`. */
export interface ModelSwitchFields {
  /** The model before, resolved. */
  from_model: string;
  /** The model after, resolved. */
  to_model: string;
  /** What was asked for (an alias, an id, or `null` for the default). */
  requested_model: string | null;
  /** What asked: `"command"`, `"picker"`, `"sdk"` (`set_model`), `"auto"`, `"resume"`. */
  source: string;
  /** The tokens the next request re-sends. */
  context_tokens: number;
  /** Whether the prompt cache is likely warm (a switch loses it). */
  prompt_cache_warm: boolean;
  /** The cache's time to live. */
  cache_ttl: "5m" | "1h";
  /** The estimated cost of caching the context again on the new model, in USD. */
  estimated_cache_write_usd: number;
  /** How that cost was priced: `"configured"`, `"catalog"` or `"default"`. */
  pricing: "configured" | "catalog" | "default";
}

/** Before the model is switched (allow, deny or ask, as for tools). */
export interface PreModelSwitchHookInput extends HookInputBase, ModelSwitchFields {
  /** Always `"PreModelSwitch"`. */
  hook_event_name: "PreModelSwitch";
}

/** After the model was switched. */
export interface PostModelSwitchHookInput extends HookInputBase, ModelSwitchFields {
  /** Always `"PostModelSwitch"`. */
  hook_event_name: "PostModelSwitch";
}

/** Repository setup or maintenance. */
export interface SetupHookInput extends HookInputBase {
  /** Always `"Setup"`. */
  hook_event_name: "Setup";
  /** `"init"` or `"maintenance"`. */
  trigger: "init" | "maintenance";
}

/** When the CLI sends a notification (not seen from a headless session on 2.1.332). */
export interface NotificationHookInput extends HookInputBase {
  /** Always `"Notification"`. */
  hook_event_name: "Notification";
  /** The text. */
  message: string;
  /** A title. */
  title?: string;
  /** The kind, for example `"permission_prompt"` or `"idle_prompt"`. */
  notification_type: string;
}

/** Newly completed lines of a streaming assistant message (display only). */
export interface MessageDisplayHookInput extends HookInputBase {
  /** Always `"MessageDisplay"`. */
  hook_event_name: "MessageDisplay";
  /** The turn's id. */
  turn_id: string;
  /** The message's id (the same on every flush of it; not the API `msg_` id). */
  message_id: string;
  /** 0-based flush count within the message. */
  index: number;
  /** `true` on the message's last flush. */
  final: boolean;
  /** The lines completed since the previous flush. */
  delta: string;
}
