// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Hooks as functions: the CLI calls back into the host at points of its loop
 * (before a tool runs, after it ran, when a prompt is submitted, when the
 * turn stops, …) and the host's function answers.
 *
 * @module
 */

/** Fields every hook input carries. */
export interface HookInputBase {
  /** The session id. */
  session_id: string;
  /** Path of the session's transcript file (`.jsonl`). */
  transcript_path: string;
  /** The CLI's working directory. */
  cwd: string;
  /** The permission mode in force. */
  permission_mode?: string;
  /** The hook event, for example `"PreToolUse"`. */
  hook_event_name: string;
  /** Other fields (`prompt_id`, `effort`, `agent_id`, …), as sent. */
  [field: string]: unknown;
}

/** Inputs per hook event (fields the CLI documents; others pass through). */
export interface HookInputs {
  /** Before a tool runs: its name, input and tool use id. */
  PreToolUse: HookInputBase & {
    hook_event_name: "PreToolUse";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_use_id: string;
  };
  /** After a tool ran: its name, input, response and tool use id. */
  PostToolUse: HookInputBase & {
    hook_event_name: "PostToolUse";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_response: unknown;
    tool_use_id: string;
  };
  /** After a tool failed: its name, input, tool use id and the error. */
  PostToolUseFailure: HookInputBase & {
    hook_event_name: "PostToolUseFailure";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_use_id: string;
    error: string;
  };
  /** When a prompt is submitted, before the turn starts (before `system/init`). */
  UserPromptSubmit: HookInputBase & { hook_event_name: "UserPromptSubmit"; prompt: string };
  /** When the turn stops, before its `result`. */
  Stop: HookInputBase & { hook_event_name: "Stop"; stop_hook_active: boolean };
  /** When a sub-agent starts. */
  SubagentStart: HookInputBase & { hook_event_name: "SubagentStart"; agent_id: string };
  /** When a sub-agent stops. */
  SubagentStop: HookInputBase & { hook_event_name: "SubagentStop"; stop_hook_active: boolean };
  /** When the CLI sends a notification. */
  Notification: HookInputBase & { hook_event_name: "Notification"; message: string };
  /** Before the conversation is compacted, manually or automatically. */
  PreCompact: HookInputBase & { hook_event_name: "PreCompact"; trigger: "manual" | "auto" };
  /** When a session starts; `source` says how (for example `"startup"` or `"resume"`). */
  SessionStart: HookInputBase & { hook_event_name: "SessionStart"; source: string };
  /** When a session ends; `reason` says why. */
  SessionEnd: HookInputBase & { hook_event_name: "SessionEnd"; reason: string };
  /** When the CLI is about to ask permission to run a tool. */
  PermissionRequest: HookInputBase & {
    hook_event_name: "PermissionRequest";
    tool_name: string;
    tool_input: Record<string, unknown>;
  };
}

/** A hook event name. */
export type HookEvent = keyof HookInputs;

/** The hook events the library knows, in the order the CLI documents them. */
export const HOOK_EVENTS: readonly HookEvent[] = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Stop",
  "SubagentStart",
  "SubagentStop",
  "Notification",
  "PreCompact",
  "SessionStart",
  "SessionEnd",
  "PermissionRequest",
];

/** What a `PreToolUse` hook may decide for the tool. */
export interface PreToolUseSpecificOutput {
  /** Always `"PreToolUse"`. */
  hookEventName: "PreToolUse";
  /** Allow or deny the tool, or `ask` as usual; after an allow no `can_use_tool` follows. */
  permissionDecision?: "allow" | "deny" | "ask";
  /** The reason for the decision. */
  permissionDecisionReason?: string;
  /** The input the tool runs with instead. */
  updatedInput?: Record<string, unknown>;
}

/** Extra context a hook adds for the model. */
export interface ContextSpecificOutput {
  /** The event this output answers. */
  hookEventName: "UserPromptSubmit" | "PostToolUse" | "SessionStart" | "PostToolUseFailure";
  /** Text added to the model's context. */
  additionalContext?: string;
}

/** What a hook returns (all optional; return nothing to carry on). */
export interface HookOutput {
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
  /** Event-specific output, tagged by `hookEventName`. */
  hookSpecificOutput?: PreToolUseSpecificOutput | ContextSpecificOutput | Record<string, unknown>;
}

/** Tells the CLI not to wait for this hook. */
export interface AsyncHookOutput {
  /** Always `true`: the hook answers later, the CLI carries on. */
  async: true;
  /** How long the async hook may take (unit not documented). */
  asyncTimeout?: number;
}

/** What a hook gets besides its input. */
export interface HookContext {
  /** Aborted when the CLI withdraws the call or the session ends. */
  readonly signal: AbortSignal;
  /** The tool use the call is about, when there is one. */
  readonly toolUseId: string | undefined;
}

/** A hook function for event `E`. */
export type HookCallback<E extends HookEvent = HookEvent> = (
  input: HookInputs[E],
  context: HookContext,
) => HookOutput | AsyncHookOutput | void | Promise<HookOutput | AsyncHookOutput | void>;

/** Which calls of an event a hook runs for. */
export interface HookMatcher<E extends HookEvent = HookEvent> {
  /** A tool name pattern for tool events (for example `"Bash"` or `"Write|Edit"`); all when absent. */
  matcher?: string;
  /** How long the CLI waits for the hook, in milliseconds (sent rounded up to seconds). */
  timeoutMs?: number;
  /** The function (or functions, run by the CLI in turn). */
  run: HookCallback<E> | readonly HookCallback<E>[];
}

/** Hooks by event. */
export type HooksOptions = { [E in HookEvent]?: readonly HookMatcher<E>[] };

/** Hooks with their callback ids: what `initialize` carries and what `hook_callback` looks up. */
export interface HookRegistry {
  /** The `hooks` field of `initialize`. */
  readonly initialize: Record<
    string,
    { matcher?: string; hookCallbackIds: string[]; timeout?: number }[]
  >;
  /** Callback id to function. */
  readonly callbacks: ReadonlyMap<string, HookCallback>;
}

/**
 * Assigns callback ids to hook functions.
 *
 * @param hooks Hooks by event.
 * @returns The `initialize` field and the id lookup.
 * @throws {TypeError} For a matcher without a function.
 *
 * @example Register a PreToolUse hook
 * ```ts
 * import { registerHooks } from "./hooks.ts";
 * import assert from "node:assert/strict";
 *
 * const registry = registerHooks({ PreToolUse: [{ matcher: "Bash", run: () => ({}) }] });
 * assert.deepEqual(registry.initialize, {
 *   PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"] }],
 * });
 * assert.equal(typeof registry.callbacks.get("hook_0"), "function");
 * ```
 */
export function registerHooks(hooks: HooksOptions): HookRegistry {
  const initialize: HookRegistry["initialize"] = {};
  const callbacks = new Map<string, HookCallback>();
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue;
    if (!Array.isArray(matchers)) {
      throw new TypeError(`Cannot register hooks: hooks.${event} must be an array of matchers`);
    }
    const entries = [];
    for (const [index, matcher] of (matchers as HookMatcher[]).entries()) {
      const runs = typeof matcher?.run === "function" ? [matcher.run] : matcher?.run;
      if (
        !Array.isArray(runs) || runs.length === 0 || !runs.every((f) => typeof f === "function")
      ) {
        throw new TypeError(
          `Cannot register hooks: hooks.${event}[${index}].run must be a function or an array of functions`,
        );
      }
      const ids = runs.map((run: HookCallback) => {
        const id = `hook_${callbacks.size}`;
        callbacks.set(id, run);
        return id;
      });
      entries.push({
        ...(matcher.matcher === undefined ? {} : { matcher: matcher.matcher }),
        hookCallbackIds: ids,
        ...(matcher.timeoutMs === undefined
          ? {}
          : { timeout: Math.ceil(matcher.timeoutMs / 1000) }),
      });
    }
    if (entries.length > 0) initialize[event] = entries;
  }
  return { initialize, callbacks };
}
