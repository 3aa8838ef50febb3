// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The `system` frames about work beside the turn: tasks (sub-agents,
 * background shells, workflows) as they start, change, progress and end, the
 * set of live background tasks, and the hooks the CLI runs itself (shell,
 * HTTP or MCP hooks from settings; the host's own hook functions are answered
 * over `hook_callback` instead).
 *
 * Recorded from Claude Code 2.1.332: an `Agent` tool call gives
 * `task_started` (with `is_backgrounded`, `prompt`), `task_updated`
 * (`patch.status: "completed"`), `task_notification` (`status`, `summary`,
 * `usage`) and `background_tasks_changed`; a settings `Stop` command hook
 * gives `hook_started` then `hook_response` (with `--include-hook-events`).
 *
 * @module
 */

import type { FrameCommon } from "./messages.ts";

/** Token, tool and time totals of a task so far. */
export interface TaskUsage {
  /** Tokens used. */
  total_tokens: number;
  /** Tool calls made. */
  tool_uses: number;
  /** Time taken, in milliseconds. */
  duration_ms: number;
}

/** `system/task_started`: a task (a sub-agent, a background shell, …) started. */
export interface SystemTaskStartedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"task_started"`. */
  subtype: "task_started";
  /** The task's id (for a sub-agent, its agent id). */
  task_id: string;
  /** What the task does. */
  description: string;
  /** The id of this run of the task (a resumed task gets a new one). */
  run_id?: string;
  /** The `tool_use` block that started it. */
  tool_use_id?: string;
  /** The kind of task, for example `"local_agent"`. */
  task_type?: string;
  /** The sub-agent type, for example `"general-purpose"`. */
  subagent_type?: string;
  /** Whether it runs in the background (the tool call returned at once). */
  is_backgrounded?: boolean;
  /** What the run was asked. */
  prompt?: string;
  /** The task that launched this one, when another task did. */
  parent_task_id?: string;
  /** Housekeeping work that activity indicators should leave out. */
  ambient?: boolean;
  /** Housekeeping work to leave out of the inline transcript (a tasks panel may show it). */
  skip_transcript?: boolean;
  /** A sub-agent's nesting depth: 1 for a top-level spawn, N+1 from inside a depth-N agent. */
  spawn_depth?: number;
  /** The workflow's name, for `task_type: "local_workflow"`. */
  workflow_name?: string;
}

/** `system/task_updated`: fields of a task changed; merge `patch` into what you hold. */
export interface SystemTaskUpdatedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"task_updated"`. */
  subtype: "task_updated";
  /** The task's id. */
  task_id: string;
  /** The changed fields (`status`, `end_time`, `error`, `is_backgrounded`, …). */
  patch: {
    status?: "pending" | "running" | "completed" | "failed" | "killed" | "paused";
    description?: string;
    end_time?: number;
    total_paused_ms?: number;
    error?: string;
    is_backgrounded?: boolean;
  };
  /** The id of this run of the task. */
  run_id?: string;
}

/** `system/task_progress`: a running task's totals so far. */
export interface SystemTaskProgressFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"task_progress"`. */
  subtype: "task_progress";
  /** The task's id. */
  task_id: string;
  /** What the task does. */
  description: string;
  /** Tokens, tool calls and time so far. */
  usage: TaskUsage;
  /** The id of this run of the task. */
  run_id?: string;
  /** The `tool_use` block that started it. */
  tool_use_id?: string;
  /** The last tool it called. */
  last_tool_name?: string;
  /** A one-line status (with `agentProgressSummaries` on, written by the model). */
  summary?: string;
  /** The sub-agent type, for sub-agents. */
  subagent_type?: string;
}

/** `system/task_notification`: a task ended (completed, failed or stopped). */
export interface SystemTaskNotificationFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"task_notification"`. */
  subtype: "task_notification";
  /** The task's id. */
  task_id: string;
  /** How it ended. */
  status: "completed" | "failed" | "stopped";
  /** The file holding its output. */
  output_file: string;
  /** What it did, in a few words (for a sub-agent, its last message). */
  summary: string;
  /** The id of this run of the task. */
  run_id?: string;
  /** The `tool_use` block that started it. */
  tool_use_id?: string;
  /** Tokens, tool calls and time in total. */
  usage?: TaskUsage;
  /** Set only when it did not end the ordinary way, for example `"worker_restart"`. */
  reason?: string;
  /** Housekeeping work that activity indicators should leave out. */
  ambient?: boolean;
  /** Housekeeping work to leave out of the inline transcript. */
  skip_transcript?: boolean;
  /** A backgrounded MCP task's result files, by reference (`resource_link` blocks). */
  resource_links?: McpResourceLink[];
}

/** A file an MCP tool returned by reference (a `resource_link` block). */
export interface McpResourceLink {
  /** Where the resource is. */
  uri: string;
  /** Its name. */
  name: string;
  /** A title to show. */
  title?: string;
  /** What it holds. */
  description?: string;
  /** Its media type. */
  mimeType?: string;
  /** Its size in bytes. */
  size?: number;
  /** MCP annotations, as sent. */
  annotations?: Record<string, unknown>;
}

/** One live background task in {@linkcode SystemBackgroundTasksChangedFrame}. */
export interface BackgroundTaskEntry {
  /** The task's id. */
  task_id: string;
  /** The kind of task, for example `"local_agent"`. */
  task_type: string;
  /** What the task does. */
  description: string;
  /** The id of this run. */
  run_id?: string;
  /** The sub-agent type, for sub-agents. */
  subagent_type?: string;
  /** The task that launched it. */
  parent_task_id?: string;
  /** Housekeeping work that activity indicators should leave out. */
  ambient?: boolean;
}

/** `system/background_tasks_changed`: every live background task; replace your set with it. */
export interface SystemBackgroundTasksChangedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"background_tasks_changed"`. */
  subtype: "background_tasks_changed";
  /** The live background tasks after the change (empty when none is left). */
  tasks: BackgroundTaskEntry[];
}

/** `system/hook_started`: the CLI started one of its own hooks. */
export interface SystemHookStartedFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"hook_started"`. */
  subtype: "hook_started";
  /** Identifies this run of the hook (shared by its progress and response frames). */
  hook_id: string;
  /** The hook's name (on 2.1.332, the event name). */
  hook_name: string;
  /** The hook event, for example `"Stop"`. */
  hook_event: string;
}

/** `system/hook_progress`: output a running hook has written so far. */
export interface SystemHookProgressFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"hook_progress"`. */
  subtype: "hook_progress";
  /** The hook run, as in `hook_started`. */
  hook_id: string;
  /** The hook's name. */
  hook_name: string;
  /** The hook event. */
  hook_event: string;
  /** Its standard output so far. */
  stdout: string;
  /** Its standard error so far. */
  stderr: string;
  /** Both, interleaved. */
  output: string;
}

/** `system/hook_response`: a hook of the CLI finished. */
export interface SystemHookResponseFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** Always `"hook_response"`. */
  subtype: "hook_response";
  /** The hook run, as in `hook_started`. */
  hook_id: string;
  /** The hook's name. */
  hook_name: string;
  /** The hook event. */
  hook_event: string;
  /** How it ended. */
  outcome: "success" | "error" | "cancelled";
  /** Its standard output. */
  stdout: string;
  /** Its standard error. */
  stderr: string;
  /** Both, interleaved. */
  output: string;
  /** Its exit code, for a command hook. */
  exit_code?: number;
}
