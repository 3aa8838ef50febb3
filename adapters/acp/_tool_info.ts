/**
 * What an editor shows of a Claude Code tool call: its ACP `kind`, title,
 * locations and content (diffs for edits), from the tool's name and input;
 * and what a `tool_result` adds to it. The same table as
 * `claude-agent-acp`'s `toolInfoFromToolUse` / `toolUpdateFromToolResult`
 * (`dist/tools.js`), plus the CLI's own structured patch for `Edit` results
 * (`tool_use_result.structuredPatch` of the `user` frame) instead of a hook.
 *
 * @module
 */

import type { ContentBlock, ToolCallContent, ToolCallLocation, ToolKind } from "./_acp.ts";
import { isRecord } from "../../src/_values.ts";

/** The display part of a `tool_call` / `tool_call_update`. */
export interface ToolInfo {
  title: string;
  kind: ToolKind;
  content: ToolCallContent[];
  locations: ToolCallLocation[];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function textContent(value: string): ToolCallContent {
  return { type: "content", content: { type: "text", text: value } };
}

/**
 * A path relative to `cwd` when it is inside it, else the path as given.
 *
 * @param path The absolute path.
 * @param cwd The session's folder.
 * @returns The path to show.
 */
export function displayPath(path: string, cwd: string | undefined): string {
  if (!cwd) return path;
  const root = cwd.endsWith("/") ? cwd.slice(0, -1) : cwd;
  if (path === root) return ".";
  return path.startsWith(root + "/") ? path.slice(root.length + 1) : path;
}

/**
 * The ACP view of a tool call.
 *
 * @param name The tool's name (`Bash`, `Edit`, `mcp__server__tool`, …).
 * @param input The tool's input (possibly still empty while it streams).
 * @param options The session's folder, and the tool use id when the client shows terminals.
 * @returns Title, kind, content and locations.
 */
export function toolInfo(
  name: string,
  input: Readonly<Record<string, unknown>>,
  options: { cwd?: string | undefined; terminalId?: string | undefined } = {},
): ToolInfo {
  const path = text(input.file_path) ?? text(input.notebook_path);
  const shown = path === undefined ? undefined : displayPath(path, options.cwd);
  const at: ToolCallLocation[] = path === undefined ? [] : [{ path }];
  switch (name) {
    case "Agent":
    case "Task":
      return {
        title: text(input.description) ?? "Task",
        kind: "think",
        content: text(input.prompt) === undefined ? [] : [textContent(input.prompt as string)],
        locations: [],
      };
    case "Bash":
      return {
        title: text(input.command) ?? "Terminal",
        kind: "execute",
        content: options.terminalId !== undefined
          ? [{ type: "terminal", terminalId: options.terminalId }]
          : text(input.description) === undefined
          ? []
          : [textContent(input.description as string)],
        locations: [],
      };
    case "Read": {
      const offset = typeof input.offset === "number" ? input.offset : undefined;
      const limit = typeof input.limit === "number" && input.limit > 0 ? input.limit : undefined;
      const range = limit !== undefined
        ? ` (${offset ?? 1} - ${(offset ?? 1) + limit - 1})`
        : offset !== undefined
        ? ` (from line ${offset})`
        : "";
      return {
        title: `Read ${shown ?? "File"}${range}`,
        kind: "read",
        content: [],
        locations: path === undefined ? [] : [{ path, line: offset ?? 1 }],
      };
    }
    case "Write":
      return {
        title: shown === undefined ? "Write" : `Write ${shown}`,
        kind: "edit",
        content: path !== undefined && typeof input.content === "string"
          ? [{ type: "diff", path, oldText: null, newText: input.content }]
          : [],
        locations: at,
      };
    case "Edit":
    case "MultiEdit":
    case "NotebookEdit":
      return {
        title: shown === undefined ? name : `${name === "NotebookEdit" ? "Edit" : name} ${shown}`,
        kind: "edit",
        content: path !== undefined &&
            (typeof input.old_string === "string" || typeof input.new_string === "string")
          ? [{
            type: "diff",
            path,
            oldText: text(input.old_string) ?? null,
            newText: typeof input.new_string === "string" ? input.new_string : "",
          }]
          : [],
        locations: at,
      };
    case "Glob":
    case "Grep": {
      const where = text(input.path);
      const pattern = text(input.pattern);
      return {
        title: [name === "Glob" ? "Find" : "grep", where, pattern].filter(Boolean).join(" "),
        kind: "search",
        content: [],
        locations: where === undefined ? [] : [{ path: where }],
      };
    }
    case "WebFetch":
      return {
        title: text(input.url) === undefined ? "Fetch" : `Fetch ${input.url}`,
        kind: "fetch",
        content: text(input.prompt) === undefined ? [] : [textContent(input.prompt as string)],
        locations: [],
      };
    case "WebSearch":
      return { title: `"${text(input.query) ?? ""}"`, kind: "fetch", content: [], locations: [] };
    case "TodoWrite":
      return {
        title: Array.isArray(input.todos)
          ? `Update TODOs: ${
            input.todos.map((todo) => isRecord(todo) ? String(todo.content ?? "") : "").join(", ")
          }`
          : "Update TODOs",
        kind: "think",
        content: [],
        locations: [],
      };
    case "ExitPlanMode":
      return {
        title: "Ready to code?",
        kind: "switch_mode",
        content: text(input.plan) === undefined ? [] : [textContent(input.plan as string)],
        locations: [],
      };
    default:
      return { title: name || "Unknown Tool", kind: "other", content: [], locations: [] };
  }
}

/** Fences `value` so no run of backticks inside it ends the fence. */
function fenced(value: string, language = ""): string {
  let fence = "```";
  for (const [run] of value.matchAll(/`{3,}/g)) {
    while (run.length >= fence.length) fence += "`";
  }
  return `${fence}${language}\n${value.replace(/\n$/, "")}\n${fence}`;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.flatMap((block) =>
    isRecord(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : []
  ).join("\n");
}

function resultBlocks(content: unknown): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block): ContentBlock[] => {
    if (!isRecord(block)) return [];
    if (block.type === "text" && typeof block.text === "string") {
      return [{ type: "text", text: block.text }];
    }
    const source = block.source;
    if (
      block.type === "image" && isRecord(source) && source.type === "base64" &&
      typeof source.data === "string" && typeof source.media_type === "string"
    ) {
      return [{ type: "image", data: source.data, mimeType: source.media_type }];
    }
    return [{ type: "text", text: JSON.stringify(block) }];
  });
}

/**
 * Diffs from the structured patch the CLI reports for an `Edit` (in the
 * `user` frame's `tool_use_result`): one per hunk, with its line.
 *
 * @param result The frame's `tool_use_result`.
 * @returns The diffs and their locations (empty when there is no patch).
 */
export function patchDiffs(
  result: unknown,
): { content: ToolCallContent[]; locations: ToolCallLocation[] } {
  const content: ToolCallContent[] = [];
  const locations: ToolCallLocation[] = [];
  if (!isRecord(result) || typeof result.filePath !== "string") return { content, locations };
  const path = result.filePath;
  for (const hunk of Array.isArray(result.structuredPatch) ? result.structuredPatch : []) {
    if (!isRecord(hunk) || !Array.isArray(hunk.lines)) continue;
    const before: string[] = [];
    const after: string[] = [];
    for (const line of hunk.lines) {
      if (typeof line !== "string") continue;
      if (!line.startsWith("+")) before.push(line.slice(1));
      if (!line.startsWith("-")) after.push(line.slice(1));
    }
    content.push({
      type: "diff",
      path,
      oldText: before.join("\n") || null,
      newText: after.join("\n"),
    });
    if (typeof hunk.newStart === "number") locations.push({ path, line: hunk.newStart });
  }
  return { content, locations };
}

/**
 * What a `tool_result` adds to its tool call: the output as content (a
 * console block for `Bash`, fenced file text for `Read`, the error fenced),
 * or the diffs of an `Edit`.
 *
 * @param name The tool's name.
 * @param block The `tool_result` block.
 * @param toolUseResult The frame's `tool_use_result`, when it has one.
 * @returns Content and locations to send in the `tool_call_update`.
 */
export function toolResultInfo(
  name: string,
  block: Readonly<Record<string, unknown>>,
  toolUseResult: unknown,
): { content?: ToolCallContent[]; locations?: ToolCallLocation[] } {
  const output = resultText(block.content);
  if (block.is_error === true) return output ? { content: [textContent(fenced(output))] } : {};
  switch (name) {
    case "Edit":
    case "MultiEdit":
    case "Write": {
      const diffs = patchDiffs(toolUseResult);
      return diffs.content.length > 0 ? diffs : {};
    }
    case "Bash":
      return output.trim() ? { content: [textContent(fenced(output, "console"))] } : {};
    case "Read":
      return output ? { content: [textContent(fenced(output))] } : {};
    case "TodoWrite":
      return {};
    default: {
      const blocks = resultBlocks(block.content);
      return blocks.length > 0
        ? { content: blocks.map((content) => ({ type: "content", content })) }
        : {};
    }
  }
}
