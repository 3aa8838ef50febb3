/* The options of `planLaunch` whose mapping takes more than one line: each checks its value and
 * returns its arguments (or variables). */

import {
  either,
  flag,
  invalid,
  isJsonText,
  json,
  noNul,
  oneOf,
  parseObject,
  positiveInteger,
  record,
  text,
  texts,
  wrongType,
} from "./_arg_checks.ts";
import { mergeSandbox } from "./_sandbox.ts";
import type { CliOptions, JsonObject, SandboxSettings } from "./cli_options.ts";

export function thinkingArgs(value: unknown): string[] {
  if (value === "adaptive" || value === "disabled") return [`--thinking=${value}`];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(
      `thinking must be { type: "adaptive" | "enabled" | "disabled" } (or, deprecated, ` +
        `"adaptive", "disabled" or { maxTokens: n })`,
      value,
    );
  }
  const t = value as Record<string, unknown>;
  if (t.type === undefined && "maxTokens" in t) {
    return [`--max-thinking-tokens=${positiveInteger("thinking.maxTokens", t.maxTokens)}`];
  }
  const type = oneOf("thinking.type", t.type, ["adaptive", "enabled", "disabled"]);
  if (type === "disabled") return ["--thinking=disabled"];
  const args = type === "enabled" && t.budgetTokens !== undefined
    ? [`--max-thinking-tokens=${positiveInteger("thinking.budgetTokens", t.budgetTokens)}`]
    : ["--thinking=adaptive"];
  if (t.display !== undefined) {
    const display = oneOf("thinking.display", t.display, ["summarized", "omitted", "highlights"]);
    args.push(`--thinking-display=${display}`);
  }
  return args;
}

export function toolsArg(value: unknown): string {
  if (value === "default") return "--tools=default";
  if (Array.isArray(value)) return `--tools=${texts("tools", value).join(",")}`;
  if (typeof value === "object" && value !== null) {
    const preset = value as { type?: unknown; preset?: unknown };
    if (preset.type === "preset" && preset.preset === "claude_code") return "--tools=default";
  }
  throw invalid(
    `tools must be a list of tool names or { type: "preset", preset: "claude_code" }`,
    value,
  );
}

/** Skill names as the official SDK checks them: the Skill tool trims names, rules use `(),`. */
export function skillNames(value: unknown): string[] | "all" {
  if (value === "all") return "all";
  return texts("skills", value).map((name, i) => {
    if (name !== name.trim() || [...name].some(unfitForRule)) {
      throw invalid(
        `skills[${i}] must be a skill name without surrounding spaces, parentheses, commas ` +
          `or control characters`,
        name,
      );
    }
    return name;
  });
}

/* Parentheses and commas delimit rules; control characters cannot be in one. */
function unfitForRule(char: string): boolean {
  const code = char.charCodeAt(0);
  return "(),".includes(char) || code <= 0x1f || (code >= 0x7f && code <= 0x9f);
}

export function pluginArg(i: number, value: unknown): string {
  const plugin = record(`plugins[${i}]`, value);
  if (plugin.type !== "local") {
    throw invalid(`plugins[${i}].type must be "local" (the only plugin type)`, plugin.type);
  }
  const path = text(`plugins[${i}].path`, plugin.path);
  return flag(`plugins[${i}].skipMcpDiscovery`, plugin.skipMcpDiscovery)
    ? `--plugin-dir-no-mcp=${path}`
    : `--plugin-dir=${path}`;
}

export type ViaFile = (name: string, contents: string) => string;

/** An object or JSON text goes to a private file; any other string is a path, passed as is. */
export function jsonArg(name: string, value: unknown, file: string, viaFile: ViaFile): string {
  let object: unknown = value;
  if (typeof value === "string") {
    if (!isJsonText(text(name, value))) return value;
    object = parseObject(name, value);
  }
  const encoded = json(name, object);
  if (name === "mcpConfig") {
    const servers = (object as { mcpServers?: unknown }).mcpServers;
    if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
      throw invalid(
        `mcpConfig must look like { mcpServers: { name: config } }; ` +
          `wrap the servers in an mcpServers object`,
      );
    }
  }
  return viaFile(file, encoded);
}

export function settingsArg(
  settings: JsonObject | string | undefined,
  sandbox: SandboxSettings | undefined,
  viaFile: ViaFile,
): string | undefined {
  if (sandbox === undefined) {
    return settings === undefined
      ? undefined
      : jsonArg("settings", settings, "settings.json", viaFile);
  }
  record("sandbox", sandbox);
  let base: Record<string, unknown> = {};
  if (typeof settings === "string") {
    if (!isJsonText(text("settings", settings))) {
      throw invalid(
        "sandbox cannot be merged into a settings file path; put the sandbox block in that " +
          "file, or pass settings as an object",
      );
    }
    base = parseObject("settings", settings);
  } else if (settings !== undefined) {
    base = record("settings", settings);
  }
  return jsonArg("settings", mergeSandbox(base, sandbox), "settings.json", viaFile);
}

export function outputSchema(o: CliOptions): string | undefined {
  const format = o.outputFormat === undefined ? undefined : record("outputFormat", o.outputFormat);
  if (format !== undefined && format.type !== "json_schema") {
    throw invalid(`outputFormat.type must be "json_schema"`, format.type);
  }
  const schema = either(["outputFormat", "jsonSchema"], format?.schema, o.jsonSchema);
  if (format !== undefined && schema === undefined) throw invalid("outputFormat needs a schema");
  return schema === undefined
    ? undefined
    : json(format ? "outputFormat.schema" : "jsonSchema", schema);
}

export function toolConfigEnv(value: unknown): Record<string, string> {
  const ask = record("toolConfig", value).askUserQuestion;
  if (ask === undefined) return {};
  const format = record("toolConfig.askUserQuestion", ask).previewFormat;
  if (format === undefined) return {};
  return {
    CLAUDE_CODE_QUESTION_PREVIEW_FORMAT: oneOf(
      "toolConfig.askUserQuestion.previewFormat",
      format,
      ["markdown", "html"],
    ),
  };
}

export function extraArgs(value: unknown): string[] {
  if (Array.isArray(value)) {
    return value.map((arg, i) => {
      if (typeof arg !== "string") throw wrongType(`extraArgs[${i}]`, "a string", arg);
      return noNul(`extraArgs[${i}]`, arg);
    });
  }
  return Object.entries(record("extraArgs", value)).map(([name, arg]) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(name)) {
      throw invalid(`extraArgs keys must be flag names without the leading --`, name);
    }
    if (arg === null) return `--${name}`;
    if (typeof arg !== "string") throw wrongType(`extraArgs.${name}`, "a string or null", arg);
    return `--${name}=${noNul(`extraArgs.${name}`, arg)}`;
  });
}
