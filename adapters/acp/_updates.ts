/**
 * {@linkcode UpdateMapper}: the CLI's frames (live, or read back from a
 * transcript) as ACP `session/update`s: text and thinking deltas as agent
 * message and thought chunks, each `tool_use` as a `tool_call` (refined by a
 * `tool_call_update` once its input is complete), each `tool_result` as the
 * call's final `tool_call_update`, `TodoWrite` as a `plan`. One mapper per
 * ACP session: it remembers the tool calls it announced.
 *
 * @module
 */

import type { PlanEntry, SessionUpdate } from "./_acp.ts";
import { toolInfo, toolResultInfo } from "./_tool_info.ts";
import { isRecord } from "../../src/_values.ts";

type Frame = Readonly<Record<string, unknown>>;

/** Options of {@linkcode UpdateMapper}. */
export interface UpdateMapperOptions {
  /** The session's folder (titles show paths relative to it). */
  readonly cwd?: string;
  /** The client renders terminals (`_meta.terminal_output`): Bash calls name one. */
  readonly terminals?: boolean;
}

function blocksOf(frame: Frame): unknown[] {
  const message = frame.message;
  if (!isRecord(message)) return [];
  const content = message.content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}

/** Plan entries from a `TodoWrite` input. */
export function planEntries(input: Readonly<Record<string, unknown>>): PlanEntry[] {
  const todos = Array.isArray(input.todos) ? input.todos : [];
  return todos.flatMap((todo): PlanEntry[] => {
    if (!isRecord(todo) || typeof todo.content !== "string") return [];
    const status = todo.status === "in_progress" || todo.status === "completed"
      ? todo.status
      : "pending";
    return [{ content: todo.content, status, priority: "medium" }];
  });
}

/** Maps frames to updates, remembering the tool calls of one session. */
export class UpdateMapper {
  readonly #options: UpdateMapperOptions;
  readonly #tools = new Map<string, string>();
  /* Whether the message being streamed sent text or thinking deltas (its `assistant` frames then add only tools). */
  #streamed = false;

  /**
   * Makes a mapper.
   *
   * @param options The session's folder and the client's terminal support.
   */
  constructor(options: UpdateMapperOptions = {}) {
    this.#options = options;
  }

  /**
   * The updates of one live frame. Text and thinking come from the
   * `stream_event` deltas (the session runs with partial messages), so the
   * `assistant` frame of a streamed message adds only its tool calls (one
   * that was not streamed adds its text too); `user` frames add tool
   * results (the prompt itself is the client's own).
   *
   * @param event An event the session delivered (a frame).
   * @returns The updates, in order (often none).
   */
  live(event: object): SessionUpdate[] {
    const frame = event as Frame;
    switch (frame.type) {
      case "stream_event":
        return this.#withParent(frame, this.#stream(frame.event));
      case "assistant":
        return this.#withParent(frame, this.#assistant(frame, !this.#streamed));
      case "user":
        return this.#withParent(frame, this.#results(frame));
      case "result":
        // A turn cut off mid-stream (an interrupt) sends no message_stop: start afresh.
        this.#streamed = false;
        return [];
      default:
        return [];
    }
  }

  /**
   * The updates of one transcript message (a `session/load` replays them):
   * the user's text as user message chunks, the model's text and thinking
   * as whole chunks, tool calls and their results.
   *
   * @param entry A message of the session's history (`type` and `message`).
   * @returns The updates.
   */
  history(entry: object): SessionUpdate[] {
    const message = entry as Frame;
    if (message.type === "assistant") return this.#assistant(message, true);
    if (message.type !== "user") return [];
    const texts: SessionUpdate[] = [];
    for (const block of blocksOf(message)) {
      if (isRecord(block) && block.type === "text" && typeof block.text === "string") {
        texts.push({
          sessionUpdate: "user_message_chunk",
          content: { type: "text", text: block.text },
        });
      }
    }
    return [...texts, ...this.#results(message)];
  }

  #withParent(frame: Frame, updates: SessionUpdate[]): SessionUpdate[] {
    const parent = frame.parent_tool_use_id;
    if (typeof parent !== "string") return updates;
    return updates.map((update) => ({
      ...update,
      _meta: { ...update._meta, claudeCode: { parentToolUseId: parent } },
    }));
  }

  #stream(event: unknown): SessionUpdate[] {
    if (!isRecord(event)) return [];
    if (event.type === "message_start") this.#streamed = false;
    if (event.type === "content_block_start" && isRecord(event.content_block)) {
      const block = event.content_block;
      if (
        block.type === "tool_use" || block.type === "server_tool_use" ||
        block.type === "mcp_tool_use"
      ) {
        return this.#toolUse(block);
      }
      return [];
    }
    if (event.type !== "content_block_delta" || !isRecord(event.delta)) return [];
    const delta = event.delta;
    if (delta.type === "text_delta" && typeof delta.text === "string") {
      this.#streamed = true;
      return [{
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: delta.text },
      }];
    }
    if (delta.type === "thinking_delta" && typeof delta.thinking === "string") {
      this.#streamed = true;
      return [{
        sessionUpdate: "agent_thought_chunk",
        content: { type: "text", text: delta.thinking },
      }];
    }
    return [];
  }

  #assistant(frame: Frame, withText: boolean): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    for (const block of blocksOf(frame)) {
      if (!isRecord(block)) continue;
      if (withText && block.type === "text" && typeof block.text === "string") {
        updates.push({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: block.text },
        });
      } else if (withText && block.type === "thinking" && typeof block.thinking === "string") {
        updates.push({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: block.thinking },
        });
      } else if (
        block.type === "tool_use" || block.type === "server_tool_use" ||
        block.type === "mcp_tool_use"
      ) {
        updates.push(...this.#toolUse(block));
      }
    }
    return updates;
  }

  #toolUse(block: Readonly<Record<string, unknown>>): SessionUpdate[] {
    const id = block.id;
    const name = block.name;
    if (typeof id !== "string" || typeof name !== "string") return [];
    const input = isRecord(block.input) ? block.input : {};
    const known = this.#tools.has(id);
    this.#tools.set(id, name);
    if (name === "TodoWrite") {
      return Array.isArray(input.todos)
        ? [{ sessionUpdate: "plan", entries: planEntries(input) }]
        : [];
    }
    const terminal = name === "Bash" && this.#options.terminals === true;
    const info = toolInfo(name, input, {
      cwd: this.#options.cwd,
      terminalId: terminal ? id : undefined,
    });
    const meta = {
      claudeCode: { toolName: name },
      ...(terminal && !known ? { terminal_info: { terminal_id: id } } : {}),
    };
    return [
      known
        ? {
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          rawInput: input,
          ...info,
          _meta: meta,
        }
        : {
          sessionUpdate: "tool_call",
          toolCallId: id,
          status: "pending",
          rawInput: input,
          ...info,
          _meta: meta,
        },
    ];
  }

  #results(frame: Frame): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    for (const block of blocksOf(frame)) {
      if (!isRecord(block) || typeof block.tool_use_id !== "string") continue;
      if (!block.type || !String(block.type).endsWith("tool_result")) continue;
      const id = block.tool_use_id;
      const name = this.#tools.get(id);
      if (name === undefined || name === "TodoWrite") continue;
      const failed = block.is_error === true;
      const info = toolResultInfo(name, block, frame.tool_use_result);
      if (name === "Bash" && this.#options.terminals === true) {
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          _meta: { terminal_output: { terminal_id: id, data: textOf(block.content) } },
        });
      }
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: failed ? "failed" : "completed",
        rawOutput: block.content,
        ...info,
        _meta: {
          claudeCode: { toolName: name },
          ...(name === "Bash" && this.#options.terminals === true
            ? { terminal_exit: { terminal_id: id, exit_code: failed ? 1 : 0, signal: null } }
            : {}),
        },
      });
    }
    return updates;
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => isRecord(block) && typeof block.text === "string" ? block.text : "")
    .join("\n");
}
