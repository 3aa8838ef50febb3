// This module is browser compatible.
/**
 * What a hook function returns: the fields every event reads, and the
 * event-specific output each event takes under `hookSpecificOutput`, tagged
 * by `hookEventName` (as the official SDK 0.3.332 types them).
 *
 * @module
 */

import type { PermissionUpdate } from "../protocol/control.ts";
import type { HookEvent } from "./hook_inputs.ts";

/** How a hook decides on a tool (`defer`: hand the question on, as if no hook had answered). */
export type HookPermissionDecision = "allow" | "deny" | "ask" | "defer";

/** What a `PreToolUse` hook may decide for the tool. */
export interface PreToolUseSpecificOutput {
  /** Always `"PreToolUse"`. */
  hookEventName: "PreToolUse";
  /** Allow or deny the tool, or `ask` as usual; after an allow no `can_use_tool` follows. */
  permissionDecision?: HookPermissionDecision;
  /** The reason for the decision (a deny's reaches the model). */
  permissionDecisionReason?: string;
  /** The input the tool runs with instead. */
  updatedInput?: Record<string, unknown>;
  /** Text added to the model's context. */
  additionalContext?: string;
  /**
   * How the permission prompt that follows an `ask` reads: the CLI sends them
   * on as the request's `title`, `description` and `displayName` (and
   * `defaultToNo`, `suppressAlwaysAllowRule`). Not in the SDK's public types;
   * Claude Code 2.1.332 reads it only where its initialize reply says
   * `host_worded_asks: true`, and ignores it otherwise.
   */
  permissionDisplay?: { title?: string; description?: string; displayName?: string };
}

/** Events whose specific output is only extra context for the model. */
export type ContextHookEvent =
  | "UserPromptSubmit"
  | "UserPromptExpansion"
  | "SessionStart"
  | "Setup"
  | "SubagentStart"
  | "PostToolUseFailure"
  | "PostToolBatch"
  | "Stop"
  | "SubagentStop"
  | "Notification"
  | "PostModelSwitch";

/** Extra context a hook adds for the model (and, per event, a few more fields). */
export interface ContextOutput<E extends ContextHookEvent = ContextHookEvent> {
  /** The event this output answers. */
  hookEventName: E;
  /** Text added to the model's context (for `Stop`: feedback, and the turn goes on). */
  additionalContext?: string;
}

/**
 * Extra context a hook adds for the model (the 0.2 name).
 *
 * @deprecated Use the event's own output in {@linkcode HookSpecificOutputs}
 * (or {@linkcode ContextOutput}); this name goes in 0.4.
 */
export interface ContextSpecificOutput {
  /** The event this output answers. */
  hookEventName: "UserPromptSubmit" | "PostToolUse" | "SessionStart" | "PostToolUseFailure";
  /** Text added to the model's context. */
  additionalContext?: string;
}

/** Every event's specific output, by event (events absent here take none). */
export interface HookSpecificOutputs {
  /** Decide on the tool, change its input, add context. */
  PreToolUse: PreToolUseSpecificOutput;
  /** Add context; replace what the model sees of the tool's output. */
  PostToolUse: {
    hookEventName: "PostToolUse";
    additionalContext?: string;
    updatedToolOutput?: unknown;
    updatedMCPToolOutput?: unknown;
  };
  /** Add context. */
  PostToolUseFailure: ContextOutput<"PostToolUseFailure">;
  /** Add context. */
  PostToolBatch: ContextOutput<"PostToolBatch">;
  /** Add context, title the session, hide the prompt from a block message. */
  UserPromptSubmit: ContextOutput<"UserPromptSubmit"> & {
    sessionTitle?: string;
    suppressOriginalPrompt?: boolean;
  };
  /** Add context, hide the prompt from a block message. */
  UserPromptExpansion: ContextOutput<"UserPromptExpansion"> & { suppressOriginalPrompt?: boolean };
  /** Add context, send a first message, title the session, watch files, reload skills. */
  SessionStart: ContextOutput<"SessionStart"> & {
    initialUserMessage?: string;
    sessionTitle?: string;
    watchPaths?: string[];
    reloadSkills?: boolean;
  };
  /** Add context. */
  Setup: ContextOutput<"Setup">;
  /** Add context to the sub-agent. */
  SubagentStart: ContextOutput<"SubagentStart">;
  /** Give the model feedback: the turn goes on to act on it. */
  Stop: ContextOutput<"Stop">;
  /** Give the sub-agent feedback: it goes on. */
  SubagentStop: ContextOutput<"SubagentStop">;
  /** Add context. */
  Notification: ContextOutput<"Notification">;
  /** Allow, deny or ask about the switch. */
  PreModelSwitch: {
    hookEventName: "PreModelSwitch";
    permissionDecision?: "allow" | "deny" | "ask";
    permissionDecisionReason?: string;
  };
  /** Add context for the new model. */
  PostModelSwitch: ContextOutput<"PostModelSwitch">;
  /** Answer the permission request instead of the user. */
  PermissionRequest: {
    hookEventName: "PermissionRequest";
    decision:
      | {
        behavior: "allow";
        updatedInput?: Record<string, unknown>;
        updatedPermissions?: PermissionUpdate[];
      }
      | { behavior: "deny"; message?: string; interrupt?: boolean };
  };
  /** Let the model retry the denied call. */
  PermissionDenied: { hookEventName: "PermissionDenied"; retry?: boolean };
  /** Answer the elicitation instead of the user. */
  Elicitation: {
    hookEventName: "Elicitation";
    action?: "accept" | "decline" | "cancel";
    content?: Record<string, unknown>;
  };
  /** Change the user's answer. */
  ElicitationResult: {
    hookEventName: "ElicitationResult";
    action?: "accept" | "decline" | "cancel";
    content?: Record<string, unknown>;
  };
  /** Watch (more) files. */
  CwdChanged: { hookEventName: "CwdChanged"; watchPaths?: string[] };
  /** Watch (more) files. */
  FileChanged: { hookEventName: "FileChanged"; watchPaths?: string[] };
  /** The path of the worktree the hook created. */
  WorktreeCreate: { hookEventName: "WorktreeCreate"; worktreePath: string };
  /** Show other text in place of the delta (display only). */
  MessageDisplay: { hookEventName: "MessageDisplay"; displayContent?: string };
  /** Keep the command from running (`allow` adds nothing). */
  PreSkillShellCommand: {
    hookEventName: "PreSkillShellCommand";
    permissionDecision?: HookPermissionDecision;
    permissionDecisionReason?: string;
  };
}

/** The specific output event `E` takes (`never` for events that take none). */
export type HookSpecificOutputFor<E extends HookEvent> = E extends keyof HookSpecificOutputs
  ? HookSpecificOutputs[E]
  : never;

/**
 * A specific output this version does not type (no `hookEventName`), sent as
 * given. An output that names its event is checked against that event's type.
 */
export interface UntypedSpecificOutput {
  /** Absent: a tagged output must match its event's type. */
  hookEventName?: undefined;
  /** The fields, sent as given. */
  [field: string]: unknown;
}

/**
 * What a hook returns (all optional; return nothing to carry on).
 *
 * @typeParam E The event the hook answers; it types `hookSpecificOutput`.
 */
export interface HookOutput<E extends HookEvent = HookEvent> {
  /** `false` stops the agent after this hook. */
  continue?: boolean;
  /** Hide the hook's output. */
  suppressOutput?: boolean;
  /** Why the agent stops, when `continue` is `false`. */
  stopReason?: string;
  /** Approve or block the action the hook is about. */
  decision?: "approve" | "block";
  /** A message shown to the user. */
  systemMessage?: string;
  /** The reason for `decision`. */
  reason?: string;
  /** A terminal notification sequence (OSC 0, 1, 2, 9, 99, 777 or BEL) for the CLI to print. */
  terminalSequence?: string;
  /** Event-specific output, tagged by `hookEventName`. */
  hookSpecificOutput?: HookSpecificOutputFor<E> | UntypedSpecificOutput;
}

/** Tells the CLI not to wait for this hook. */
export interface AsyncHookOutput {
  /** Always `true`: the hook answers later, the CLI carries on. */
  async: true;
  /** How long the async hook may take (unit not documented). */
  asyncTimeout?: number;
}
