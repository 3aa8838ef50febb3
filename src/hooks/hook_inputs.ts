// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * What the CLI hands a hook function: the fields every event carries, the
 * inputs of the tool events, and {@linkcode HookInputs}, every event's input
 * by name (the other events' inputs are in `session_hook_inputs.ts` and
 * `workspace_hook_inputs.ts`). Typed as the official SDK (0.3.332) documents
 * them and as Claude Code 2.1.332 sends them; fields are not validated, and
 * fields not named here pass through.
 *
 * @module
 */

import type { PermissionUpdate } from "../protocol/control.ts";
import type {
  MessageDisplayHookInput,
  NotificationHookInput,
  PostCompactHookInput,
  PostModelSwitchHookInput,
  PreCompactHookInput,
  PreModelSwitchHookInput,
  SessionEndHookInput,
  SessionStartHookInput,
  SetupHookInput,
  StopFailureHookInput,
  StopHookInput,
  SubagentStartHookInput,
  SubagentStopHookInput,
  UserPromptExpansionHookInput,
  UserPromptSubmitHookInput,
} from "./session_hook_inputs.ts";
import type {
  ConfigChangeHookInput,
  CwdChangedHookInput,
  DirectoryAddedHookInput,
  ElicitationHookInput,
  ElicitationResultHookInput,
  FileChangedHookInput,
  InstructionsLoadedHookInput,
  TaskCompletedHookInput,
  TaskCreatedHookInput,
  TeammateIdleHookInput,
  WorktreeCreateHookInput,
  WorktreeRemoveHookInput,
} from "./workspace_hook_inputs.ts";

/** Fields every hook input carries. */
export interface HookInputBase {
  /** The session id. */
  session_id: string;
  /** Path of the session's transcript file (`.jsonl`). */
  transcript_path: string;
  /** The CLI's working directory. */
  cwd: string;
  /** The hook event, for example `"PreToolUse"`. */
  hook_event_name: string;
  /** The permission mode in force (absent on some events, for example `MessageDisplay`). */
  permission_mode?: string;
  /** Ties the events of one user prompt together (absent before the first prompt). */
  prompt_id?: string;
  /** The sub-agent the hook fires in; absent in the main loop. */
  agent_id?: string;
  /** The sub-agent's type, or the `--agent` of the main loop. */
  agent_type?: string;
  /** The effort level of the turn, on events inside a turn. */
  effort?: { level: string };
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/** The MCP server behind an `mcp__*` tool. Trust `source` (`"sdk"`: yours), never the name. */
export interface McpServerProvenance {
  /** The server's configured name (untrusted text unless `source` is `"sdk"`). */
  name: string;
  /** Where it was configured: `"sdk"`, `"plugin"`, `"user"`, `"project"`, `"dynamic"`, …. */
  source: string;
}

/** Before a tool runs (after the permission rules, before asking). */
export interface PreToolUseHookInput extends HookInputBase {
  /** Always `"PreToolUse"`. */
  hook_event_name: "PreToolUse";
  /** The tool, for example `"Bash"`. */
  tool_name: string;
  /** The input the model gave it. */
  tool_input: Record<string, unknown>;
  /** The `tool_use` block's id. */
  tool_use_id: string;
  /** For MCP tools: the server. */
  mcp_server?: McpServerProvenance;
}

/** After a tool ran. */
export interface PostToolUseHookInput extends HookInputBase {
  /** Always `"PostToolUse"`. */
  hook_event_name: "PostToolUse";
  /** The tool. */
  tool_name: string;
  /** The input it ran with. */
  tool_input: Record<string, unknown>;
  /** What it returned (for Bash: `{ stdout, stderr, interrupted, … }`). */
  tool_response: unknown;
  /** The `tool_use` block's id. */
  tool_use_id: string;
  /** How long it ran, in milliseconds (permission and hook time left out). */
  duration_ms?: number;
  /** For MCP tools: the server. */
  mcp_server?: McpServerProvenance;
}

/** After a tool failed (for Bash: a non-zero exit, `error: "Exit code 3"`). */
export interface PostToolUseFailureHookInput extends HookInputBase {
  /** Always `"PostToolUseFailure"`. */
  hook_event_name: "PostToolUseFailure";
  /** The tool. */
  tool_name: string;
  /** The input it ran with. */
  tool_input: Record<string, unknown>;
  /** The `tool_use` block's id. */
  tool_use_id: string;
  /** What went wrong. */
  error: string;
  /** Whether an interrupt stopped it. */
  is_interrupt?: boolean;
  /** How long it ran, in milliseconds. */
  duration_ms?: number;
  /** For MCP tools: the server. */
  mcp_server?: McpServerProvenance;
}

/** One call in a {@linkcode PostToolBatchHookInput}. */
export interface PostToolBatchToolCall {
  /** The tool. */
  tool_name: string;
  /** Its input. */
  tool_input: unknown;
  /** The `tool_use` block's id. */
  tool_use_id: string;
  /** What the model is shown (for a Bash call, its output text). */
  tool_response?: unknown;
}

/** Once every tool call of a batch has finished, before the next model request. */
export interface PostToolBatchHookInput extends HookInputBase {
  /** Always `"PostToolBatch"`. */
  hook_event_name: "PostToolBatch";
  /** The calls of the batch. */
  tool_calls: PostToolBatchToolCall[];
}

/** When the CLI is about to ask permission for a tool (before `can_use_tool`). */
export interface PermissionRequestHookInput extends HookInputBase {
  /** Always `"PermissionRequest"`. */
  hook_event_name: "PermissionRequest";
  /** The tool. */
  tool_name: string;
  /** Its input. */
  tool_input: Record<string, unknown>;
  /** Rules that would let such calls run without asking. */
  permission_suggestions?: PermissionUpdate[];
  /** For MCP tools: the server. */
  mcp_server?: McpServerProvenance;
}

/** When a tool call was denied without asking (a rule, a mode, a classifier). */
export interface PermissionDeniedHookInput extends HookInputBase {
  /** Always `"PermissionDenied"`. */
  hook_event_name: "PermissionDenied";
  /** The tool. */
  tool_name: string;
  /** Its input. */
  tool_input: unknown;
  /** The `tool_use` block's id. */
  tool_use_id: string;
  /** Why it was denied. */
  reason: string;
  /** For MCP tools: the server. */
  mcp_server?: McpServerProvenance;
}

/** Before a shell command written in a skill or command file runs. */
export interface PreSkillShellCommandHookInput extends HookInputBase {
  /** Always `"PreSkillShellCommand"`. */
  hook_event_name: "PreSkillShellCommand";
  /** The shell tool that runs it: `"Bash"` or `"PowerShell"`. */
  tool_name: string;
  /** The command as it would run. */
  tool_input: { command: string };
  /** Identifies this command (no tool call in the transcript has it). */
  tool_use_id: string;
  /** The skill or command whose text holds it. */
  command_name: string;
  /** Where that skill or command comes from. */
  command_source?: string;
  /** Who loaded it: `"user"`, `"claude"` or `"other"`. */
  invoked_by: "user" | "claude" | "other";
}

/** Every hook event's input, by event name (the 34 events of SDK 0.3.332). */
export interface HookInputs {
  /** Before a tool runs. */
  PreToolUse: PreToolUseHookInput;
  /** After a tool ran. */
  PostToolUse: PostToolUseHookInput;
  /** After a tool failed. */
  PostToolUseFailure: PostToolUseFailureHookInput;
  /** After a batch of tool calls. */
  PostToolBatch: PostToolBatchHookInput;
  /** A notification for the user. */
  Notification: NotificationHookInput;
  /** A prompt was submitted. */
  UserPromptSubmit: UserPromptSubmitHookInput;
  /** A slash command or MCP prompt was expanded. */
  UserPromptExpansion: UserPromptExpansionHookInput;
  /** A session started (or resumed, cleared, compacted). */
  SessionStart: SessionStartHookInput;
  /** A session ends. */
  SessionEnd: SessionEndHookInput;
  /** The turn stops. */
  Stop: StopHookInput;
  /** The turn stopped on an API error. */
  StopFailure: StopFailureHookInput;
  /** A sub-agent started. */
  SubagentStart: SubagentStartHookInput;
  /** A sub-agent stops. */
  SubagentStop: SubagentStopHookInput;
  /** Before compaction. */
  PreCompact: PreCompactHookInput;
  /** After compaction. */
  PostCompact: PostCompactHookInput;
  /** Before the model is switched. */
  PreModelSwitch: PreModelSwitchHookInput;
  /** After the model was switched. */
  PostModelSwitch: PostModelSwitchHookInput;
  /** Before the CLI asks permission for a tool. */
  PermissionRequest: PermissionRequestHookInput;
  /** A tool call was denied without asking. */
  PermissionDenied: PermissionDeniedHookInput;
  /** Repository setup (`--init`, maintenance). */
  Setup: SetupHookInput;
  /** A teammate went idle. */
  TeammateIdle: TeammateIdleHookInput;
  /** A task was created. */
  TaskCreated: TaskCreatedHookInput;
  /** A task was completed. */
  TaskCompleted: TaskCompletedHookInput;
  /** An MCP server asks the user for input. */
  Elicitation: ElicitationHookInput;
  /** The user answered an elicitation. */
  ElicitationResult: ElicitationResultHookInput;
  /** A settings file changed. */
  ConfigChange: ConfigChangeHookInput;
  /** A worktree is to be created. */
  WorktreeCreate: WorktreeCreateHookInput;
  /** A worktree is to be removed. */
  WorktreeRemove: WorktreeRemoveHookInput;
  /** A CLAUDE.md or rules file was loaded. */
  InstructionsLoaded: InstructionsLoadedHookInput;
  /** The working directory changed. */
  CwdChanged: CwdChangedHookInput;
  /** A watched file changed. */
  FileChanged: FileChangedHookInput;
  /** A directory was added to the session. */
  DirectoryAdded: DirectoryAddedHookInput;
  /** Completed lines of a streaming assistant message, for display. */
  MessageDisplay: MessageDisplayHookInput;
  /** Before a skill's shell command runs. */
  PreSkillShellCommand: PreSkillShellCommandHookInput;
}

/** A hook event name. */
export type HookEvent = keyof HookInputs;
