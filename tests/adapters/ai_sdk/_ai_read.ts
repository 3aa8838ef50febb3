/**
 * Reads our chat answers with the `ai` package's own code: the SSE body
 * parsed and each chunk validated by `parseJsonEventStream` with
 * `uiMessageChunkSchema`, the chunks folded into a message by
 * `readUIMessageStream` (what `useChat` runs).
 *
 * @module
 */

import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  uiMessageChunkSchema,
} from "ai";
import type { UIMessageChunk } from "ai";

/** What a chat answer held. */
export interface ChatRead {
  /** Every chunk, validated. */
  readonly chunks: UIMessageChunk[];
  /** The assistant message after the last chunk. */
  readonly message: UIMessage;
}

/**
 * Reads a UI message stream response.
 *
 * @param response The answer (200, SSE).
 * @param message The message it continues (after an approval).
 * @returns Its chunks and the message.
 */
export async function readChat(response: Response, message?: UIMessage): Promise<ChatRead> {
  if (!response.ok || !response.body) {
    throw new Error(`The chat answered ${response.status}: ${await response.text()}`);
  }
  const chunks: UIMessageChunk[] = [];
  const parsed = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema })
    .pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (!result.success) throw result.error;
          chunks.push(result.value);
          controller.enqueue(result.value);
        },
      }),
    );
  let last: UIMessage | undefined = message;
  for await (
    const state of readUIMessageStream({
      stream: parsed,
      terminateOnError: false,
      ...(message && { message: structuredClone(message) }),
    })
  ) last = state;
  if (!last) throw new Error("The chat answered no message");
  return { chunks, message: last };
}

/**
 * A `useChat` POST: the chat id and its messages.
 *
 * @param url Where.
 * @param id The chat id.
 * @param messages The messages.
 * @param signal The stop button.
 * @returns The request.
 */
export function chatPost(
  url: string,
  id: string,
  messages: readonly unknown[],
  signal?: AbortSignal,
): Request {
  return new Request(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, messages, trigger: "submit-message" }),
    ...(signal && { signal }),
  });
}

/**
 * A user message of `useChat`.
 *
 * @param text Its text.
 * @returns The message.
 */
export function userMessage(text: string): UIMessage {
  return { id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] };
}

/**
 * The assistant message with every approval requested answered, as
 * `addToolApprovalResponse` leaves it.
 *
 * @param message The paused assistant message.
 * @param approved The answer.
 * @param reason Why.
 * @returns A copy, answered.
 */
export function answered(message: UIMessage, approved: boolean, reason?: string): UIMessage {
  const copy = structuredClone(message);
  for (const part of copy.parts) {
    if ("state" in part && part.state === "approval-requested") {
      const approval = (part as { approval: { id: string } }).approval;
      Object.assign(part, {
        state: "approval-responded",
        approval: { id: approval.id, approved, ...(reason && { reason }) },
      });
    }
  }
  return copy;
}
