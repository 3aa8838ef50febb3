/**
 * {@linkcode chatHandler}: the server side of a `useChat` front end, for
 * `Deno.serve`, Workers or any `(request) => Response` router.
 *
 * @module
 */

import { isDuplexError } from "../../src/errors.ts";
import { messageOf } from "../../src/_values.ts";
import type { ChatSessions } from "./chat_sessions.ts";
import { ChatRequestError, parseChatRequest, readBody } from "./_chat_request.ts";
import { toUIMessageStream, uiMessageStreamResponse } from "./ui_message_stream.ts";

/** Options of {@linkcode chatHandler}. */
export interface ChatHandlerOptions {
  /** The largest request body read, in bytes. @default {1048576} */
  readonly maxBodyBytes?: number;
  /**
   * The text of an `error` chunk for an error during the turn (a browser
   * sees it: keep secrets out).
   *
   * @default {the error's message}
   */
  readonly onError?: (error: unknown) => string;
  /** Headers added to every answer (for example CORS). */
  readonly headers?: HeadersInit;
}

/** HTTP status of each error the chats reject a request with. */
const STATUS: Readonly<Record<string, number>> = {
  "invalid_argument": 400,
  "not_found": 404,
  "turn_in_flight": 409,
  "pool_exhausted": 503,
  "timeout": 503,
  "closed": 503,
};

/**
 * A handler for the requests `useChat` POSTs (its default transport): the
 * body's chat id is the conversation (kept warm in the chats' pool); a new
 * user message starts a turn; an assistant message whose tool parts are
 * `approval-responded` (after `addToolApprovalResponse`, sent again with
 * `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`)
 * answers the approvals its turn paused on, and the turn goes on in the
 * same assistant message. The request's signal (the stop button) interrupts
 * the turn. The answer is the UI message stream (Server-Sent Events).
 *
 * Refused before anything runs, as JSON `{ error }`: 405 for a method other
 * than POST, 415 without a JSON body, 413 over `maxBodyBytes`, 400 for a
 * body that is no chat request, 404 for approvals the chat does not wait
 * on, 409 while another request streams the chat, 503 when the pool is
 * full or closed. An error during the turn is an `error` chunk.
 *
 * @param chats The chats (their pool, their approval policy).
 * @param options Bounds and error text.
 * @returns The handler.
 *
 * @example A chat turn over a stand-in CLI, as `useChat` would post it
 * ```ts
 * import { ChatSessions, chatHandler } from "@duplex/claude/ai-sdk";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * await using chats = new ChatSessions({ launch: () => new ScriptedCli({ echo: true }).transport });
 * const handle = chatHandler(chats);
 * const response = await handle(new Request("http://chat.test/api/chat", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({
 *     id: "chat-1",
 *     messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Hi" }] }],
 *   }),
 * }));
 * assert.equal(response.headers.get("content-type"), "text/event-stream");
 * assert.match(await response.text(), /"delta":"Echo: Hi"/);
 *
 * const refused = await handle(new Request("http://chat.test/api/chat", { method: "GET" }));
 * assert.equal(refused.status, 405);
 * ```
 */
export function chatHandler(
  chats: ChatSessions,
  options: ChatHandlerOptions = {},
): (request: Request) => Promise<Response> {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new RangeError("Cannot make the chat handler: maxBodyBytes must be a positive integer");
  }
  const onError = options.onError ?? messageOf;
  return async (request) => {
    const headers = new Headers(options.headers);
    try {
      if (request.method !== "POST") throw new ChatRequestError(405, "Cannot chat: POST only");
      const chat = parseChatRequest(await readBody(request, maxBodyBytes));
      const { signal } = request;
      const parts = chat.kind === "send"
        ? await chats.send(chat.chatId, chat.content, { signal })
        : await chats.approve(chat.chatId, chat.approvals, { signal });
      const messageId = chat.kind === "send" ? crypto.randomUUID() : undefined;
      return uiMessageStreamResponse(toUIMessageStream(parts, { messageId, onError }), {
        headers,
      });
    } catch (error) {
      const status = error instanceof ChatRequestError
        ? error.status
        : isDuplexError(error)
        ? STATUS[error.kind] ?? 500
        : 500;
      if (status === 405) headers.set("allow", "POST");
      headers.set("content-type", "application/json; charset=utf-8");
      const message = status === 500 ? onError(error) : messageOf(error);
      return new Response(JSON.stringify({ error: message }), { status, headers });
    }
  };
}
