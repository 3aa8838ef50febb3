/**
 * The `claude` command line for a duplex session, built from typed options.
 *
 * Pure: no `Deno.*`, no I/O. Every value is checked before anything is
 * spawned; a value of the right type that the CLI would refuse (an unknown
 * permission mode, a negative turn limit) throws a `DuplexError` of kind
 * `invalid_argument` naming the allowed values, a value of the wrong type
 * throws a `TypeError`.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";

import type { PermissionMode } from "../../src/protocol/control.ts";

export type { PermissionMode };

/** An effort level of the CLI (`--effort`). */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max";

/**
 * Extended thinking: `"adaptive"` (`--thinking=adaptive`), `"disabled"`
 * (`--thinking=disabled`) or a token budget (`--max-thinking-tokens=N`).
 */
export type Thinking = "adaptive" | "disabled" | { readonly maxTokens: number };

/** A settings source the CLI can load (`--setting-sources`). */
export type SettingSource = "user" | "project" | "local";

/** A JSON object, for options that the CLI receives as JSON text. */
export type JsonObject = { readonly [key: string]: unknown };

/** The permission modes {@linkcode buildArgs} accepts. */
export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "bypassPermissions",
  "plan",
  "dontAsk",
  "auto",
  "manual",
];

/** The effort levels {@linkcode buildArgs} accepts. */
export const EFFORTS: readonly Effort[] = ["low", "medium", "high", "xhigh", "max"];

/** The setting sources {@linkcode buildArgs} accepts. */
export const SETTING_SOURCES: readonly SettingSource[] = ["user", "project", "local"];

/**
 * The CLI flags a duplex session can choose. Each maps to one `claude`
 * flag; unset options add nothing. System prompts are not here: the session
 * sends them in its `initialize` request.
 */
export interface CliOptions {
  /** `--model`: a model alias (`"sonnet"`) or full name. */
  readonly model?: string;
  /** `--fallback-model`: models to try when the main one is busy (comma-separated). */
  readonly fallbackModel?: string;
  /** `--permission-mode`. */
  readonly permissionMode?: PermissionMode;
  /** `--allowedTools`: tool rules allowed without asking, for example `"Bash(git log:*)"`. */
  readonly allowedTools?: readonly string[];
  /** `--disallowedTools`: tool rules always denied. */
  readonly disallowedTools?: readonly string[];
  /**
   * `--tools`: the built-in tools available. `[]` gives none (`--tools=`),
   * `"default"` the default set.
   */
  readonly tools?: readonly string[] | "default";
  /**
   * `--mcp-config`: MCP servers, as an object `{ mcpServers: { … } }` (sent
   * as JSON) or as a string (a file path or JSON text).
   */
  readonly mcpConfig?: JsonObject | string;
  /** `--strict-mcp-config`: use only the servers of `mcpConfig`. */
  readonly strictMcpConfig?: boolean;
  /** `--add-dir`, once per directory: more directories the tools may use. */
  readonly addDirs?: readonly string[];
  /** `--max-turns`: a positive integer. */
  readonly maxTurns?: number;
  /** `--max-budget-usd`: a positive amount of dollars. */
  readonly maxBudgetUsd?: number;
  /** `--effort`. */
  readonly effort?: Effort;
  /** `--thinking` or `--max-thinking-tokens`. */
  readonly thinking?: Thinking;
  /** `--include-partial-messages`: emit `stream_event` frames. */
  readonly includePartialMessages?: boolean;
  /** `--replay-user-messages`: echo user lines back on stdout. */
  readonly replayUserMessages?: boolean;
  /** `--resume`: the session id (or name) to continue. */
  readonly resume?: string;
  /** `--continue`: continue the most recent conversation of the working directory. */
  readonly continue?: boolean;
  /** `--session-id`: the id (a UUID) of the new session. */
  readonly sessionId?: string;
  /** `--fork-session`: with `resume`/`continue`, start a new session id. */
  readonly forkSession?: boolean;
  /** `--no-session-persistence`: write no session files (the session cannot be resumed). */
  readonly noSessionPersistence?: boolean;
  /** `--setting-sources`: which settings files to load; `[]` loads none. */
  readonly settingSources?: readonly SettingSource[];
  /** `--settings`: more settings, as an object (sent as JSON) or a file path / JSON text. */
  readonly settings?: JsonObject | string;
  /** `--agents`: custom agents by name, as an object (sent as JSON) or a file path / JSON text. */
  readonly agents?: JsonObject | string;
  /** `--json-schema`: a JSON Schema the final result must follow. */
  readonly jsonSchema?: JsonObject;
  /** `--betas`: beta headers for API requests. */
  readonly betas?: readonly string[];
  /**
   * `--permission-prompt-tool`: who answers permission asks. Defaults to
   * `"stdio"` (the host, through `can_use_tool` control requests); `false`
   * omits the flag, so that every ask is denied by the CLI itself.
   */
  readonly permissionPromptTool?: string | false;
  /** Raw arguments appended last, unchecked, for flags this type does not know. */
  readonly extraArgs?: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The flags every duplex session needs, in the order the official SDK sends them. */
const BASE_ARGS: readonly string[] = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
];

/**
 * Builds the `claude` arguments for a duplex session (the program name not
 * included).
 *
 * Always `--output-format stream-json --verbose --input-format stream-json`
 * and, unless `permissionPromptTool` is `false`, `--permission-prompt-tool=stdio`.
 * Valued flags use the one-item `--flag=value` form, which the CLI reads the
 * same way as two items and which stays unambiguous when a value starts with
 * `-`. `extraArgs` come last, verbatim.
 *
 * @param options The CLI options.
 * @returns The argument list.
 * @throws {DuplexError} `invalid_argument` for a value the CLI would refuse.
 * @throws {TypeError} For a value of the wrong type.
 *
 * @example Arguments for a session
 * ```ts
 * import { buildArgs } from "@duplex/claude/subprocess";
 * import assert from "node:assert/strict";
 *
 * const args = buildArgs({ model: "sonnet", maxTurns: 3, settingSources: [] });
 * assert.deepEqual(args, [
 *   "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
 *   "--permission-prompt-tool=stdio", "--model=sonnet", "--max-turns=3", "--setting-sources=",
 * ]);
 * ```
 */
export function buildArgs(options: CliOptions = {}): string[] {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Cannot build the claude arguments: options must be an object`);
  }
  const args = [...BASE_ARGS];
  const o = options;

  if (o.permissionPromptTool !== false) {
    const tool = o.permissionPromptTool === undefined
      ? "stdio"
      : text("permissionPromptTool", o.permissionPromptTool);
    args.push(`--permission-prompt-tool=${tool}`);
  }
  if (o.model !== undefined) args.push(`--model=${text("model", o.model)}`);
  if (o.fallbackModel !== undefined) {
    args.push(`--fallback-model=${text("fallbackModel", o.fallbackModel)}`);
  }
  if (o.permissionMode !== undefined) {
    args.push(`--permission-mode=${oneOf("permissionMode", o.permissionMode, PERMISSION_MODES)}`);
  }
  if (o.effort !== undefined) args.push(`--effort=${oneOf("effort", o.effort, EFFORTS)}`);
  if (o.thinking !== undefined) args.push(thinkingArg(o.thinking));
  if (o.maxTurns !== undefined) args.push(`--max-turns=${positiveInteger("maxTurns", o.maxTurns)}`);
  if (o.maxBudgetUsd !== undefined) {
    args.push(`--max-budget-usd=${positiveNumber("maxBudgetUsd", o.maxBudgetUsd)}`);
  }
  if (o.allowedTools !== undefined) {
    const names = texts("allowedTools", o.allowedTools);
    if (names.length > 0) args.push(`--allowedTools=${names.join(",")}`);
  }
  if (o.disallowedTools !== undefined) {
    const names = texts("disallowedTools", o.disallowedTools);
    if (names.length > 0) args.push(`--disallowedTools=${names.join(",")}`);
  }
  if (o.tools !== undefined) {
    args.push(
      o.tools === "default" ? "--tools=default" : `--tools=${texts("tools", o.tools).join(",")}`,
    );
  }
  if (o.mcpConfig !== undefined) args.push(`--mcp-config=${mcpConfigArg(o.mcpConfig)}`);
  if (flag("strictMcpConfig", o.strictMcpConfig)) args.push("--strict-mcp-config");
  if (o.addDirs !== undefined) {
    for (const dir of texts("addDirs", o.addDirs)) args.push(`--add-dir=${dir}`);
  }
  if (o.settingSources !== undefined) {
    const sources = list("settingSources", o.settingSources).map((source, i) =>
      oneOf(`settingSources[${i}]`, source, SETTING_SOURCES)
    );
    args.push(`--setting-sources=${sources.join(",")}`);
  }
  if (o.settings !== undefined) args.push(`--settings=${jsonOrText("settings", o.settings)}`);
  if (o.agents !== undefined) args.push(`--agents=${jsonOrText("agents", o.agents)}`);
  if (o.jsonSchema !== undefined) args.push(`--json-schema=${json("jsonSchema", o.jsonSchema)}`);
  if (o.betas !== undefined) {
    const names = texts("betas", o.betas);
    if (names.length > 0) args.push(`--betas=${names.join(",")}`);
  }
  if (flag("includePartialMessages", o.includePartialMessages)) {
    args.push("--include-partial-messages");
  }
  if (flag("replayUserMessages", o.replayUserMessages)) args.push("--replay-user-messages");
  if (flag("continue", o.continue)) args.push("--continue");
  if (o.resume !== undefined) args.push(`--resume=${text("resume", o.resume)}`);
  if (flag("forkSession", o.forkSession)) args.push("--fork-session");
  if (o.sessionId !== undefined) {
    const id = text("sessionId", o.sessionId);
    if (!UUID.test(id)) {
      throw invalid(`sessionId must be a UUID (like 123e4567-e89b-42d3-a456-426614174000)`, id);
    }
    args.push(`--session-id=${id}`);
  }
  if (flag("noSessionPersistence", o.noSessionPersistence)) {
    args.push("--no-session-persistence");
  }
  if (o.extraArgs !== undefined) {
    for (const [i, arg] of list("extraArgs", o.extraArgs).entries()) {
      if (typeof arg !== "string") {
        throw new TypeError(
          `Cannot build the claude arguments: extraArgs[${i}] must be a string, got ${
            typeName(arg)
          }`,
        );
      }
      noNul(`extraArgs[${i}]`, arg);
      args.push(arg);
    }
  }
  return args;
}

function invalid(what: string, value: unknown): DuplexError {
  return new DuplexError(
    "invalid_argument",
    `Cannot build the claude arguments: ${what}, got ${display(value)}`,
  );
}

function display(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeName(value);
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}

function noNul(name: string, value: string): void {
  if (value.includes("\0")) throw invalid(`${name} must not contain a NUL character`, value);
}

function text(name: string, value: unknown): string {
  if (typeof value !== "string") {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be a string, got ${typeName(value)}`,
    );
  }
  if (value.length === 0) throw invalid(`${name} must not be empty`, value);
  noNul(name, value);
  return value;
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be a boolean, got ${typeName(value)}`,
    );
  }
  return value;
}

function list(name: string, value: unknown): readonly unknown[] {
  if (!Array.isArray(value)) {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be an array, got ${typeName(value)}`,
    );
  }
  return value;
}

function texts(name: string, value: unknown): string[] {
  return list(name, value).map((item, i) => text(`${name}[${i}]`, item));
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${name} must be one of ${allowed.join(", ")}`, value);
  }
  return value as T;
}

function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== "number") {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be a number, got ${typeName(value)}`,
    );
  }
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`${name} must be a positive integer`, value);
  }
  return value;
}

function positiveNumber(name: string, value: unknown): number {
  if (typeof value !== "number") {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be a number, got ${typeName(value)}`,
    );
  }
  if (!Number.isFinite(value) || value <= 0) {
    throw invalid(`${name} must be a finite number greater than 0`, value);
  }
  return value;
}

function thinkingArg(value: unknown): string {
  if (value === "adaptive" || value === "disabled") return `--thinking=${value}`;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const tokens = (value as { maxTokens?: unknown }).maxTokens;
    return `--max-thinking-tokens=${positiveInteger("thinking.maxTokens", tokens)}`;
  }
  throw invalid(`thinking must be "adaptive", "disabled" or { maxTokens: n }`, value);
}

function json(name: string, value: unknown): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(
      `Cannot build the claude arguments: ${name} must be an object, got ${typeName(value)}`,
    );
  }
  let encoded: string;
  try {
    encoded = JSON.stringify(value);
  } catch (error) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot build the claude arguments: ${name} cannot be encoded as JSON; pass plain data`,
      { cause: error },
    );
  }
  noNul(name, encoded);
  return encoded;
}

function jsonOrText(name: string, value: unknown): string {
  return typeof value === "string" ? text(name, value) : json(name, value);
}

function mcpConfigArg(value: unknown): string {
  if (typeof value === "string") return text("mcpConfig", value);
  const encoded = json("mcpConfig", value);
  const servers = (value as { mcpServers?: unknown }).mcpServers;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot build the claude arguments: mcpConfig must look like { mcpServers: { name: config } }; ` +
        `wrap the servers in an mcpServers object`,
    );
  }
  return encoded;
}
