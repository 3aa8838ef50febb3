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
  session_id: string;
  transcript_path: string;
  cwd: string;
  permission_mode?: string;
  hook_event_name: string;
  [field: string]: unknown;
}

/** Inputs per hook event (fields the CLI documents; others pass through). */
export interface HookInputs {
  PreToolUse: HookInputBase & {
    hook_event_name: "PreToolUse";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_use_id: string;
  };
  PostToolUse: HookInputBase & {
    hook_event_name: "PostToolUse";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_response: unknown;
    tool_use_id: string;
  };
  PostToolUseFailure: HookInputBase & {
    hook_event_name: "PostToolUseFailure";
    tool_name: string;
    tool_input: Record<string, unknown>;
    tool_use_id: string;
    error: string;
  };
  UserPromptSubmit: HookInputBase & { hook_event_name: "UserPromptSubmit"; prompt: string };
  Stop: HookInputBase & { hook_event_name: "Stop"; stop_hook_active: boolean };
  SubagentStart: HookInputBase & { hook_event_name: "SubagentStart"; agent_id: string };
  SubagentStop: HookInputBase & { hook_event_name: "SubagentStop"; stop_hook_active: boolean };
  Notification: HookInputBase & { hook_event_name: "Notification"; message: string };
  PreCompact: HookInputBase & { hook_event_name: "PreCompact"; trigger: "manual" | "auto" };
  SessionStart: HookInputBase & { hook_event_name: "SessionStart"; source: string };
  SessionEnd: HookInputBase & { hook_event_name: "SessionEnd"; reason: string };
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
  hookEventName: "PreToolUse";
  permissionDecision?: "allow" | "deny" | "ask";
  permissionDecisionReason?: string;
  updatedInput?: Record<string, unknown>;
}

/** Extra context a hook adds for the model. */
export interface ContextSpecificOutput {
  hookEventName: "UserPromptSubmit" | "PostToolUse" | "SessionStart" | "PostToolUseFailure";
  additionalContext?: string;
}

/** What a hook returns (all optional; return nothing to carry on). */
export interface HookOutput {
  /** `false` stops the agent after this hook. */
  continue?: boolean;
  suppressOutput?: boolean;
  stopReason?: string;
  decision?: "approve" | "block";
  systemMessage?: string;
  reason?: string;
  hookSpecificOutput?: PreToolUseSpecificOutput | ContextSpecificOutput | Record<string, unknown>;
}

/** Tells the CLI not to wait for this hook. */
export interface AsyncHookOutput {
  async: true;
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
 * import { registerHooks } from "@duplex/claude";
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
