/**
 * One turn's session events as the AI SDK's language-model stream parts
 * (`TurnPart`): the CLI's `stream_event` deltas as text and
 * reasoning starts, deltas and ends; `tool_use` blocks as provider-executed
 * tool calls (their input streamed, then complete); a deferred permission
 * request as a `tool-approval-request`; `tool_result` blocks as tool results;
 * the `result` frame as `finish` with usage. Without partial messages (no
 * `stream_event` frames) each `assistant` frame's text arrives whole.
 *
 * @module
 */

import type { JsonValue, TurnFinishReason, TurnPart, TurnUsage } from "./ai_sdk_types.ts";
import { isRecord } from "../../src/_values.ts";
import type { SessionEvent } from "../../src/session/events.ts";
import type { TurnResult } from "../../src/session/turn.ts";

/** The provider name: the key of `providerOptions` and `providerMetadata`. */
export const PROVIDER = "claude-code";

/** What a content block being streamed became. */
type OpenBlock = { readonly kind: "text" | "reasoning" | "tool"; readonly id: string };

/**
 * Translates one turn's events, in order, into stream parts. Stateful: it
 * remembers the blocks it has opened, the tool calls it has announced, and
 * the tool calls a person denied (their results become denials).
 */
export class TurnParts {
  /** Tool names by tool call id (results name their tool). */
  readonly #tools = new Map<string, string>();
  /** Tool calls announced complete (`tool-call`). */
  readonly #called = new Set<string>();
  /** Message ids whose content arrived as `stream_event` deltas. */
  readonly #streamed = new Set<string>();
  /** Open blocks of the message being streamed, by index. */
  readonly #open = new Map<number, OpenBlock>();
  /** Tool calls whose approval a person denied. */
  readonly #denied = new Set<string>();
  #message = "";
  #blocks = 0;

  /**
   * Marks a tool call as denied by a person: its result is a denial.
   *
   * @param toolCallId The tool call.
   */
  deny(toolCallId: string): void {
    this.#denied.add(toolCallId);
  }

  /**
   * The parts of one event (none for events a chat does not show).
   *
   * @param event A session event of the turn.
   * @param deferred Whether this event is a permission request left for a person.
   * @returns The parts, in order.
   */
  parts(event: SessionEvent, deferred = false): TurnPart[] {
    switch (event.type) {
      case "stream_event":
        return event.parent_tool_use_id ? [] : this.#stream(event.event);
      case "assistant":
        return event.parent_tool_use_id ? [] : this.#assistant(event.message);
      case "user":
        return event.parent_tool_use_id ? [] : this.#results(event.message.content);
      case "permission_request": {
        if (!deferred) return [];
        const { requestId, toolUseId, toolName, input } = event.request;
        const toolCallId = toolUseId ?? requestId;
        return [
          ...this.#call(toolCallId, toolName, input),
          { type: "tool-approval-request", approvalId: requestId, toolCallId },
        ];
      }
      default:
        return [];
    }
  }

  #stream(event: Record<string, unknown>): TurnPart[] {
    const index = typeof event.index === "number" ? event.index : -1;
    switch (event.type) {
      case "message_start": {
        const id = isRecord(event.message) && typeof event.message.id === "string"
          ? event.message.id
          : `msg_${++this.#blocks}`;
        this.#message = id;
        this.#streamed.add(id);
        this.#open.clear();
        return [];
      }
      case "content_block_start":
        return this.#startBlock(index, isRecord(event.content_block) ? event.content_block : {});
      case "content_block_delta": {
        const open = this.#open.get(index);
        const delta = isRecord(event.delta) ? event.delta : {};
        if (!open) return [];
        if (open.kind === "text" && typeof delta.text === "string") {
          return [{ type: "text-delta", id: open.id, delta: delta.text }];
        }
        if (open.kind === "reasoning" && typeof delta.thinking === "string") {
          return [{ type: "reasoning-delta", id: open.id, delta: delta.thinking }];
        }
        if (open.kind === "tool" && typeof delta.partial_json === "string") {
          return [{ type: "tool-input-delta", id: open.id, delta: delta.partial_json }];
        }
        return [];
      }
      case "content_block_stop": {
        const open = this.#open.get(index);
        this.#open.delete(index);
        if (!open) return [];
        const end = open.kind === "text"
          ? "text-end"
          : open.kind === "reasoning"
          ? "reasoning-end"
          : "tool-input-end";
        return [{ type: end, id: open.id }];
      }
      default:
        return [];
    }
  }

  #startBlock(index: number, block: Record<string, unknown>): TurnPart[] {
    const id = `${this.#message}:${index}`;
    if (block.type === "text") {
      this.#open.set(index, { kind: "text", id });
      return [{ type: "text-start", id }];
    }
    if (block.type === "thinking") {
      this.#open.set(index, { kind: "reasoning", id });
      return [{ type: "reasoning-start", id }];
    }
    if (block.type === "tool_use" && typeof block.id === "string") {
      const toolName = typeof block.name === "string" ? block.name : "unknown";
      this.#tools.set(block.id, toolName);
      this.#open.set(index, { kind: "tool", id: block.id });
      return [{
        type: "tool-input-start",
        id: block.id,
        toolName,
        providerExecuted: true,
        dynamic: true,
      }];
    }
    return [];
  }

  #assistant(message: { id?: unknown; content?: unknown }): TurnPart[] {
    const streamed = typeof message.id === "string" && this.#streamed.has(message.id);
    const parts: TurnPart[] = [];
    const blocks = Array.isArray(message.content) ? message.content.filter(isRecord) : [];
    for (const block of blocks) {
      if (block.type === "tool_use" && typeof block.id === "string") {
        const name = typeof block.name === "string" ? block.name : "unknown";
        parts.push(...this.#call(block.id, name, block.input));
      } else if (!streamed && block.type === "text" && typeof block.text === "string") {
        const id = `${String(message.id ?? "msg")}:${++this.#blocks}`;
        parts.push({ type: "text-start", id }, { type: "text-delta", id, delta: block.text }, {
          type: "text-end",
          id,
        });
      } else if (!streamed && block.type === "thinking" && typeof block.thinking === "string") {
        const id = `${String(message.id ?? "msg")}:${++this.#blocks}`;
        parts.push(
          { type: "reasoning-start", id },
          { type: "reasoning-delta", id, delta: block.thinking },
          { type: "reasoning-end", id },
        );
      }
    }
    return parts;
  }

  #call(toolCallId: string, toolName: string, input: unknown): TurnPart[] {
    if (this.#called.has(toolCallId)) return [];
    this.#called.add(toolCallId);
    this.#tools.set(toolCallId, toolName);
    return [{
      type: "tool-call",
      toolCallId,
      toolName,
      input: JSON.stringify(input ?? {}),
      providerExecuted: true,
      dynamic: true,
    }];
  }

  #results(content: unknown): TurnPart[] {
    if (!Array.isArray(content)) return [];
    const parts: TurnPart[] = [];
    for (const block of content.filter(isRecord)) {
      if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      const toolCallId = block.tool_use_id;
      const denied = this.#denied.has(toolCallId);
      parts.push({
        type: "tool-result",
        toolCallId,
        toolName: this.#tools.get(toolCallId) ?? "unknown",
        result: resultText(block.content),
        isError: block.is_error === true,
        dynamic: true,
        ...(denied && { providerMetadata: { [PROVIDER]: { denied: true } } }),
      });
    }
    return parts;
  }
}

/**
 * A tool result's content as text (text blocks joined; other blocks named).
 *
 * @param content The `tool_result` block's `content`.
 * @returns The text.
 */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) =>
    isRecord(block) && typeof block.text === "string"
      ? block.text
      : `[${isRecord(block) ? String(block.type) : "block"}]`
  ).join("\n");
}

/**
 * The `finish` part (and an `error` part before it for a failed turn) of a
 * finished turn.
 *
 * @param result The turn's result.
 * @returns The parts.
 */
export function finishParts(result: TurnResult): { parts: TurnPart[] } {
  const parts: TurnPart[] = [];
  if (result.isError && !/^aborted/.test(result.terminalReason ?? "")) {
    const text = result.errors.join("; ") || result.text || `The turn failed (${result.subtype})`;
    parts.push({ type: "error", error: new Error(text) });
  }
  parts.push({
    type: "finish",
    usage: usageOf(result),
    finishReason: finishReasonOf(result),
    providerMetadata: { [PROVIDER]: metadataOf(result) },
  });
  return { parts };
}

/**
 * A turn's tokens as the AI SDK counts them.
 *
 * @param result The turn result.
 * @returns The usage.
 */
export function usageOf(result: TurnResult): TurnUsage {
  const { input, output, cacheRead, cacheCreation } = result.tokens;
  return {
    inputTokens: {
      total: input + cacheRead + cacheCreation,
      noCache: input,
      cacheRead,
      cacheWrite: cacheCreation,
    },
    outputTokens: { total: output, text: undefined, reasoning: undefined },
  };
}

/** Usage of a turn not finished yet (paused on an approval). */
export const NO_USAGE: TurnUsage = {
  inputTokens: {
    total: undefined,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

function finishReasonOf(result: TurnResult): TurnFinishReason {
  const raw = result.terminalReason ?? result.subtype;
  if (/^aborted/.test(result.terminalReason ?? "")) return { unified: "interrupted", raw };
  if (result.isError) return { unified: "error", raw };
  if (result.stopReason === "max_tokens") return { unified: "length", raw };
  return { unified: "stop", raw };
}

/**
 * What a finished turn tells beside its tokens: `providerMetadata["claude-code"]`.
 *
 * @param result The turn result.
 * @returns JSON fields.
 */
export function metadataOf(result: TurnResult): Record<string, JsonValue> {
  return {
    sessionId: result.sessionId ?? null,
    costUsd: result.costUsd,
    totalCostUsd: result.totalCostUsd,
    durationMs: result.durationMs,
    durationApiMs: result.durationApiMs,
    numTurns: result.numTurns,
    subtype: result.subtype,
    terminalReason: result.terminalReason ?? null,
    stopReason: result.stopReason,
    permissionDenials: result.permissionDenials.length,
  };
}
