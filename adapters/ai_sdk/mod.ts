/**
 * The AI SDK (npm `ai` 7) on Claude Code: a provider whose models are
 * conversations kept warm in a `SessionPool`, and the UI message stream a
 * `useChat` front end reads, with Claude Code's permission requests as the
 * AI SDK's own tool approvals.
 *
 * - {@linkcode claudeCode} / {@linkcode createClaudeCode}: the provider
 *   (language model specification `v4`): `streamText`, `generateText` and
 *   `toUIMessageStreamResponse()` run on a `DuplexSession`; a conversation
 *   id (`providerOptions["claude-code"].conversationId`, or the model's
 *   `conversationId`) keeps one CLI process per conversation across calls.
 * - {@linkcode ChatSessions}: the conversations (a `SessionPool` keyed by
 *   chat id) and their turns as stream parts; a turn pauses on a tool
 *   approval and the next request, carrying the answer, continues it.
 * - {@linkcode toUIMessageStream}, {@linkcode uiMessageStreamResponse}: a
 *   turn as UI message chunks, and those as a Server-Sent Events `Response`.
 * - {@linkcode chatHandler}: the `(request) => Response` a `useChat` page
 *   POSTs to (`Deno.serve`, Workers): bounded bodies, the chat id as the
 *   conversation, approvals answered with `addToolApprovalResponse`, the
 *   stop button (the request's signal) interrupting the turn.
 *
 * The subprocess adapter runs the CLI (`--allow-run`, `--allow-env`,
 * `--allow-read`).
 *
 * @example A chat server for useChat
 * ```ts
 * import { ChatSessions, chatHandler } from "@duplex/claude/ai-sdk";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * // A stand-in CLI; a real server gives the pool `process: { cwd, model }` instead.
 * await using chats = new ChatSessions({ launch: () => new ScriptedCli({ echo: true }).transport });
 * const handle = chatHandler(chats, { maxBodyBytes: 64 * 1024 });
 * // Deno.serve({ port: 8000 }, handle);
 * const answer = await handle(new Request("http://127.0.0.1/api/chat", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({
 *     id: "chat-1",
 *     messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Hello" }] }],
 *   }),
 * }));
 * assert.match(await answer.text(), /"type":"text-delta","id":"[^"]+","delta":"Echo: Hello"/);
 * ```
 *
 * @example streamText with a conversation kept warm
 * ```ts ignore
 * import { claudeCode } from "@duplex/claude/ai-sdk";
 * import { streamText } from "ai";
 *
 * const model = claudeCode("sonnet");
 * const options = { "claude-code": { conversationId: "user-42" } };
 * for (const prompt of ["My name is Ada.", "What is my name?"]) {
 *   const result = streamText({ model, prompt, providerOptions: options });
 *   for await (const text of result.textStream) console.log(text);
 * }
 * await claudeCode.close();
 * ```
 *
 * @module
 */

export {
  claudeCode,
  type ClaudeCodeLanguageModel,
  type ClaudeCodeProvider,
  type ClaudeCodeProviderOptions,
  type ClaudeCodeSettings,
  createClaudeCode,
} from "./claude_code.ts";
export {
  type ChatApproveOptions,
  type ChatSendOptions,
  ChatSessions,
  type ChatSessionsOptions,
  type ToolApproval,
} from "./chat_sessions.ts";
export { chatHandler, type ChatHandlerOptions } from "./chat_handler.ts";
export {
  toUIMessageStream,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessageStreamOptions,
  uiMessageStreamResponse,
} from "./ui_message_stream.ts";
export type {
  ClaudeCodeCallOptions,
  ClaudeCodeContent,
  ClaudeCodeGenerateResult,
  ClaudeCodeStreamResult,
} from "./claude_code.ts";
export type {
  CallWarning,
  FinishPart,
  JsonValue,
  ProviderMetadata,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  TurnFinishReason,
  TurnPart,
  TurnUsage,
  UIChunk,
} from "./ai_sdk_types.ts";
