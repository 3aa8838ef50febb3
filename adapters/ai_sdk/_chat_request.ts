/**
 * The body `useChat`'s default transport POSTs (`{ id, messages, trigger,
 * messageId, ...body }`), read with a bound and checked: the last message
 * is either the user's new message (its text and images) or the assistant
 * message whose tool parts carry approval answers.
 *
 * @module
 */

import type { ContentBlock } from "../../src/protocol/content.ts";
import { isRecord } from "../../src/_values.ts";
import type { ToolApproval } from "./_chat_turn.ts";

/** What a chat request asks for. */
export type ChatRequest =
  | { readonly kind: "send"; readonly chatId: string; readonly content: ContentBlock[] }
  | { readonly kind: "approve"; readonly chatId: string; readonly approvals: ToolApproval[] };

/** A request the handler refuses, with its HTTP status. */
export class ChatRequestError extends Error {
  /** The HTTP status (4xx). */
  readonly status: number;

  /**
   * @param status The status.
   * @param message What is wrong, for the client.
   */
  constructor(status: number, message: string) {
    super(message);
    this.name = "ChatRequestError";
    this.status = status;
  }
}

/** Image types a user message may carry (as `data:` URLs). */
const IMAGE = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=]+)$/;

/**
 * Reads the body as JSON, refusing more than `maxBytes` before reading it all.
 *
 * @param request The request.
 * @param maxBytes The bound.
 * @returns The parsed body.
 * @throws {ChatRequestError} 413 over the bound, 415 not JSON, 400 malformed.
 */
export async function readBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    throw new ChatRequestError(415, "Cannot read the chat request: send application/json");
  }
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ChatRequestError(400, "Cannot read the chat request: the body is not JSON");
  }
}

function tooLarge(maxBytes: number): ChatRequestError {
  return new ChatRequestError(413, `Cannot read the chat request: over ${maxBytes} bytes`);
}

/**
 * What a `useChat` body asks for.
 *
 * @param body The parsed body.
 * @returns The request.
 * @throws {ChatRequestError} 400 for a body that is not a chat request.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isRecord(body) || typeof body.id !== "string" || !Array.isArray(body.messages)) {
    throw bad("the body must be { id, messages }");
  }
  const chatId = body.id;
  const last = body.messages.at(-1);
  if (!isRecord(last) || !Array.isArray(last.parts)) {
    throw bad("the last message must have parts");
  }
  const parts = last.parts.filter(isRecord);
  if (last.role === "user") return { kind: "send", chatId, content: userContent(parts) };
  if (last.role === "assistant") {
    const approvals = parts.flatMap((part) => approvalOf(part));
    if (approvals.length === 0) {
      throw bad("the last message is the assistant's and answers no tool approval");
    }
    return { kind: "approve", chatId, approvals };
  }
  throw bad("the last message must be the user's or the assistant's");
}

function userContent(parts: Record<string, unknown>[]): ContentBlock[] {
  const content: ContentBlock[] = [];
  for (const part of parts) {
    if (part.type === "text" && typeof part.text === "string" && part.text.trim()) {
      content.push({ type: "text", text: part.text });
    } else if (part.type === "file" && typeof part.url === "string") {
      const image = IMAGE.exec(part.url);
      if (!image) throw bad("a file part must be a base64 data: URL of a PNG, JPEG, GIF or WebP");
      content.push({
        type: "image",
        source: { type: "base64", media_type: image[1]!, data: image[2]! },
      });
    }
  }
  if (content.length === 0) throw bad("the user's message has no text");
  return content;
}

function approvalOf(part: Record<string, unknown>): ToolApproval[] {
  const tool = part.type === "dynamic-tool" ||
    (typeof part.type === "string" && part.type.startsWith("tool-"));
  if (!tool || part.state !== "approval-responded" || !isRecord(part.approval)) return [];
  const { id, approved, reason } = part.approval;
  if (typeof id !== "string" || typeof approved !== "boolean") return [];
  return [{ approvalId: id, approved, ...(typeof reason === "string" && { reason }) }];
}

function bad(what: string): ChatRequestError {
  return new ChatRequestError(400, `Cannot read the chat request: ${what}`);
}
