// This module is browser compatible.
/* Checks of what callers pass to a session, and the initialize request built from its options. */

import { checkMs } from "../_deadline.ts";
import { checkTelemetry } from "../telemetry/_check_telemetry.ts";
import { type HookRegistry, registerHooks } from "../hooks/hooks.ts";
import { type SplitServers, splitServers } from "./_mcp_servers.ts";
import { initializeFieldsFor } from "../mcp/sdk_mcp_wiring.ts";
import type { UserContent } from "../protocol/content.ts";
import { isRecord } from "../_values.ts";
import {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_CONTROL_TIMEOUT_MS,
  DEFAULT_INTERRUPT_GRACE_MS,
  type DuplexSessionOptions,
  type SendOptions,
} from "./session_options.ts";

/** The fields of `initialize` the options ask for, or `undefined` when none is needed. */
export function initializeFields(
  options: DuplexSessionOptions,
  settings: SessionSettings,
  fromTransport: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = { ...fromTransport };
  const hooks = settings.hooks.initialize;
  const inProcess = settings.mcp.inProcess;
  if (Object.keys(hooks).length > 0) fields.hooks = hooks;
  Object.assign(fields, systemPromptFields(options.systemPrompt));
  if (options.appendSystemPrompt !== undefined) {
    fields.appendSystemPrompt = options.appendSystemPrompt;
  }
  if (options.agents !== undefined) fields.agents = options.agents;
  if (options.jsonSchema !== undefined) fields.jsonSchema = options.jsonSchema;
  for (const key of INITIALIZE_OPTIONS) {
    if (options[key] !== undefined) fields[key] = options[key];
  }
  if (inProcess.length > 0) Object.assign(fields, initializeFieldsFor(inProcess));
  if (isRecord(options.initialize)) Object.assign(fields, options.initialize);
  return Object.keys(fields).length > 0 || options.initialize === true ? fields : undefined;
}

/** The typed options that travel as `initialize` fields of the same name. */
const INITIALIZE_OPTIONS = [
  "toolAliases",
  "planModeInstructions",
  "agentProgressSummaries",
  "supportedDialogKinds",
  "perTaskStopAffordance",
] as const;

/** Checks the typed `initialize` options that are not booleans. */
function checkInitializeOptions(options: DuplexSessionOptions): void {
  const bad = (why: string): never => {
    throw new TypeError(`Cannot start a session: ${why}`);
  };
  const name = (value: unknown): boolean => typeof value === "string" && value.trim() !== "";
  const { toolAliases, planModeInstructions, supportedDialogKinds } = options;
  if (toolAliases !== undefined) {
    if (!isRecord(toolAliases)) bad("toolAliases must be a record of tool names");
    for (const [alias, target] of Object.entries(toolAliases)) {
      if (!name(alias) || !name(target)) {
        bad(`toolAliases[${JSON.stringify(alias)}] must map a tool name to a tool name`);
      }
    }
  }
  if (planModeInstructions !== undefined && !name(planModeInstructions)) {
    bad("planModeInstructions must be a non-empty string");
  }
  if (supportedDialogKinds !== undefined) {
    if (!Array.isArray(supportedDialogKinds) || !supportedDialogKinds.every(name)) {
      bad("supportedDialogKinds must be an array of dialog kinds (non-empty strings)");
    }
    if (supportedDialogKinds.length > 0 && options.onUserDialog === undefined) {
      bad("supportedDialogKinds needs onUserDialog: the CLI would send dialogs nobody answers");
    }
  }
}

/** The content blocks of a user turn; throws a TypeError for anything else. */
export function toContentBlocks(content: UserContent): unknown[] {
  if (typeof content === "string") {
    if (content.length === 0) throw new TypeError("Cannot send a turn: the text is empty");
    return [{ type: "text", text: content }];
  }
  if (!Array.isArray(content) || content.length === 0) {
    throw new TypeError(
      "Cannot send a turn: content must be a non-empty string or a non-empty array of content blocks",
    );
  }
  for (const block of content) {
    if (!isRecord(block) || typeof block.type !== "string") {
      throw new TypeError(
        "Cannot send a turn: every content block must be an object with a string `type`",
      );
    }
  }
  return [...content];
}

/** The start options a session runs with, checked. */
export interface SessionSettings {
  readonly controlTimeoutMs: number;
  readonly interruptGraceMs: number;
  readonly closeTimeoutMs: number;
  readonly permissionTimeoutMs: number | undefined;
  readonly maxLineBytes: number | undefined;
  readonly onUnresponsive: "close" | "keep";
  readonly collectTurnEvents: boolean | "all";
  readonly queue: boolean;
  readonly verbatimPrompts: boolean;
  readonly mcp: SplitServers;
  /**
   * The hooks, registered once: their `initialize` field, their callbacks by
   * id, and the events that ask for `onFailure: "block"` (user lines wait for
   * `initialize` to confirm those).
   */
  readonly hooks: HookRegistry;
}

/** Validates start options before any transport opens, and resolves their defaults. */
export function checkOptions(options: DuplexSessionOptions): SessionSettings {
  if (!isRecord(options) || options.transport === undefined) {
    throw new TypeError("Cannot start a session: options.transport is required");
  }
  for (
    const key of ["onPermission", "onElicitation", "onControlRequest", "onUserDialog"] as const
  ) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new TypeError(`Cannot start a session: ${key} must be a function`);
    }
  }
  for (
    const key of [
      "queue",
      "verbatimPrompts",
      "perTaskStopAffordance",
      "agentProgressSummaries",
    ] as const
  ) {
    if (options[key] !== undefined && typeof options[key] !== "boolean") {
      throw new TypeError(`Cannot start a session: ${key} must be a boolean`);
    }
  }
  checkTelemetry(options.telemetry, "Cannot start a session");
  checkInitializeOptions(options);
  const onUnresponsive = options.onUnresponsive ?? "close";
  if (onUnresponsive !== "close" && onUnresponsive !== "keep") {
    throw new TypeError('Cannot start a session: onUnresponsive must be "close" or "keep"');
  }
  const hooks = registerHooks(options.hooks === undefined ? {} : options.hooks); // throws a TypeError naming the bad entry
  const mcp = splitServers(options.mcpServers); // throws a TypeError naming the bad server
  const promptFields = systemPromptFields(options.systemPrompt); // a TypeError for a bad shape
  if (promptFields.appendSystemPrompt !== undefined && options.appendSystemPrompt !== undefined) {
    throw new TypeError(
      "Cannot start a session: pass appendSystemPrompt or the preset's append, not both",
    );
  }
  const { maxLineBytes } = options;
  if (maxLineBytes !== undefined && !(Number.isSafeInteger(maxLineBytes) && maxLineBytes > 0)) {
    throw new RangeError(
      `Cannot start a session: maxLineBytes must be a positive integer, got ${maxLineBytes}`,
    );
  }
  const ms = (key: DurationKey, fallback: number): number =>
    options[key] === undefined ? fallback : checkMs(options[key], `Cannot start a session: ${key}`);
  return {
    controlTimeoutMs: ms("controlTimeoutMs", DEFAULT_CONTROL_TIMEOUT_MS),
    interruptGraceMs: ms("interruptGraceMs", DEFAULT_INTERRUPT_GRACE_MS),
    closeTimeoutMs: ms("closeTimeoutMs", DEFAULT_CLOSE_TIMEOUT_MS),
    permissionTimeoutMs: options.permissionTimeoutMs === undefined
      ? undefined
      : ms("permissionTimeoutMs", Infinity),
    maxLineBytes,
    onUnresponsive,
    collectTurnEvents: options.collectTurnEvents ?? true,
    queue: options.queue === true,
    verbatimPrompts: options.verbatimPrompts === true,
    mcp,
    hooks,
  };
}

type DurationKey =
  | "controlTimeoutMs"
  | "interruptGraceMs"
  | "closeTimeoutMs"
  | "permissionTimeoutMs";

/** Checks the options of one `send` that are not durations. */
export function checkSendOptions(options: SendOptions): void {
  const { priority, shouldQuery, queue } = options;
  if (priority !== undefined && priority !== "now" && priority !== "next" && priority !== "later") {
    throw new TypeError(
      `Cannot send a turn: priority must be "now", "next" or "later", got ${String(priority)}`,
    );
  }
  if (shouldQuery !== undefined && typeof shouldQuery !== "boolean") {
    throw new TypeError("Cannot send a turn: shouldQuery must be a boolean");
  }
  if (queue !== undefined && typeof queue !== "boolean") {
    throw new TypeError("Cannot send a turn: queue must be a boolean");
  }
  for (const key of ["verbatim", "isSynthetic"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "boolean") {
      throw new TypeError(`Cannot send a turn: ${key} must be a boolean`);
    }
  }
  if (options.origin !== undefined) checkOrigin(options.origin);
  if (options.timestamp !== undefined) isoTimestamp(options.timestamp);
  if (options.pastedContent !== undefined) checkPastes(options.pastedContent);
  const { inlinePastes } = options;
  if (
    inlinePastes !== undefined &&
    !(Array.isArray(inlinePastes) && inlinePastes.every((paste) => typeof paste === "string"))
  ) {
    throw new TypeError("Cannot send a turn: inlinePastes must be an array of strings");
  }
}

/** The most entries and blocks `pastedContent` may hold (the CLI ignores a longer list). */
const MAX_PASTED = 1000;

function checkOrigin(origin: unknown): void {
  const bad = (why: string): never => {
    throw new TypeError(`Cannot send a turn: origin ${why}`);
  };
  if (!isRecord(origin)) bad('must be an object such as { kind: "human" }');
  const { kind } = origin as Record<string, unknown>;
  if (typeof kind !== "string" || kind === "") bad("needs a non-empty string kind");
  const needs = kind === "channel" ? "server" : kind === "peer" ? "from" : undefined;
  if (needs !== undefined && typeof (origin as Record<string, unknown>)[needs] !== "string") {
    bad(`of kind ${kind} needs a string ${needs}`);
  }
}

function isoTimestamp(value: unknown): string {
  const bad = (): never => {
    throw new TypeError(
      `Cannot send a turn: timestamp must be an ISO 8601 string or a valid Date, got ${
        String(value)
      }`,
    );
  };
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? bad() : value.toISOString();
  if (typeof value !== "string" || Number.isNaN(Date.parse(value))) bad();
  return value as string;
}

function checkPastes(pastes: unknown): void {
  const bad = (why: string): never => {
    throw new TypeError(`Cannot send a turn: pastedContent${why}`);
  };
  if (!Array.isArray(pastes)) bad(" must be an array of strings or arrays of content blocks");
  let count = 0;
  for (const [i, paste] of (pastes as unknown[]).entries()) {
    count++;
    if (typeof paste === "string") continue;
    if (!Array.isArray(paste)) bad(`[${i}] must be a string or an array of content blocks`);
    for (const block of paste as unknown[]) {
      count++;
      if (!isRecord(block) || typeof block.type !== "string") {
        bad(`[${i}] must hold objects with a string type`);
      }
    }
  }
  if (count > MAX_PASTED) {
    bad(` holds ${count} entries and blocks; the CLI ignores more than ${MAX_PASTED}`);
  }
}

/** The user line of a turn, with the queue fields the options ask for. */
export function userLine(
  message: Record<string, unknown>,
  uuid: string,
  options: SendOptions,
): Record<string, unknown> {
  const line: Record<string, unknown> = {
    type: "user",
    "session_id": "",
    "parent_tool_use_id": null,
    message,
    uuid,
  };
  if (options.priority !== undefined) line.priority = options.priority;
  if (options.shouldQuery === false) line.shouldQuery = false;
  if (options.verbatim === true) line.client_composed = true;
  if (options.origin !== undefined) line.origin = options.origin;
  if (options.timestamp !== undefined) line.timestamp = isoTimestamp(options.timestamp);
  if (options.pastedContent !== undefined) line.pasted_content = options.pastedContent;
  if (options.inlinePastes !== undefined) line.inline_pastes = options.inlinePastes;
  if (options.isSynthetic === true) line.isSynthetic = true;
  return line;
}

/** The `initialize` fields of the `systemPrompt` option; throws a TypeError for a bad shape. */
function systemPromptFields(prompt: DuplexSessionOptions["systemPrompt"]): Record<string, unknown> {
  const bad = (why: string): never => {
    throw new TypeError(`Cannot start a session: systemPrompt ${why}`);
  };
  const parts = (value: unknown): string[] =>
    typeof value === "string"
      ? [value]
      : Array.isArray(value) && value.every((part) => typeof part === "string")
      ? [...value]
      : bad("must be a string, an array of strings, or a custom or preset object");
  const snapshot = (value: unknown): Record<string, unknown> =>
    value === undefined
      ? {}
      : typeof value === "boolean"
      ? { systemPromptSnapshot: value }
      : bad("snapshot must be a boolean");
  if (prompt === undefined) return {};
  if (typeof prompt === "string" || Array.isArray(prompt)) return { systemPrompt: parts(prompt) };
  if (!isRecord(prompt)) return bad("must be a string, an array of strings, or an object");
  if (prompt.type === "custom") {
    return { systemPrompt: parts(prompt.prompt), ...snapshot(prompt.snapshot) };
  }
  if (prompt.type !== "preset" || prompt.preset !== "claude_code") {
    return bad(
      'objects are { type: "custom", prompt } or { type: "preset", preset: "claude_code" }',
    );
  }
  const fields: Record<string, unknown> = snapshot(prompt.snapshot);
  if (prompt.append !== undefined) {
    fields.appendSystemPrompt = typeof prompt.append === "string"
      ? prompt.append
      : bad("append must be a string");
  }
  if (prompt.excludeDynamicSections !== undefined) {
    fields.excludeDynamicSections = typeof prompt.excludeDynamicSections === "boolean"
      ? prompt.excludeDynamicSections
      : bad("excludeDynamicSections must be a boolean");
  }
  return fields;
}
