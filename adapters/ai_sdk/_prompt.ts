/**
 * An AI SDK prompt (`LanguageModelV4Prompt`) as what the CLI gets: the CLI
 * keeps a conversation's history itself, so a warm conversation gets only
 * the messages after the last assistant message; a new one gets the whole
 * history as one transcript (the anchor's way, `Human:` / `Assistant:`), its
 * system messages appended to the system prompt. A trailing tool message of
 * `tool-approval-response` parts is an answer to a paused turn.
 *
 * @module
 */

import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
} from "@ai-sdk/provider";
import type { CallWarning } from "./ai_sdk_types.ts";
import type { ContentBlock } from "../../src/protocol/content.ts";
import type { ToolApproval } from "./_chat_turn.ts";

/** What a call asks the CLI. */
export type PromptPlan =
  | { readonly kind: "approve"; readonly approvals: ToolApproval[] }
  | {
    readonly kind: "send";
    readonly content: ContentBlock[];
    /** The system messages' text, for a conversation's first turn. */
    readonly system: string | undefined;
  };

/**
 * Reads a prompt.
 *
 * @param prompt The call's prompt.
 * @param warm Whether the CLI already holds the conversation's history.
 * @param warnings Where parts the CLI cannot take are reported.
 * @returns What to send, or the approvals to answer.
 */
export function planPrompt(
  prompt: LanguageModelV4Prompt,
  warm: boolean,
  warnings: CallWarning[],
): PromptPlan {
  const last = prompt.at(-1);
  if (last?.role === "tool") {
    const approvals = last.content.flatMap((part) =>
      part.type === "tool-approval-response"
        ? [{ approvalId: part.approvalId, approved: part.approved, reason: part.reason }]
        : []
    );
    if (approvals.length > 0) return { kind: "approve", approvals };
  }
  const system = prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const turns = prompt.filter((m) => m.role !== "system");
  const lastAssistant = turns.findLastIndex((m) => m.role === "assistant");
  const fresh = turns.slice(lastAssistant + 1);
  if (warm || lastAssistant < 0) {
    return { kind: "send", content: blocksOf(fresh, warnings), system: system || undefined };
  }
  const transcript = turns.map((m) => `${speaker(m)}: ${textOf(m, warnings)}`).join("\n\n");
  return {
    kind: "send",
    content: [{ type: "text", text: transcript }],
    system: system || undefined,
  };
}

function speaker(message: LanguageModelV4Message): string {
  return message.role === "user" ? "Human" : message.role === "assistant" ? "Assistant" : "Tool";
}

function textOf(message: LanguageModelV4Message, warnings: CallWarning[]): string {
  if (message.role === "system") return message.content;
  return message.content.map((part) => {
    switch (part.type) {
      case "text":
      case "reasoning":
        return part.text;
      case "tool-call":
        return `[Tool call: ${part.toolName}(${JSON.stringify(part.input)})]`;
      case "tool-result":
        return `[Tool result (${part.toolName}): ${JSON.stringify(part.output)}]`;
      default:
        warnings.push({ type: "unsupported", feature: `prompt part ${part.type}` });
        return "";
    }
  }).filter(Boolean).join("\n");
}

function blocksOf(messages: LanguageModelV4Message[], warnings: CallWarning[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const message of messages) {
    if (message.role !== "user") {
      const text = textOf(message, warnings);
      if (text) blocks.push({ type: "text", text });
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text") blocks.push({ type: "text", text: part.text });
      else if (part.mediaType.startsWith("image/") && part.data.type === "data") {
        const data = typeof part.data.data === "string" ? part.data.data : base64(part.data.data);
        blocks.push({
          type: "image",
          source: { type: "base64", media_type: part.mediaType, data },
        });
      } else if (part.mediaType.startsWith("image/") && part.data.type === "url") {
        blocks.push({ type: "image", source: { type: "url", url: part.data.url.href } });
      } else if (part.data.type === "text") {
        blocks.push({ type: "text", text: part.data.text });
      } else {
        warnings.push({ type: "unsupported", feature: `file part of ${part.mediaType}` });
      }
    }
  }
  if (blocks.length === 0) blocks.push({ type: "text", text: "" });
  return blocks;
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** Call settings the CLI does not take (it runs its own agent loop). */
const UNSUPPORTED = [
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "seed",
] as const;

/**
 * Warnings for the call settings the CLI ignores.
 *
 * @param options The call's options.
 * @returns One `unsupported` warning per setting given.
 */
export function settingWarnings(options: LanguageModelV4CallOptions): CallWarning[] {
  const warnings: CallWarning[] = UNSUPPORTED
    .filter((name) => options[name] !== undefined)
    .map((feature) => ({ type: "unsupported", feature }));
  if (options.tools?.length) {
    warnings.push({
      type: "unsupported",
      feature: "tools",
      details: "Claude Code runs its own tools; give the CLI MCP servers instead",
    });
  }
  if (options.responseFormat?.type === "json") {
    warnings.push({ type: "unsupported", feature: "responseFormat json" });
  }
  return warnings;
}
