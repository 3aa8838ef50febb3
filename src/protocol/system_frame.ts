// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The `system` frame: every known subtype by name ({@linkcode SystemFrameMap}),
 * and the frame of a subtype this version does not know.
 *
 * @module
 */

import type { FrameCommon } from "./messages.ts";
import type {
  SystemCommandsChangedFrame,
  SystemElicitationCompleteFrame,
  SystemInformationalFrame,
  SystemLocalCommandOutputFrame,
  SystemMemoryRecallFrame,
  SystemNotificationFrame,
  SystemPermissionDeniedFrame,
} from "./notice_frames.ts";
import type {
  SystemApiRetryFrame,
  SystemCompactBoundaryFrame,
  SystemControlRequestProgressFrame,
  SystemFilesPersistedFrame,
  SystemInitFrame,
  SystemMirrorErrorFrame,
  SystemModelRefusalFallbackFrame,
  SystemModelRefusalNoFallbackFrame,
  SystemPluginInstallFrame,
  SystemSessionStateFrame,
  SystemSessionWritesLostFrame,
  SystemStatusFrame,
  SystemThinkingTokensFrame,
  SystemWorkerShuttingDownFrame,
} from "./system_frames.ts";
import type {
  SystemBackgroundTasksChangedFrame,
  SystemHookProgressFrame,
  SystemHookResponseFrame,
  SystemHookStartedFrame,
  SystemTaskNotificationFrame,
  SystemTaskProgressFrame,
  SystemTaskStartedFrame,
  SystemTaskUpdatedFrame,
} from "./task_frames.ts";

/** Every known `system` subtype and its frame. */
export interface SystemFrameMap {
  /** The turn starts; carries the session id. */
  init: SystemInitFrame;
  /** Requesting, compacting, or a permission mode change. */
  status: SystemStatusFrame;
  /** A failed API call is retried. */
  api_retry: SystemApiRetryFrame;
  /** Idle, running or waiting for the host. */
  session_state_changed: SystemSessionStateFrame;
  /** The conversation was compacted. */
  compact_boundary: SystemCompactBoundaryFrame;
  /** A long control request of the host is under way. */
  control_request_progress: SystemControlRequestProgressFrame;
  /** The model refused; the turn is retried on another. */
  model_refusal_fallback: SystemModelRefusalFallbackFrame;
  /** The model refused; no retry. */
  model_refusal_no_fallback: SystemModelRefusalNoFallbackFrame;
  /** A live estimate of thinking tokens. */
  thinking_tokens: SystemThinkingTokensFrame;
  /** The CLI shuts down on purpose. */
  worker_shutting_down: SystemWorkerShuttingDownFrame;
  /** Headless plugin installation progress. */
  plugin_install: SystemPluginInstallFrame;
  /** Files uploaded (and failed). */
  files_persisted: SystemFilesPersistedFrame;
  /** A session store refused transcript lines. */
  mirror_error: SystemMirrorErrorFrame;
  /** The disk was full; lines were not saved. */
  session_writes_lost: SystemSessionWritesLostFrame;
  /** A banner line for the user. */
  informational: SystemInformationalFrame;
  /** A queued notification. */
  notification: SystemNotificationFrame;
  /** A tool call was denied without asking. */
  permission_denied: SystemPermissionDeniedFrame;
  /** Output of a local slash command. */
  local_command_output: SystemLocalCommandOutputFrame;
  /** The slash commands changed. */
  commands_changed: SystemCommandsChangedFrame;
  /** Memories brought into the turn. */
  memory_recall: SystemMemoryRecallFrame;
  /** A URL-mode elicitation is complete. */
  elicitation_complete: SystemElicitationCompleteFrame;
  /** A task started. */
  task_started: SystemTaskStartedFrame;
  /** A task's fields changed. */
  task_updated: SystemTaskUpdatedFrame;
  /** A task's totals so far. */
  task_progress: SystemTaskProgressFrame;
  /** A task ended. */
  task_notification: SystemTaskNotificationFrame;
  /** The set of live background tasks. */
  background_tasks_changed: SystemBackgroundTasksChangedFrame;
  /** A hook of the CLI started. */
  hook_started: SystemHookStartedFrame;
  /** A hook of the CLI wrote output. */
  hook_progress: SystemHookProgressFrame;
  /** A hook of the CLI finished. */
  hook_response: SystemHookResponseFrame;
}

/** A known `system` subtype. */
export type SystemSubtype = keyof SystemFrameMap;

/**
 * A `system` frame of a subtype this version does not know, kept as sent.
 * (A known subtype that lacks its required fields is an {@linkcode UnknownFrame}.)
 */
export interface SystemOtherFrame extends FrameCommon {
  /** Always `"system"`. */
  type: "system";
  /** The subtype, for example `"post_turn_summary"`. */
  subtype: string;
  /** The subtype's own fields, as sent. */
  [field: string]: unknown;
}

/**
 * A `system` frame. `subtype` alone does not narrow it (an unknown subtype is
 * any string): narrow with `isSystemFrame(frame, "task_started")`.
 */
export type SystemFrame = SystemFrameMap[SystemSubtype] | SystemOtherFrame;
