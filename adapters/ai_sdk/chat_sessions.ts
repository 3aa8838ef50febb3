/**
 * {@linkcode ChatSessions}: the conversations of a web chat or of the AI SDK
 * provider, kept warm in a {@linkcode SessionPool} (one key per chat id), and
 * their turns read as the AI SDK's language-model stream parts, paused on a
 * tool approval and continued by the request that carries the answer.
 *
 * @module
 */

import type { CallWarning, TurnPart } from "./ai_sdk_types.ts";
import { DuplexError } from "../../src/errors.ts";
import type { PermissionDecision, PermissionRequest } from "../../src/permissions/permission.ts";
import type { UserContent } from "../../src/protocol/content.ts";
import { checkMs } from "../../src/_deadline.ts";
import { SessionPool } from "../subprocess/pool/session_pool.ts";
import type {
  ConversationOptions,
  PoolPermissionContext,
  PoolPermissionHandler,
  SessionPoolOptions,
} from "../subprocess/pool/pool_options.ts";
import { ChatTurn, type ToolApproval } from "./_chat_turn.ts";

export type { ToolApproval };

/** Options of {@linkcode ChatSessions}: the pool's, and how approvals are asked. */
export interface ChatSessionsOptions extends Omit<SessionPoolOptions, "onPermission"> {
  /**
   * Decides a permission request now, or returns `{ behavior: "defer" }` to
   * ask the person in the chat (a `tool-approval-request`).
   *
   * @default {every request is asked in the chat}
   */
  readonly onPermission?: PoolPermissionHandler;
  /**
   * How long a paused turn waits for its approval; then it is denied and the
   * turn interrupted.
   *
   * @default {600000}
   */
  readonly approvalTimeoutMs?: number;
  /**
   * How many chat ids are remembered (live or hibernated); past it the least
   * recently used idle one is forgotten, so no client can grow memory
   * without bound by inventing ids.
   *
   * @default {1000}
   */
  readonly maxChats?: number;
}

/** Options of {@linkcode ChatSessions.send}. */
export interface ChatSendOptions extends ConversationOptions {
  /** Aborting it interrupts the turn (a stop button); a paused turn is not interrupted by it. */
  readonly signal?: AbortSignal | undefined;
  /** Warnings for the `stream-start` part. */
  readonly warnings?: readonly CallWarning[];
  /** Forget the conversation once its turn ended (one-off calls). @default {false} */
  readonly once?: boolean;
}

/** Options of {@linkcode ChatSessions.approve}. */
export interface ChatApproveOptions {
  /** Aborting it interrupts the turn. */
  readonly signal?: AbortSignal | undefined;
  /** Warnings for the `stream-start` part. */
  readonly warnings?: readonly CallWarning[];
}

const DEFER = { behavior: "defer" } as const;
const CHAT_ID = /^[\w.:-]{1,200}$/;
/** How long a new message waits for the turn it replaces to end. */
const REPLACE_MS = 30_000;

/**
 * Chats over a {@linkcode SessionPool}: `send` starts a turn and returns its
 * parts; when the CLI asks for a permission left to a person, the parts end
 * with a `tool-approval-request` and a `finish` (`tool-calls`), and
 * `approve` (the next request, with the answer) continues the same turn.
 * What the chat handler and the provider of `@duplex/claude/ai-sdk` stand on.
 *
 * @example A turn's parts, over a stand-in CLI
 * ```ts
 * import { ChatSessions } from "@duplex/claude/ai-sdk";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * await using chats = new ChatSessions({ launch: () => new ScriptedCli({ echo: true }).transport });
 * const parts = await Array.fromAsync(await chats.send("chat-1", "Hello"));
 * assert.deepEqual(parts.map((p) => p.type), [
 *   "stream-start", "text-start", "text-delta", "text-end", "finish",
 * ]);
 * ```
 */
export class ChatSessions implements AsyncDisposable {
  /** The pool the chats run in (its keys are the chat ids). */
  readonly pool: SessionPool;
  readonly #turns = new Map<string, ChatTurn>();
  /** Chat ids, least recently used first. */
  readonly #known = new Set<string>();
  readonly #decide: PoolPermissionHandler | undefined;
  readonly #approvalTimeoutMs: number;
  readonly #maxChats: number;

  /**
   * Makes the pool (nothing starts until the first turn, unless `spares`).
   *
   * @param options The pool's options and the approval bounds.
   * @throws {TypeError | RangeError} For bad options.
   */
  constructor(options: ChatSessionsOptions = {}) {
    const { onPermission, approvalTimeoutMs, maxChats, ...pool } = options;
    if (onPermission !== undefined && typeof onPermission !== "function") {
      throw new TypeError("Cannot make the chats: onPermission must be a function");
    }
    this.#decide = onPermission;
    this.#approvalTimeoutMs = approvalTimeoutMs === undefined
      ? 600_000
      : checkMs(approvalTimeoutMs, "Cannot make the chats: approvalTimeoutMs");
    this.#maxChats = maxChats ?? 1000;
    if (!Number.isInteger(this.#maxChats) || this.#maxChats < 1) {
      throw new RangeError("Cannot make the chats: maxChats must be an integer of at least 1");
    }
    this.pool = new SessionPool({
      ...pool,
      process: { includePartialMessages: true, ...pool.process },
      onPermission: (request, context) => this.#onPermission(request, context),
    });
  }

  /**
   * Starts a turn of chat `chatId` (its conversation made, woken or reused).
   * A turn paused on an approval is interrupted first (the person wrote
   * instead of answering).
   *
   * @param chatId The chat (conversation key): letters, digits, `_.:-`, at most 200.
   * @param content What the user said.
   * @param options The conversation's options (first turn), the stop signal.
   * @returns The turn's parts, up to its end or its next pause.
   * @throws {DuplexError} `invalid_argument` for a bad id, `turn_in_flight`
   *   while another request streams this chat, the pool's errors.
   */
  async send(
    chatId: string,
    content: UserContent,
    options: ChatSendOptions = {},
  ): Promise<ReadableStream<TurnPart>> {
    checkChatId(chatId);
    const { signal, warnings, once, ...conversation } = options;
    signal?.throwIfAborted();
    const previous = this.#turns.get(chatId);
    if (previous) {
      if (previous.state === "running") {
        throw new DuplexError("turn_in_flight", `Cannot send: chat ${chatId} runs a turn`);
      }
      previous.interrupt("The user sent a new message instead");
      await Promise.race([previous.ended, new Promise((done) => setTimeout(done, REPLACE_MS))]);
      if (this.#turns.get(chatId) === previous) {
        throw new DuplexError("turn_in_flight", `Cannot send: chat ${chatId} still ends a turn`);
      }
    }
    this.#remember(chatId);
    const session = await this.pool.acquire(chatId, { ...conversation, ...(signal && { signal }) });
    const turn = new ChatTurn(session, content, {
      approvalTimeoutMs: this.#approvalTimeoutMs,
      onEnd: () => {
        if (this.#turns.get(chatId) === turn) this.#turns.delete(chatId);
        this.pool.release(chatId);
        if (once) {
          this.#known.delete(chatId);
          void this.pool.forget(chatId);
        }
      },
    });
    this.#turns.set(chatId, turn);
    return turn.read(signal, warnings);
  }

  /**
   * Answers the approvals a paused turn of `chatId` waits on (each reaches
   * `respondToPermission`) and continues the turn.
   *
   * @param chatId The chat.
   * @param approvals The answers.
   * @param options The stop signal.
   * @returns The rest of the turn's parts, up to its end or its next pause.
   * @throws {DuplexError} `not_found` when the chat waits on no approval or
   *   on none of these ids (nothing is answered then), `turn_in_flight`.
   */
  async approve(
    chatId: string,
    approvals: readonly ToolApproval[],
    options: ChatApproveOptions = {},
  ): Promise<ReadableStream<TurnPart>> {
    checkChatId(chatId);
    options.signal?.throwIfAborted();
    const turn = this.#turns.get(chatId);
    if (!turn || turn.state !== "paused") {
      throw new DuplexError("not_found", `Cannot approve: chat ${chatId} waits on no approval`);
    }
    if (approvals.length === 0) {
      throw new DuplexError("invalid_argument", "Cannot approve: no approval was given");
    }
    await turn.answer(approvals);
    return turn.read(options.signal, options.warnings);
  }

  /**
   * The permission requests chat `chatId` waits on (a person's answer).
   *
   * @param chatId The chat.
   * @returns The requests (empty when none).
   */
  pending(chatId: string): readonly PermissionRequest[] {
    return this.#turns.get(chatId)?.asked ?? [];
  }

  /**
   * Which chat waits on an approval id.
   *
   * @param approvalId The id of a `tool-approval-request`.
   * @returns The chat id, or `undefined`.
   */
  chatOf(approvalId: string): string | undefined {
    for (const [chatId, turn] of this.#turns) {
      if (turn.asked.some((request) => request.requestId === approvalId)) return chatId;
    }
    return undefined;
  }

  /**
   * Interrupts every turn and closes the pool (its processes end).
   *
   * @returns Once closed.
   */
  async close(): Promise<void> {
    for (const turn of this.#turns.values()) turn.interrupt("The chats are closing");
    await this.pool.close();
  }

  /** Same as {@linkcode ChatSessions.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #onPermission(request: PermissionRequest, context: PoolPermissionContext) {
    const turn = this.#turns.get(context.key);
    let decision: Promise<PermissionDecision>;
    try {
      decision = Promise.resolve(this.#decide ? this.#decide(request, context) : DEFER);
    } catch (error) {
      decision = Promise.reject(error);
    }
    turn?.decided(request, decision.then((d) => d?.behavior === "defer", () => false));
    return decision;
  }

  #remember(chatId: string): void {
    this.#known.delete(chatId);
    this.#known.add(chatId);
    if (this.#known.size <= this.#maxChats) return;
    for (const old of this.#known) {
      if (this.#known.size <= this.#maxChats) break;
      if (old === chatId || this.#turns.has(old) || this.pool.peek(old)?.holds) continue;
      this.#known.delete(old);
      void this.pool.forget(old);
    }
  }
}

function checkChatId(chatId: unknown): asserts chatId is string {
  if (typeof chatId !== "string" || !CHAT_ID.test(chatId)) {
    throw new DuplexError(
      "invalid_argument",
      "Cannot use the chat id: it must be 1 to 200 letters, digits or _.:-",
    );
  }
}
