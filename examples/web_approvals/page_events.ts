/**
 * What the server tells the page over server-sent events: a few small JSON
 * messages made from the session's events, so the page needs no knowledge of
 * the CLI's frames. Every text in them is model or tool output: the page puts
 * it in the DOM as text, never as HTML.
 *
 * @module
 */

import type { PermissionRequest, SessionEvent } from "@duplex/claude";

/** One `key: value` line of a tool's input, both cut to a readable length. */
export type InputLine = readonly [key: string, value: string];

/** A message to the page. */
export type PageEvent =
  | {
    type: "hello";
    backend: string;
    sessionId: string | undefined;
    history: readonly HistoryEntry[];
    current: { id: number; prompt: string } | null;
  }
  | { type: "turn_start"; id: number; prompt: string }
  | { type: "block" }
  | { type: "delta"; text: string }
  | { type: "tool_use"; id: string; name: string; input: readonly InputLine[] }
  | { type: "tool_result"; toolUseId: string; text: string; isError: boolean }
  | PermissionCard
  | { type: "permission_resolved"; id: string; behavior: string; source: string }
  | { type: "turn_end"; id: number; summary: TurnSummary }
  | { type: "error"; message: string }
  | { type: "lagged"; count: number }
  | { type: "exit"; message: string };

/**
 * A permission request as its card shows it. Every text is the CLI's or a
 * configuration's words: the page sets it as text, never as HTML.
 */
export interface PermissionCard {
  readonly type: "permission";
  /** The request id. */
  readonly id: string;
  /** The tool's short name (the CLI's `displayName`, else the tool's name), for labels. */
  readonly toolName: string;
  /** The CLI's whole prompt sentence, or null: the page then writes "<toolName> wants to run". */
  readonly title: string | null;
  /** The CLI's subtitle (unless it only repeats the input's own description). */
  readonly subtitle: string;
  readonly toolUseId: string | null;
  readonly input: readonly InputLine[];
  /** Why the CLI asks, the path that made it ask. */
  readonly note: string;
  /** The MCP server behind the tool, or null; `source` "sdk" is this app's own server. */
  readonly mcpServer: { readonly name: string; readonly source: string } | null;
  /** The user's `permissions.ask` rule that asked (`Bash(rm:*)`, from where), or null. */
  readonly askedByRule: string | null;
  /** Deny is the default (focused, Enter denies); no one-key approve. */
  readonly defaultToNo: boolean;
  /** Whether "Always allow" is offered: the CLI suggested a rule and did not suppress it. */
  readonly canAlways: boolean;
}

/** How a turn ended, as the page shows it. */
export interface TurnSummary {
  /** The result text (the answer, or the error). */
  readonly text: string;
  /** Whether the turn failed. */
  readonly isError: boolean;
  /** This turn's cost in US dollars. */
  readonly costUsd: number;
  /** The session's cost so far. */
  readonly totalCostUsd: number;
  /** Wall time in the CLI. */
  readonly durationMs: number;
}

/** A finished turn, replayed to a page that (re)connects. */
export interface HistoryEntry {
  /** The turn's number. */
  readonly id: number;
  /** What the person asked. */
  readonly prompt: string;
  /** How it ended. */
  readonly summary: TurnSummary;
}

const MAX_VALUE = 600;
const MAX_LINES = 12;
const MAX_TOOL_OUTPUT = 2_000;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more)`;
}

/**
 * A tool's input as at most 12 short `key: value` lines (strings as they are,
 * anything else as JSON).
 *
 * @param input The input.
 * @returns The lines.
 */
export function compactInput(input: Readonly<Record<string, unknown>>): InputLine[] {
  const entries = Object.entries(input);
  const lines: InputLine[] = entries.slice(0, MAX_LINES).map(([key, value]) => [
    cut(key, 80),
    cut(typeof value === "string" ? value : JSON.stringify(value) ?? String(value), MAX_VALUE),
  ]);
  if (entries.length > MAX_LINES) lines.push(["…", `${entries.length - MAX_LINES} more fields`]);
  return lines;
}

/**
 * The card of a permission request.
 *
 * @param request The request.
 * @returns The page event.
 */
export function permissionEvent(request: PermissionRequest): PermissionCard {
  const subtitle = request.description === request.input.description
    ? ""
    : request.description ?? "";
  const note = [request.decisionReason, request.blockedPath]
    .filter((part): part is string => typeof part === "string" && part !== "")
    .join(" · ");
  const rule = request.matchedAskRule;
  const server = request.mcpServer;
  return {
    type: "permission",
    id: request.requestId,
    toolName: cut(request.displayName ?? request.toolName, 80),
    title: request.title === undefined ? null : cut(request.title, MAX_VALUE),
    subtitle: cut(subtitle, MAX_VALUE),
    toolUseId: request.toolUseId ?? null,
    input: compactInput(request.input),
    note: cut(note, MAX_VALUE),
    mcpServer: server ? { name: cut(server.name, 80), source: cut(server.source, 40) } : null,
    askedByRule: rule
      ? cut(
        `${rule.toolName}${rule.ruleContent === undefined ? "" : `(${rule.ruleContent})`}` +
          ` (${rule.source})`,
        MAX_VALUE,
      )
      : null,
    defaultToNo: request.defaultToNo === true,
    canAlways: request.suppressAlwaysAllowRule !== true && request.suggestions.length > 0,
  };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
}

function toolOutput(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => String(record(block).text ?? "")).join("\n");
}

/**
 * Turns the session's events into page events, for one page: it remembers
 * whether the turn streamed, so the complete `assistant` frames that follow
 * the deltas are not shown twice.
 */
export class PageEventMapper {
  #streamed = false;

  /**
   * The page events for one session event (often none).
   *
   * @param event The session's event.
   * @returns What to send.
   */
  map(event: SessionEvent): PageEvent[] {
    switch (event.type) {
      case "stream_event": {
        if (event.parent_tool_use_id) return []; // a sub-agent's text: not the answer
        const inner = event.event;
        if (inner.type === "content_block_start") {
          return record(inner.content_block).type === "text" ? [{ type: "block" }] : [];
        }
        const delta = record(inner.delta);
        if (inner.type !== "content_block_delta" || delta.type !== "text_delta") return [];
        this.#streamed = true;
        return [{ type: "delta", text: String(delta.text ?? "") }];
      }
      case "assistant": {
        if (event.parent_tool_use_id) return [];
        return event.message.content.flatMap((block): PageEvent[] => {
          if (block.type === "tool_use") {
            const { id, name, input } = block as { id: string; name: string; input: unknown };
            return [{ type: "tool_use", id, name, input: compactInput(record(input)) }];
          }
          if (block.type !== "text" || this.#streamed) return [];
          return [{ type: "block" }, { type: "delta", text: String(block.text) }];
        });
      }
      case "user": {
        if (event.parent_tool_use_id || typeof event.message.content === "string") return [];
        return event.message.content.flatMap((block): PageEvent[] => {
          if (block.type !== "tool_result") return [];
          const text = cut(toolOutput(block.content), MAX_TOOL_OUTPUT);
          return [{
            type: "tool_result",
            toolUseId: block.tool_use_id,
            text,
            isError: block.is_error === true,
          }];
        });
      }
      case "result":
        this.#streamed = false;
        return [];
      case "permission_request":
        return [permissionEvent(event.request)];
      case "permission_resolved":
        return [{
          type: "permission_resolved",
          id: event.requestId,
          behavior: event.behavior,
          source: event.source,
        }];
      case "lagged":
        return [{ type: "lagged", count: event.count }];
      case "exit": {
        const status = event.status;
        const message = status.state === "failed"
          ? `The session failed: ${status.error.message}`
          : "The session ended.";
        return [{ type: "exit", message }];
      }
      default:
        return [];
    }
  }
}
