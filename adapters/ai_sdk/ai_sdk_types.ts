/**
 * The AI SDK's shapes as this entry produces them, spelled out: each is the
 * part of the `ai` / `@ai-sdk/provider` type it stands for that Claude Code
 * fills, and is assignable to it (a test type-checks `streamText` and
 * `readUIMessageStream` over them), so the entry's documentation needs no
 * page of the AI SDK's.
 *
 * @module
 */

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | {
  [key: string]: JsonValue;
};

/** Provider metadata: `{ "claude-code": { sessionId, costUsd, … } }`. */
export type ProviderMetadata = Record<string, Record<string, JsonValue>>;

/** A call setting the CLI ignores (`SharedV4Warning` of type `unsupported`). */
export interface CallWarning {
  /** Always `"unsupported"`. */
  readonly type: "unsupported";
  /** The setting or prompt part. */
  readonly feature: string;
  /** More about it. */
  readonly details?: string;
}

/** Why a turn (or a step paused on an approval) ended (`LanguageModelV4FinishReason`). */
export interface TurnFinishReason {
  /** The AI SDK's reason. */
  readonly unified: "stop" | "length" | "tool-calls" | "error" | "interrupted" | "other";
  /** The CLI's `terminal_reason` or subtype (`approval_requested` for a pause). */
  readonly raw: string | undefined;
}

/** A turn's tokens (`LanguageModelV4Usage`); all `undefined` for a step paused on an approval. */
export interface TurnUsage {
  /** Input tokens: all, without the cache, read from it, written to it. */
  readonly inputTokens: {
    readonly total: number | undefined;
    readonly noCache: number | undefined;
    readonly cacheRead: number | undefined;
    readonly cacheWrite: number | undefined;
  };
  /** Output tokens (text and reasoning are not told apart by the CLI). */
  readonly outputTokens: {
    readonly total: number | undefined;
    readonly text: number | undefined;
    readonly reasoning: number | undefined;
  };
}

/** A text or reasoning block's start, delta or end. */
export type TextPart =
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string };

/** A tool call (Claude Code's tools run in the CLI: provider-executed, dynamic). */
export interface ToolCallPart {
  /** Always `"tool-call"`. */
  type: "tool-call";
  /** The `tool_use` block id. */
  toolCallId: string;
  /** The tool, for example `"Bash"`. */
  toolName: string;
  /** The input, as JSON text. */
  input: string;
  /** Always true. */
  providerExecuted: true;
  /** Always true. */
  dynamic: true;
}

/** A tool's result (`isError` for a failure or a denial; a person's denial is marked in metadata). */
export interface ToolResultPart {
  /** Always `"tool-result"`. */
  type: "tool-result";
  /** The tool call it answers. */
  toolCallId: string;
  /** The tool. */
  toolName: string;
  /** The result's text. */
  result: string;
  /** Whether the tool failed or was denied. */
  isError: boolean;
  /** Always true. */
  dynamic: true;
  /** `{ "claude-code": { denied: true } }` when a person denied the call. */
  providerMetadata?: ProviderMetadata;
}

/**
 * One part of a turn, as a language model streams it
 * (`LanguageModelV4StreamPart`): what `ChatSessions.send` / `approve` and the
 * provider's `doStream` return.
 */
export type TurnPart =
  | { type: "stream-start"; warnings: CallWarning[] }
  | TextPart
  | {
    type: "tool-input-start";
    id: string;
    toolName: string;
    providerExecuted: true;
    dynamic: true;
  }
  | { type: "tool-input-delta"; id: string; delta: string }
  | { type: "tool-input-end"; id: string }
  | ToolCallPart
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | ToolResultPart
  | { type: "error"; error: unknown }
  | FinishPart;

/** The last part of a turn, or of a step paused on an approval. */
export interface FinishPart {
  /** Always `"finish"`. */
  type: "finish";
  /** The turn's tokens. */
  usage: TurnUsage;
  /** Why it ended. */
  finishReason: TurnFinishReason;
  /** `{ "claude-code": { sessionId, costUsd, durationMs, … } }`. */
  providerMetadata?: ProviderMetadata;
}

/**
 * One UI message chunk (`UIMessageChunk` of `ai`), as `useChat` reads it
 * from the chat stream.
 */
export type UIChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" | "finish-step" }
  | TextPart
  | {
    type: "tool-input-start";
    toolCallId: string;
    toolName: string;
    providerExecuted: true;
    dynamic: true;
  }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | {
    type: "tool-input-available";
    toolCallId: string;
    toolName: string;
    input: unknown;
    providerExecuted: true;
    dynamic: true;
  }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | {
    type: "tool-output-available";
    toolCallId: string;
    output: unknown;
    providerExecuted: true;
    dynamic: true;
  }
  | {
    type: "tool-output-error";
    toolCallId: string;
    errorText: string;
    providerExecuted: true;
    dynamic: true;
  }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "error"; errorText: string }
  | { type: "finish"; finishReason?: TurnFinishReason["unified"]; messageMetadata?: unknown };
