/**
 * {@linkcode getSessionMessages}: a stored session's conversation, as the
 * same `user` / `assistant` shapes the live session's frames have.
 *
 * @module
 */

import { isRecord } from "../../../src/_values.ts";
import type { AssistantMessage, UserFrame } from "../../../src/protocol/messages.ts";
import { mainChain } from "./_chain.ts";
import { pageBound } from "./_checks.ts";
import { checkSessionId, requireTranscript } from "./_paths.ts";
import { requireStored } from "./_store_history.ts";
import { type Entry, readTranscript, SkipCounter } from "./_transcript.ts";
import type { HistoryOptions } from "./history_options.ts";

/** Fields every {@linkcode SessionMessage} has (the official SDK's names). */
export interface SessionMessageBase {
  /** The entry's id: `forkSession(id, { upToMessageId })` takes it. */
  readonly uuid: string;
  /** The session the entry was written in. */
  readonly "session_id": string;
  /**
   * `null` in the main conversation; for a subagent's message
   * ({@linkcode getSubagentMessages}), the id of the Task tool call that
   * ran the subagent, when its metadata records it.
   */
  readonly "parent_tool_use_id": string | null;
  /**
   * The agent that spawned this message's subagent, when a subagent spawned
   * it; `null` in the main conversation and for a subagent the main
   * conversation spawned.
   */
  readonly "parent_agent_id": string | null;
  /** When the CLI wrote it (ISO 8601), if recorded. */
  readonly timestamp?: string;
  /** The transcript entry as the CLI wrote it (every field, unknown ones included). */
  readonly entry: Readonly<Record<string, unknown>>;
}

/** A user message: a prompt, tool results, or a compaction summary (`entry.isCompactSummary`). */
export interface SessionUserMessage extends SessionMessageBase {
  /** Always `"user"`. */
  readonly type: "user";
  /** The Messages-API message, as in a live `user` frame. */
  readonly message: UserFrame["message"];
}

/** One content block of the model's reply, as in a live `assistant` frame. */
export interface SessionAssistantMessage extends SessionMessageBase {
  /** Always `"assistant"`. */
  readonly type: "assistant";
  /** The Messages-API message. */
  readonly message: AssistantMessage;
}

/** A system entry (for example `compact_boundary`), with `includeSystemMessages`. */
export interface SessionSystemMessage extends SessionMessageBase {
  /** Always `"system"`. */
  readonly type: "system";
  /** Its subtype, for example `"compact_boundary"`. */
  readonly subtype: string | undefined;
  /** Its content, as the CLI wrote it (often a sentence). */
  readonly content: unknown;
}

/** One message of a stored conversation. */
export type SessionMessage = SessionUserMessage | SessionAssistantMessage | SessionSystemMessage;

/** Options of {@linkcode getSessionMessages}. */
export interface GetSessionMessagesOptions extends HistoryOptions {
  /**
   * The most messages to return.
   *
   * @default {Infinity}
   */
  readonly limit?: number;
  /**
   * How many messages to skip from the start.
   *
   * @default {0}
   */
  readonly offset?: number;
  /**
   * Also return the conversation's system entries (compaction boundaries,
   * notices).
   *
   * @default {false}
   */
  readonly includeSystemMessages?: boolean;
}

/** Whose messages a transcript holds: the main conversation's, or a subagent's. */
export interface MessageContext {
  /** Keep system entries (`includeSystemMessages`). */
  readonly system: boolean;
  /** For a subagent: the Task tool call that ran it, and the agent that spawned it. */
  readonly subagent?: { readonly toolUseId: string | null; readonly parentAgentId: string | null };
}

function base(entry: Entry, context: MessageContext): SessionMessageBase {
  const common = {
    uuid: entry.uuid as string,
    "session_id": typeof entry.sessionId === "string" ? entry.sessionId : "",
    "parent_tool_use_id": context.subagent?.toolUseId ?? null,
    "parent_agent_id": context.subagent?.parentAgentId ?? null,
    entry,
  };
  return typeof entry.timestamp === "string" ? { ...common, timestamp: entry.timestamp } : common;
}

/**
 * Turns a chain entry into a message, or counts it as unusable. Meta entries
 * and entries of other agents (sidechains in the main conversation, a team's)
 * are left out.
 */
export function toMessage(
  entry: Entry,
  context: MessageContext,
  counter: SkipCounter,
): SessionMessage | undefined {
  if (entry.isMeta === true || entry.teamName) return undefined;
  if (entry.isSidechain === true && context.subagent === undefined) return undefined;
  const message = isRecord(entry.message) ? entry.message : undefined;
  const excerpt = JSON.stringify(entry).slice(0, 200);
  if (entry.type === "user") {
    const content = message?.content;
    if (typeof content === "string" || Array.isArray(content)) {
      return { ...base(entry, context), type: "user", message: message as UserFrame["message"] };
    }
    counter.skip("invalid_entry", "Skipped a user entry without a message content", excerpt);
    return undefined;
  }
  if (entry.type === "assistant") {
    if (Array.isArray(message?.content)) {
      return {
        ...base(entry, context),
        type: "assistant",
        message: message as unknown as AssistantMessage,
      };
    }
    counter.skip("invalid_entry", "Skipped an assistant entry without a message content", excerpt);
    return undefined;
  }
  if (entry.type === "system" && context.system) {
    const subtype = typeof entry.subtype === "string" ? entry.subtype : undefined;
    return { ...base(entry, context), type: "system", subtype, content: entry.content };
  }
  return undefined;
}

/**
 * Reads a stored session's conversation: the path through the transcript's
 * `parentUuid` links from the first message to the newest one (a rewound or
 * edited branch is left out; the messages a compaction kept follow its
 * summary), as the official SDK reads it. Meta entries (command caveats and
 * the like) and sub-agent messages are left out; with
 * `includeSystemMessages`, system entries are kept.
 *
 * Each message has the shape of the live session's `user` and `assistant`
 * frames (`type`, `uuid`, `session_id`, `message`, `parent_tool_use_id`), so
 * one renderer serves both, and keeps the whole transcript entry as `entry`.
 *
 * Unlike the official SDK, which returns an empty list, an unknown session
 * throws: an empty list would look like a session without messages. An
 * entry that claims to be a message but has no content is skipped and
 * reported to `onSkip`, like a line that is not JSON.
 *
 * @param sessionId The session id (a UUID).
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`), the slice (`limit`,
 * `offset`), `includeSystemMessages`, `signal`, `onSkip`.
 * @returns The messages, oldest first.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID, or
 * `limit` / `offset` is negative or fractional; `not_found` when no
 * transcript has it;
 * `not_permitted` when a file may not be read (the message names the flag).
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example Print a conversation
 * ```ts ignore
 * import { getSessionMessages } from "@duplex/claude/history";
 *
 * const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * for (const m of await getSessionMessages(id, { dir: Deno.cwd() })) {
 *   if (m.type === "assistant") {
 *     for (const block of m.message.content) if (block.type === "text") console.log(block.text);
 *   }
 * }
 * ```
 */
export async function getSessionMessages(
  sessionId: string,
  options: GetSessionMessagesOptions = {},
): Promise<SessionMessage[]> {
  const action = "read the session's messages";
  const id = checkSessionId(sessionId, action);
  const limit = pageBound("limit", options.limit, Infinity, action);
  const offset = pageBound("offset", options.offset, 0, action);
  options.signal?.throwIfAborted();
  const { entries, counter } = options.sessionStore !== undefined
    ? {
      entries: (await requireStored(id, options, action)).entries,
      counter: new SkipCounter("", options.onSkip),
    }
    : await readTranscript((await requireTranscript(id, options, action)).file, options, action);
  const context = { system: options.includeSystemMessages === true };
  const messages = mainChain(entries).flatMap((entry) => toMessage(entry, context, counter) ?? []);
  return messages.slice(offset, limit === Infinity ? undefined : offset + limit);
}
