/**
 * {@linkcode claudeCode} and {@linkcode createClaudeCode}: an AI SDK
 * provider (language model specification `v4`, the one `ai` 7 calls) whose
 * models are Claude Code conversations in a {@linkcode ChatSessions} pool.
 *
 * @module
 */

import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { isRecord } from "../../src/_values.ts";
import type { ConversationOptions } from "../subprocess/pool/pool_options.ts";
import { ChatSessions, type ChatSessionsOptions } from "./chat_sessions.ts";
import { planPrompt, settingWarnings } from "./_prompt.ts";
import { NO_USAGE, PROVIDER } from "./_turn_parts.ts";
import type {
  CallWarning,
  FinishPart,
  ProviderMetadata,
  ToolCallPart,
  ToolResultPart,
  TurnFinishReason,
  TurnPart,
  TurnUsage,
} from "./ai_sdk_types.ts";

/** Settings of one model: its conversation's options, and which conversation. */
export interface ClaudeCodeSettings extends Omit<ConversationOptions, "model"> {
  /**
   * The conversation every call of this model continues (a chat id), unless
   * a call names one in `providerOptions["claude-code"].conversationId`.
   * Without either, each call is its own conversation (the whole prompt
   * sent as one transcript, the process forgotten afterwards).
   */
  readonly conversationId?: string;
}

/** The provider options a call may give under `providerOptions["claude-code"]`. */
export interface ClaudeCodeProviderOptions {
  /** The conversation (chat id) this call continues or starts. */
  readonly conversationId?: string;
}

/**
 * What a call gives the model (`LanguageModelV4CallOptions`): the prompt
 * (`LanguageModelV4Prompt`), the abort signal, the provider options; the
 * sampling settings the CLI ignores are reported as warnings.
 */
export interface ClaudeCodeCallOptions {
  /** The messages. */
  readonly prompt: readonly unknown[];
  /** Aborting it interrupts the turn. */
  readonly abortSignal?: AbortSignal;
  /** `{ "claude-code": { conversationId } }`. */
  readonly providerOptions?: Record<string, Record<string, unknown>>;
  /** The other call settings. */
  readonly [setting: string]: unknown;
}

/** What `doStream` resolves with (`LanguageModelV4StreamResult`). */
export interface ClaudeCodeStreamResult {
  /** The turn's parts. */
  readonly stream: ReadableStream<TurnPart>;
  /** What was sent: the chat id and the content. */
  readonly request?: { readonly body?: unknown };
}

/** One piece of a generated answer (`LanguageModelV4Content`). */
export type ClaudeCodeContent =
  | { type: "text" | "reasoning"; text: string }
  | ToolCallPart
  | ToolResultPart
  | Extract<TurnPart, { type: "tool-approval-request" }>;

/** What `doGenerate` resolves with (`LanguageModelV4GenerateResult`). */
export interface ClaudeCodeGenerateResult {
  /** The answer's text, reasoning, tool calls and results, approval requests. */
  readonly content: ClaudeCodeContent[];
  /** Why the turn ended. */
  readonly finishReason: TurnFinishReason;
  /** Its tokens. */
  readonly usage: TurnUsage;
  /** Settings the CLI ignored. */
  readonly warnings: CallWarning[];
  /** `{ "claude-code": { sessionId, costUsd, … } }`. */
  readonly providerMetadata?: ProviderMetadata;
  /** What was sent. */
  readonly request?: { readonly body?: unknown };
  /** The session id (`id`), the model, when it ended. */
  readonly response: { readonly id?: string; readonly modelId: string; readonly timestamp: Date };
}

/**
 * A Claude Code model of the AI SDK: the language model specification `v4`
 * (`LanguageModelV4` of `@ai-sdk/provider`), which `ai` 7's `streamText` and
 * `generateText` take.
 */
export interface ClaudeCodeLanguageModel {
  /** Always `"v4"`. */
  readonly specificationVersion: "v4";
  /** Always `"claude-code"`. */
  readonly provider: string;
  /** The model id given. */
  readonly modelId: string;
  /** Image URLs the CLI fetches itself (`https:`). */
  readonly supportedUrls: Record<string, RegExp[]>;
  /** The settings it was made with. */
  readonly settings: ClaudeCodeSettings;
  /**
   * Runs a turn and streams it (called by `streamText`).
   *
   * @param options The call.
   * @returns The parts.
   */
  doStream(options: ClaudeCodeCallOptions): PromiseLike<ClaudeCodeStreamResult>;
  /**
   * Runs a turn to its end (called by `generateText`).
   *
   * @param options The call.
   * @returns The answer.
   */
  doGenerate(options: ClaudeCodeCallOptions): PromiseLike<ClaudeCodeGenerateResult>;
}

/** A provider: call it with a model id (`"sonnet"`, `"opus"`, a full id, or `"default"`). */
export interface ClaudeCodeProvider extends AsyncDisposable {
  /**
   * A model.
   *
   * @param modelId The model (`"default"`: the CLI's own choice).
   * @param settings Its conversation.
   */
  (modelId: string, settings?: ClaudeCodeSettings): ClaudeCodeLanguageModel;
  /**
   * A model (same as calling the provider).
   *
   * @param modelId The model.
   * @param settings Its conversation.
   */
  languageModel(modelId: string, settings?: ClaudeCodeSettings): ClaudeCodeLanguageModel;
  /** The chats behind the models (made on first use): share them with `chatHandler`. */
  readonly chats: ChatSessions;
  /** Ends every conversation's process. */
  close(): Promise<void>;
}

/**
 * Makes a provider over its own {@linkcode ChatSessions} (made from
 * `options` on the first call), or over the `chats` given.
 *
 * @param options The pool's options, or `{ chats }`.
 * @returns The provider.
 *
 * @example streamText over a stand-in CLI
 * ```ts
 * import { createClaudeCode } from "@duplex/claude/ai-sdk";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import { streamText } from "ai";
 * import assert from "node:assert/strict";
 *
 * await using claude = createClaudeCode({ launch: () => new ScriptedCli({ echo: true }).transport });
 * const result = streamText({ model: claude("sonnet"), prompt: "Hello" });
 * assert.equal(await result.text, "Echo: Hello");
 * assert.equal((await result.usage).outputTokens, 7);
 * ```
 */
export function createClaudeCode(
  options: ChatSessionsOptions | { readonly chats: ChatSessions } = {},
): ClaudeCodeProvider {
  let chats = "chats" in options ? options.chats : undefined;
  const owned = !chats;
  const sessions = (): ChatSessions => chats ??= new ChatSessions(options as ChatSessionsOptions);
  const close = async (): Promise<void> => {
    if (owned && chats) await chats.close();
  };
  function provider(modelId: string, settings: ClaudeCodeSettings = {}): ClaudeCodeLanguageModel {
    return new ClaudeCodeModel(modelId, settings, sessions);
  }
  return Object.defineProperties(provider, {
    languageModel: { value: provider },
    chats: { get: sessions },
    close: { value: close },
    [Symbol.asyncDispose]: { value: close },
  }) as ClaudeCodeProvider;
}

/**
 * The default provider (its pool made on the first call, with the
 * subprocess adapter's defaults: `claude` on `PATH`, this folder). Close it
 * with `await claudeCode.close()` to end its processes.
 *
 * @example A model of the default provider
 * ```ts
 * import { claudeCode } from "@duplex/claude/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * const model = claudeCode("sonnet", { conversationId: "support-42" });
 * assert.equal(model.provider, "claude-code");
 * assert.equal(model.specificationVersion, "v4");
 * ```
 */
export const claudeCode: ClaudeCodeProvider = createClaudeCode();

class ClaudeCodeModel implements ClaudeCodeLanguageModel, LanguageModelV4 {
  readonly specificationVersion = "v4" as const;
  readonly provider = PROVIDER;
  readonly modelId: string;
  readonly settings: ClaudeCodeSettings;
  readonly supportedUrls: Record<string, RegExp[]> = { "image/*": [/^https:\/\//] };
  readonly #chats: () => ChatSessions;

  constructor(modelId: string, settings: ClaudeCodeSettings, chats: () => ChatSessions) {
    if (typeof modelId !== "string" || modelId === "") {
      throw new TypeError("Cannot make the model: its id must be a non-empty string");
    }
    this.modelId = modelId;
    this.settings = settings;
    this.#chats = chats;
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<ClaudeCodeStreamResult> {
    const chats = this.#chats();
    const { conversationId: fixed, ...conversation } = this.settings;
    const given = options.providerOptions?.[PROVIDER]?.conversationId;
    const named = typeof given === "string" ? given : fixed;
    const warnings = settingWarnings(options);
    const signal = options.abortSignal;
    const warm = named !== undefined && chats.pool.peek(named) !== undefined;
    const plan = planPrompt(options.prompt, warm, warnings);
    if (plan.kind === "approve") {
      const chatId = named ?? chats.chatOf(plan.approvals[0]!.approvalId) ?? "";
      const stream = await chats.approve(chatId, plan.approvals, { signal, warnings });
      return { stream: stream.pipeThrough(recalled(options.prompt)) };
    }
    const chatId = named ?? `call-${crypto.randomUUID()}`;
    const stream = await chats.send(chatId, plan.content, {
      ...conversation,
      ...(this.modelId !== "default" && { model: this.modelId }),
      ...(plan.system && { appendSystemPrompt: plan.system }),
      signal,
      warnings,
      once: named === undefined,
    });
    return { stream, request: { body: { chatId, content: plan.content } } };
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<ClaudeCodeGenerateResult> {
    const { stream, request } = await this.doStream(options);
    const content: ClaudeCodeContent[] = [];
    const texts = new Map<string, { type: "text" | "reasoning"; text: string }>();
    let finish: FinishPart | undefined;
    let failure: unknown;
    const warnings: CallWarning[] = [];
    for await (const part of stream) {
      switch (part.type) {
        case "stream-start":
          warnings.push(...part.warnings);
          break;
        case "text-start":
        case "reasoning-start": {
          const entry = {
            type: part.type === "text-start" ? "text" as const : "reasoning" as const,
            text: "",
          };
          texts.set(part.id, entry);
          content.push(entry);
          break;
        }
        case "text-delta":
        case "reasoning-delta": {
          const entry = texts.get(part.id);
          if (entry) entry.text += part.delta;
          break;
        }
        case "tool-call":
        case "tool-result":
        case "tool-approval-request":
          content.push(part);
          break;
        case "error":
          failure ??= part.error;
          break;
        case "finish":
          finish = part;
          break;
      }
    }
    if (!finish && failure !== undefined) throw failure;
    const metadata = finish?.providerMetadata?.[PROVIDER];
    return {
      content,
      finishReason: finish?.finishReason ?? { unified: "other", raw: undefined },
      usage: finish?.usage ?? NO_USAGE,
      warnings,
      ...(finish?.providerMetadata && { providerMetadata: finish.providerMetadata }),
      ...(request && { request }),
      response: {
        ...(isRecord(metadata) && typeof metadata.sessionId === "string" &&
          { id: metadata.sessionId }),
        modelId: this.modelId,
        timestamp: new Date(),
      },
    };
  }
}

/**
 * Puts the approved calls' `tool-call` parts back after `stream-start`: the
 * AI SDK matches each tool result to a call of the same response, and the
 * calls were in the previous one (the prompt's last assistant message).
 *
 * @param prompt The call's prompt.
 * @returns The transform.
 */
function recalled(
  prompt: LanguageModelV4CallOptions["prompt"],
): TransformStream<TurnPart, TurnPart> {
  const calls: ToolCallPart[] = [];
  const last = prompt.findLast((message) => message.role === "assistant");
  for (const part of last?.role === "assistant" ? last.content : []) {
    if (part.type === "tool-call" && part.providerExecuted) {
      calls.push({
        type: "tool-call",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: JSON.stringify(part.input ?? {}),
        providerExecuted: true,
        dynamic: true,
      });
    }
  }
  return new TransformStream({
    transform(part, controller) {
      controller.enqueue(part);
      if (part.type !== "stream-start") return;
      for (const call of calls) controller.enqueue(call);
    },
  });
}
