// This module is browser compatible.
/**
 * Hooks as functions: the CLI calls back into the host at points of its loop
 * (before a tool runs, after it ran, when a prompt is submitted, when the
 * turn stops, …) and the host's function answers. Each event's input is
 * typed in {@linkcode HookInputs}, its output in `HookSpecificOutputs`.
 *
 * @module
 */

import type { HookEvent, HookInputs } from "./hook_inputs.ts";
import type { AsyncHookOutput, HookOutput } from "./hook_outputs.ts";

export type * from "./hook_inputs.ts";
export type * from "./hook_outputs.ts";
export type * from "./session_hook_inputs.ts";
export type * from "./workspace_hook_inputs.ts";

/**
 * Every hook event, in the order of the official SDK's `HOOK_EVENTS`
 * (0.3.332). Claude Code 2.1.332 called the host's functions, offline, for
 * PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch,
 * PermissionRequest, UserPromptSubmit, Stop, SubagentStart, SubagentStop,
 * PreCompact, PostCompact, SessionStart (source `"compact"`) and
 * MessageDisplay; the others need what an offline session does not have
 * (teammates, worktrees, elicitations, watched files, …).
 */
export const HOOK_EVENTS: readonly HookEvent[] = Object.freeze([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
  "PreSkillShellCommand",
]);

/** What a failing hook does: `"continue"` (the default) goes on, `"block"` blocks the action. */
export type HookFailurePolicy = "continue" | "block";

/** What a hook gets besides its input. */
export interface HookContext {
  /** Aborted when the CLI withdraws the call or the session ends. */
  readonly signal: AbortSignal;
  /** The tool use the call is about, when there is one. */
  readonly toolUseId: string | undefined;
}

/**
 * What a hook function for event `E` returns: its output (typed for `E`; an
 * output typed for any event is accepted too, as 0.2 typed them), an async
 * marker, or nothing.
 */
export type HookResult<E extends HookEvent = HookEvent> =
  | HookOutput<E>
  | HookOutput
  | AsyncHookOutput
  | void;

/** A hook function for event `E`: gets `E`'s input, returns {@linkcode HookResult}. */
export type HookCallback<E extends HookEvent = HookEvent> = (
  input: HookInputs[E],
  context: HookContext,
) => HookResult<E> | Promise<HookResult<E>>;

/** Which calls of an event a hook runs for. */
export interface HookMatcher<E extends HookEvent = HookEvent> {
  /** A tool name pattern for tool events (for example `"Bash"` or `"Write|Edit"`); all when absent. */
  matcher?: string;
  /**
   * How long the CLI waits for the hook, in milliseconds (sent rounded up to
   * seconds); `Infinity` sends none, leaving the CLI's own default.
   */
  timeoutMs?: number;
  /**
   * What a failure of these functions (a throw, a rejection, a bad return)
   * does. `"continue"`: the CLI reports it in a `system/informational`
   * warning (`tag: "hook_callback_failed"`) and goes on as if the hook
   * returned nothing. `"block"`: the action the event guards is blocked (a
   * tool call fails with `… blocking because onFailure is "block"`). The CLI
   * ignores it on `Stop`, `SubagentStop`, `TaskCompleted` and `TeammateIdle`.
   * Claude Code 2.1.332 honours it and says so in its `initialize` reply
   * (`hook_on_failure_supported: true`). A session with a `"block"` matcher
   * writes no user line until that reply confirms it; on a CLI whose reply
   * does not, every `send` is refused (an `unsupported` DuplexError) and the
   * session ends, so no turn runs unprotected.
   *
   * @default {"continue"}
   */
  onFailure?: HookFailurePolicy;
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
    {
      matcher?: string;
      hookCallbackIds: string[];
      timeout?: number;
      onFailure?: HookFailurePolicy;
    }[]
  >;
  /** Callback id to function. */
  readonly callbacks: ReadonlyMap<string, HookCallback>;
  /**
   * The events with a matcher that asks for `onFailure: "block"`, in the
   * order given. A session with any waits, before its first user line, for
   * the CLI's `initialize` reply to confirm that it honours them.
   */
  readonly blocking: readonly HookEvent[];
}

/**
 * Assigns callback ids to hook functions.
 *
 * @param hooks Hooks by event.
 * @returns The `initialize` field, the id lookup, and the events that ask for `"block"`.
 * @throws {TypeError} For an event not in {@linkcode HOOK_EVENTS}, a matcher
 * without a function, or a bad `matcher`, `timeoutMs` or `onFailure`.
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
 * assert.deepEqual(registry.blocking, []);
 * ```
 */
export function registerHooks(hooks: HooksOptions): HookRegistry {
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks)) {
    throw new TypeError("Cannot register hooks: hooks must be an object of matchers by event");
  }
  const initialize: HookRegistry["initialize"] = {};
  const callbacks = new Map<string, HookCallback>();
  const blocking: HookEvent[] = [];
  for (const [event, matchers] of Object.entries(hooks)) {
    if (matchers === undefined) continue;
    if (!isHookEvent(event)) {
      throw new TypeError(
        `Cannot register hooks: ${JSON.stringify(event)} is not a hook event (see HOOK_EVENTS)`,
      );
    }
    if (!Array.isArray(matchers)) {
      throw new TypeError(`Cannot register hooks: hooks.${event} must be an array of matchers`);
    }
    const entries = (matchers as readonly unknown[]).map((matcher, index) =>
      entryFor(matcher, `hooks.${event}[${index}]`, (run) => {
        const id = `hook_${callbacks.size}`;
        callbacks.set(id, run);
        return id;
      })
    );
    if (entries.length > 0) initialize[event] = entries;
    if (entries.some((entry) => entry.onFailure === "block")) blocking.push(event);
  }
  return { initialize, callbacks, blocking: Object.freeze(blocking) };
}

function isHookEvent(name: string): name is HookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

type InitializeEntry = HookRegistry["initialize"][string][number];

/* Checks one matcher and turns it into its `initialize` entry, registering its functions. */
function entryFor(
  value: unknown,
  where: string,
  register: (run: HookCallback) => string,
): InitializeEntry {
  const matcher = (typeof value === "object" && value !== null ? value : {}) as Partial<
    Record<keyof HookMatcher, unknown>
  >;
  const runs = typeof matcher.run === "function" ? [matcher.run] : matcher.run;
  if (!Array.isArray(runs) || runs.length === 0 || !runs.every((f) => typeof f === "function")) {
    throw new TypeError(
      `Cannot register hooks: ${where}.run must be a function or an array of functions`,
    );
  }
  if (matcher.matcher !== undefined && typeof matcher.matcher !== "string") {
    throw new TypeError(`Cannot register hooks: ${where}.matcher must be a string`);
  }
  const { timeoutMs, onFailure } = matcher;
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) {
    throw new TypeError(`Cannot register hooks: ${where}.timeoutMs must be a positive number`);
  }
  if (onFailure !== undefined && onFailure !== "continue" && onFailure !== "block") {
    throw new TypeError(`Cannot register hooks: ${where}.onFailure must be "continue" or "block"`);
  }
  return {
    ...(matcher.matcher === undefined ? {} : { matcher: matcher.matcher }),
    hookCallbackIds: runs.map(register),
    ...(timeoutMs === undefined || timeoutMs === Infinity
      ? {}
      : { timeout: Math.ceil(timeoutMs / 1000) }),
    ...(onFailure === undefined ? {} : { onFailure }),
  };
}
