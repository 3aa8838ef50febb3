/**
 * A turn's language-model parts as the AI SDK's UI message chunks (what
 * `useChat` reads), and those chunks as a Server-Sent Events `Response`.
 *
 * @module
 */

import type { FinishPart, TurnPart, UIChunk } from "./ai_sdk_types.ts";
import { messageOf } from "../../src/_values.ts";
import { PROVIDER } from "./_turn_parts.ts";

/** Options of {@linkcode toUIMessageStream}. */
export interface UIMessageStreamOptions {
  /**
   * The assistant message's id, sent in the `start` chunk. Leave it out when
   * the stream continues the last assistant message (after an approval).
   */
  readonly messageId?: string | undefined;
  /**
   * Metadata of the finished message, from the `finish` part's usage and
   * provider metadata.
   *
   * @default {`{ usage, ...providerMetadata["claude-code"] }`}
   */
  readonly messageMetadata?: (finish: FinishPart) => unknown;
  /**
   * The text of an `error` chunk (a browser sees it: keep secrets out).
   *
   * @default {the error's message}
   */
  readonly onError?: (error: unknown) => string;
}

/**
 * Maps a turn's language-model parts to UI message chunks: `start`,
 * `start-step`, text and reasoning starts, deltas and ends, tool input
 * start, delta and available (Claude Code's tools are provider-executed and
 * dynamic), `tool-approval-request`, tool output available, error or
 * denied, `error`, `finish-step`, and `finish` with the finish reason and
 * usage and cost as message metadata.
 *
 * @param parts The parts (`ChatSessions.send` / `approve`, or a provider stream).
 * @param options The message id, metadata, error text.
 * @returns The chunks.
 *
 * @example A scripted turn as UI chunks
 * ```ts
 * import { ChatSessions, toUIMessageStream } from "@duplex/claude/ai-sdk";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * await using chats = new ChatSessions({ launch: () => new ScriptedCli({ echo: true }).transport });
 * const chunks = await Array.fromAsync(
 *   toUIMessageStream(await chats.send("c1", "Hi"), { messageId: "m1" }),
 * );
 * assert.deepEqual(chunks.map((c) => c.type), [
 *   "start", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish",
 * ]);
 * ```
 */
export function toUIMessageStream(
  parts: ReadableStream<TurnPart>,
  options: UIMessageStreamOptions = {},
): ReadableStream<UIChunk> {
  const onError = options.onError ?? messageOf;
  const metadata = options.messageMetadata ?? defaultMetadata;
  return parts.pipeThrough(
    new TransformStream<TurnPart, UIChunk>({
      start(controller) {
        controller.enqueue(
          options.messageId === undefined
            ? { type: "start" }
            : { type: "start", messageId: options.messageId },
        );
        controller.enqueue({ type: "start-step" });
      },
      transform(part, controller) {
        for (const chunk of chunksOf(part, onError, metadata)) controller.enqueue(chunk);
      },
    }),
  );
}

function chunksOf(
  part: TurnPart,
  onError: (error: unknown) => string,
  metadata: (finish: FinishPart) => unknown,
): UIChunk[] {
  switch (part.type) {
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return [{ type: part.type, id: part.id }];
    case "text-delta":
    case "reasoning-delta":
      return [{ type: part.type, id: part.id, delta: part.delta }];
    case "tool-input-start":
      return [{
        type: "tool-input-start",
        toolCallId: part.id,
        toolName: part.toolName,
        providerExecuted: true,
        dynamic: true,
      }];
    case "tool-input-delta":
      return [{ type: "tool-input-delta", toolCallId: part.id, inputTextDelta: part.delta }];
    case "tool-call":
      return [{
        type: "tool-input-available",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: parseInput(part.input),
        providerExecuted: true,
        dynamic: true,
      }];
    case "tool-approval-request":
      return [{ type: part.type, approvalId: part.approvalId, toolCallId: part.toolCallId }];
    case "tool-result": {
      const { toolCallId } = part;
      if (part.providerMetadata?.[PROVIDER]?.denied) {
        return [{ type: "tool-output-denied", toolCallId }];
      }
      if (part.isError) {
        return [{
          type: "tool-output-error",
          toolCallId,
          errorText: String(part.result),
          providerExecuted: true,
          dynamic: true,
        }];
      }
      return [{
        type: "tool-output-available",
        toolCallId,
        output: part.result,
        providerExecuted: true,
        dynamic: true,
      }];
    }
    case "error":
      return [{ type: "error", errorText: onError(part.error) }];
    case "finish":
      return [{ type: "finish-step" }, {
        type: "finish",
        finishReason: part.finishReason.unified,
        messageMetadata: metadata(part),
      }];
    default:
      return [];
  }
}

function parseInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function defaultMetadata(finish: FinishPart): unknown {
  const { inputTokens, outputTokens } = finish.usage;
  return {
    usage: {
      inputTokens: inputTokens.total ?? null,
      outputTokens: outputTokens.total ?? null,
      cacheReadTokens: inputTokens.cacheRead ?? null,
      cacheWriteTokens: inputTokens.cacheWrite ?? null,
    },
    ...finish.providerMetadata?.[PROVIDER],
  };
}

/** The headers of a UI message stream, as the AI SDK sends them. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/**
 * A `Response` that streams UI message chunks as Server-Sent Events (one
 * `data:` line of JSON each, then `data: [DONE]`), as `useChat`'s default
 * transport reads them.
 *
 * @param chunks The chunks.
 * @param init More headers, a status.
 * @returns The response.
 *
 * @example A response of two chunks
 * ```ts
 * import { uiMessageStreamResponse } from "@duplex/claude/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * const response = uiMessageStreamResponse(
 *   ReadableStream.from([{ type: "start" as const }, { type: "finish" as const }]),
 * );
 * assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
 * assert.equal(
 *   await response.text(),
 *   'data: {"type":"start"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n',
 * );
 * ```
 */
export function uiMessageStreamResponse(
  chunks: ReadableStream<UIChunk>,
  init: ResponseInit = {},
): Response {
  const body = chunks.pipeThrough(
    new TransformStream<UIChunk, string>({
      transform(chunk, controller) {
        controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
      },
      flush(controller) {
        controller.enqueue("data: [DONE]\n\n");
      },
    }),
  ).pipeThrough(new TextEncoderStream());
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) {
    if (!headers.has(name)) headers.set(name, value);
  }
  return new Response(body, { ...init, headers });
}
