// This module is browser compatible.
/**
 * The built-in `echo` behaviour of the scripted CLI: what Claude Code answers
 * when the model echoes every prompt. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import {
  assistantTextFrame,
  commandLifecycleFrame,
  controlError,
  controlSuccess,
  initFrame,
  resultFrame,
} from "./frames.ts";

const TURN_COST_USD = 0.000308;

/** Per-process state of the echo behaviour (costs are cumulative per process). */
export interface EchoState {
  sessionId: string;
  turns: number;
}

/**
 * The text of a user line: its string content, or its text blocks joined by newlines.
 *
 * @param frame A parsed user line.
 * @returns The text, possibly empty.
 */
export function userText(frame: Record<string, unknown>): string {
  const message = frame.message;
  if (!isRecord(message)) return "";
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const block of content) {
    if (isRecord(block) && block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    }
  }
  return texts.join("\n");
}

/**
 * What the echo CLI writes in answer to one line.
 *
 * @param state The process's echo state (mutated: turn count).
 * @param frame The line the session wrote.
 * @returns The frames to emit, possibly none.
 */
export function echoReply(state: EchoState, frame: Record<string, unknown>): unknown[] {
  const sessionId = state.sessionId;
  if (frame.type === "user") {
    state.turns += 1;
    const text = `Echo: ${userText(frame)}`;
    const uuid = typeof frame.uuid === "string" ? frame.uuid : undefined;
    const ids = uuid === undefined ? {} : { userMessageUuid: uuid };
    const totalCostUsd = Math.round(state.turns * TURN_COST_USD * 1e6) / 1e6;
    const frames: unknown[] = [];
    if (uuid !== undefined) {
      frames.push(commandLifecycleFrame(uuid, "queued", { sessionId }));
      frames.push(commandLifecycleFrame(uuid, "started", { sessionId }));
    }
    frames.push(
      initFrame({ sessionId, ...(uuid === undefined ? {} : { userMessageUuids: [uuid] }) }),
      assistantTextFrame(text, { sessionId, ...ids }),
      resultFrame({ text, sessionId, totalCostUsd, ...ids }),
    );
    if (uuid !== undefined) frames.push(commandLifecycleFrame(uuid, "completed", { sessionId }));
    return frames;
  }
  if (frame.type === "control_request" && typeof frame.request_id === "string") {
    const subtype = isRecord(frame.request) ? frame.request.subtype : undefined;
    if (subtype === "interrupt") return [controlSuccess(frame.request_id, { still_queued: [] })];
    if (subtype === "initialize") {
      return [controlSuccess(frame.request_id, {
        commands: [],
        agents: [],
        output_style: "default",
        available_output_styles: ["default"],
        models: [],
        account: { tokenSource: "none", apiKeySource: "ANTHROPIC_API_KEY" },
        claude_code_version: "2.1.332",
        current_permission_mode: "default",
        // As 2.1.332 answers an initialize with hooks.
        ...(isRecord(frame.request) && isRecord(frame.request.hooks)
          ? { hook_on_failure_supported: true, hooks_applied: true }
          : {}),
      })];
    }
    return [controlError(
      frame.request_id,
      `Unsupported control request subtype: ${String(subtype)}`,
      "unsupported_request",
    )];
  }
  return [];
}
