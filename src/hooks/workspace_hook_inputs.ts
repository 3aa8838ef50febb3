// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Inputs of the hook events about the workspace around the conversation:
 * teammates and their tasks, MCP elicitations, settings and instruction
 * files, worktrees, the working directory and watched files.
 *
 * @module
 */

import type { HookInputBase } from "./hook_inputs.ts";

/** A teammate of an agent team went idle. */
export interface TeammateIdleHookInput extends HookInputBase {
  /** Always `"TeammateIdle"`. */
  hook_event_name: "TeammateIdle";
  /** The teammate. */
  teammate_name: string;
  /** The team (deprecated by the SDK: a session has one team). */
  team_name: string;
}

/** What `TaskCreated` and `TaskCompleted` are about. */
export interface TaskHookFields {
  /** The task's id. */
  task_id: string;
  /** Its subject line. */
  task_subject: string;
  /** Its description. */
  task_description?: string;
  /** The teammate it belongs to. */
  teammate_name?: string;
}

/** A task of the task list was created. */
export interface TaskCreatedHookInput extends HookInputBase, TaskHookFields {
  /** Always `"TaskCreated"`. */
  hook_event_name: "TaskCreated";
}

/** A task of the task list was completed. */
export interface TaskCompletedHookInput extends HookInputBase, TaskHookFields {
  /** Always `"TaskCompleted"`. */
  hook_event_name: "TaskCompleted";
}

/** An MCP server asks the user for input; the hook may answer instead of the user. */
export interface ElicitationHookInput extends HookInputBase {
  /** Always `"Elicitation"`. */
  hook_event_name: "Elicitation";
  /** The server asking. */
  mcp_server_name: string;
  /** What it asks. */
  message: string;
  /** `"form"` or `"url"`. */
  mode?: "form" | "url";
  /** The URL to open, in URL mode. */
  url?: string;
  /** The elicitation's id, in URL mode. */
  elicitation_id?: string;
  /** The JSON Schema of the answer, in form mode. */
  requested_schema?: Record<string, unknown>;
}

/** The user answered an elicitation; the hook may change the answer. */
export interface ElicitationResultHookInput extends HookInputBase {
  /** Always `"ElicitationResult"`. */
  hook_event_name: "ElicitationResult";
  /** The server that asked. */
  mcp_server_name: string;
  /** The elicitation's id. */
  elicitation_id?: string;
  /** `"form"` or `"url"`. */
  mode?: "form" | "url";
  /** The answer. */
  action: "accept" | "decline" | "cancel";
  /** The form's content, on accept. */
  content?: Record<string, unknown>;
}

/** A settings file (or the skills) changed while the session runs. */
export interface ConfigChangeHookInput extends HookInputBase {
  /** Always `"ConfigChange"`. */
  hook_event_name: "ConfigChange";
  /** Which: `"user_settings"`, `"project_settings"`, `"local_settings"`, `"policy_settings"`, `"skills"`. */
  source: string;
  /** The file that changed. */
  file_path?: string;
}

/** A worktree is to be created (the hook may create it and return its path). */
export interface WorktreeCreateHookInput extends HookInputBase {
  /** Always `"WorktreeCreate"`. */
  hook_event_name: "WorktreeCreate";
  /** The worktree's name. */
  name: string;
}

/** A worktree is to be removed. */
export interface WorktreeRemoveHookInput extends HookInputBase {
  /** Always `"WorktreeRemove"`. */
  hook_event_name: "WorktreeRemove";
  /** Its path. */
  worktree_path: string;
}

/** A CLAUDE.md or rules file was loaded into the context. */
export interface InstructionsLoadedHookInput extends HookInputBase {
  /** Always `"InstructionsLoaded"`. */
  hook_event_name: "InstructionsLoaded";
  /** The file. */
  file_path: string;
  /** `"User"`, `"Project"`, `"Local"` or `"Managed"`. */
  memory_type: "User" | "Project" | "Local" | "Managed";
  /** Why: `"session_start"`, `"nested_traversal"`, `"path_glob_match"`, `"include"`, `"compact"`. */
  load_reason: string;
  /** The globs that matched, for `path_glob_match`. */
  globs?: string[];
  /** The file whose access loaded it. */
  trigger_file_path?: string;
  /** The file that included it. */
  parent_file_path?: string;
}

/** The working directory changed. */
export interface CwdChangedHookInput extends HookInputBase {
  /** Always `"CwdChanged"`. */
  hook_event_name: "CwdChanged";
  /** The directory before. */
  old_cwd: string;
  /** The directory now. */
  new_cwd: string;
}

/** A file a hook asked to watch changed. */
export interface FileChangedHookInput extends HookInputBase {
  /** Always `"FileChanged"`. */
  hook_event_name: "FileChanged";
  /** The file. */
  file_path: string;
  /** `"change"`, `"add"` or `"unlink"`. */
  event: "change" | "add" | "unlink";
}

/** A directory was added to the session (`/add-dir` or `register_repo_root`). */
export interface DirectoryAddedHookInput extends HookInputBase {
  /** Always `"DirectoryAdded"`. */
  hook_event_name: "DirectoryAdded";
  /** Its absolute path. */
  directory: string;
  /** `"slash_command"` or `"register_repo_root"`. */
  source: "slash_command" | "register_repo_root";
}
