// This module is browser compatible.
/**
 * The `stream_event` frames of a streamed text reply (with
 * `--include-partial-messages`), as Claude Code 2.1.332 writes them. Part of
 * the frame builders catalogue (`frames.ts`).
 *
 * @module
 */

import type { StreamEventFrame } from "../protocol/messages.ts";
import { DEFAULT_MODEL, DEFAULT_SESSION_ID, messageUsage, nextId } from "./_frame_defaults.ts";

/** Options of {@linkcode streamTextDeltaFrames}. */
export interface StreamFramesOptions {
  /** The session id. @default {DEFAULT_SESSION_ID} */
  sessionId?: string;
  /** The Messages-API message id. @default {a fresh "msg_scripted_N"} */
  messageId?: string;
  /** The model. @default {"claude-opus-5-5"} */
  model?: string;
  /** Characters (code points) per `text_delta`. @default {6} */
  chunkSize?: number;
  /** The content block index. @default {0} */
  index?: number;
}

/**
 * Builds the `stream_event` frames of one streamed text reply (as with
 * `--include-partial-messages`): `message_start`, `content_block_start`,
 * one `content_block_delta` per piece, `content_block_stop`,
 * `message_delta`, `message_stop`. The real CLI also writes the complete
 * `assistant` frame before `content_block_stop`; add it with
 * {@linkcode assistantTextFrame} if the test needs it.
 *
 * @param text The full text; split into pieces of `chunkSize` characters.
 * @param options Session id, message id, model, piece size, block index.
 * @returns The frames, in order.
 *
 * @example Stream a reply in pieces
 * ```ts
 * import { streamTextDeltaFrames } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frames = streamTextDeltaFrames("Hello there", { chunkSize: 5 });
 * const kinds = frames.map((f) => f.event.type);
 * assert.deepEqual(kinds, [
 *   "message_start", "content_block_start",
 *   "content_block_delta", "content_block_delta", "content_block_delta",
 *   "content_block_stop", "message_delta", "message_stop",
 * ]);
 * ```
 */
export function streamTextDeltaFrames(
  text: string,
  options: StreamFramesOptions = {},
): StreamEventFrame[] {
  const messageId = options.messageId ?? nextId("msg_scripted");
  const sessionId = options.sessionId ?? DEFAULT_SESSION_ID;
  const index = options.index ?? 0;
  const size = Math.max(1, Math.floor(options.chunkSize ?? 6));
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  const events: StreamEventFrame["event"][] = [
    {
      type: "message_start",
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model: options.model ?? DEFAULT_MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: messageUsage(),
      },
    },
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...pieces.map((piece) => ({
      type: "content_block_delta",
      index,
      delta: { type: "text_delta", text: piece },
    })),
    { type: "content_block_stop", index },
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 7 },
    },
    { type: "message_stop" },
  ];
  return events.map((event) => ({
    type: "stream_event",
    event,
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: crypto.randomUUID(),
    api_message_id: messageId,
  }));
}
