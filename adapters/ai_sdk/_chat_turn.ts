/**
 * One turn of a chat, read as language-model stream parts by one reader at
 * a time. The turn may outlive a reader: when the CLI asks for a permission
 * that is left to a person, the reader gets a `tool-approval-request` and a
 * `finish` (`tool-calls`), the turn pauses with the CLI waiting, and the
 * next reader (the next request, carrying the approval) continues it from
 * the same subscription, nothing lost. A reader that goes away (the client
 * pressed stop) interrupts the turn; a pause no one answers is denied after
 * `approvalTimeoutMs`.
 *
 * @module
 */

import type { CallWarning, TurnPart } from "./ai_sdk_types.ts";
import { DuplexError } from "../../src/errors.ts";
import { messageOf } from "../../src/_values.ts";
import type { DuplexSession } from "../../src/session/duplex_session.ts";
import type { SessionEvent } from "../../src/session/events.ts";
import type { Turn } from "../../src/session/turn.ts";
import type { UserContent } from "../../src/protocol/content.ts";
import type { PermissionRequest } from "../../src/permissions/permission.ts";
import type { Subscription } from "../../src/subscriptions/subscription.ts";
import { finishParts, NO_USAGE, PROVIDER, TurnParts } from "./_turn_parts.ts";

/** A person's answer to a tool approval request. */
export interface ToolApproval {
  /** The `approvalId` of the `tool-approval-request` (the CLI's permission request id). */
  readonly approvalId: string;
  /** Whether the tool may run. */
  readonly approved: boolean;
  /** Why (a denial's reason reaches the model). */
  readonly reason?: string | undefined;
}

/** Where a turn is. */
export type ChatTurnState = "running" | "paused" | "ended";

/** How many events a turn's subscription holds while no reader reads (a paused turn is quiet). */
const EVENT_CAPACITY = 4096;

const ENDED = Symbol("ended");

/** One turn; made by `ChatSessions`. */
export class ChatTurn {
  readonly #session: DuplexSession;
  readonly #events: Subscription<SessionEvent>;
  readonly #parts = new TurnParts();
  readonly #abort = new AbortController();
  /** Permission requests left to a person, by request id, not answered yet. */
  readonly #asked = new Map<string, PermissionRequest>();
  /** Whether each permission request of the turn was deferred (settled once the handler chose). */
  readonly #deferrals = new Map<string, Promise<boolean>>();
  readonly #approvalTimeoutMs: number;
  readonly #settled: Promise<typeof ENDED>;
  #turn: Turn | undefined;
  #failure: unknown;
  #state: ChatTurnState = "running";
  #reading = false;
  #next: Promise<IteratorResult<SessionEvent, undefined>> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Sends the turn's user line.
   *
   * @param session The conversation's session.
   * @param content What the user said.
   * @param options The approval bound and what to call once the turn ended.
   */
  constructor(
    session: DuplexSession,
    content: UserContent,
    options: { approvalTimeoutMs: number; onEnd: () => void },
  ) {
    this.#session = session;
    this.#approvalTimeoutMs = options.approvalTimeoutMs;
    this.#events = session.subscribe({ capacity: EVENT_CAPACITY });
    this.#settled = session.send(content, { signal: this.#abort.signal }).then(
      (turn) => {
        this.#turn = turn;
      },
      (error) => {
        this.#failure = error;
      },
    ).then(() => {
      clearTimeout(this.#timer);
      if (!this.#reading) this.#end();
      options.onEnd();
      return ENDED;
    });
  }

  /** Where the turn is. */
  get state(): ChatTurnState {
    return this.#state;
  }

  /** The permission requests waiting for a person. */
  get asked(): readonly PermissionRequest[] {
    return [...this.#asked.values()];
  }

  /** Resolves once the turn has ended (answered, failed or interrupted). */
  get ended(): Promise<void> {
    return this.#settled.then(() => {});
  }

  /**
   * Records how a permission request of this turn was decided (called by
   * the pool's handler, synchronously, before the request's event is read).
   *
   * @param request The request.
   * @param deferred Resolves with true when it was left to a person.
   */
  decided(request: PermissionRequest, deferred: Promise<boolean>): void {
    this.#deferrals.set(request.requestId, deferred);
    void deferred.then((left) => left && this.#asked.set(request.requestId, request));
  }

  /**
   * Answers paused approvals: each reaches `respondToPermission`.
   *
   * @param approvals The answers; each must name a request of this turn that waits.
   * @returns Once all are sent.
   * @throws {DuplexError} `not_found` for an approval id this turn does not wait on.
   */
  async answer(approvals: readonly ToolApproval[]): Promise<void> {
    const unknown = approvals.filter((a) => !this.#asked.has(a.approvalId));
    if (unknown.length > 0) {
      throw new DuplexError(
        "not_found",
        `Cannot answer approval ${unknown[0]!.approvalId}: this chat waits on no such request`,
      );
    }
    for (const { approvalId, approved, reason } of approvals) {
      const request = this.#asked.get(approvalId)!;
      this.#asked.delete(approvalId);
      if (!approved) this.#parts.deny(request.toolUseId ?? approvalId);
      await this.#session.respondToPermission(
        approvalId,
        approved
          ? { behavior: "allow" }
          : { behavior: "deny", message: reason || "The user denied this tool call" },
      );
    }
  }

  /**
   * Interrupts the turn (stop): pending approvals are denied, the CLI stops.
   *
   * @param reason Why.
   */
  interrupt(reason = "The user stopped the turn"): void {
    for (const id of this.#asked.keys()) {
      void this.#session.respondToPermission(id, {
        behavior: "deny",
        message: reason,
        interrupt: true,
      });
    }
    this.#asked.clear();
    this.#abort.abort(new DuplexError("aborted", reason));
  }

  /**
   * The turn's parts from where the last reader stopped, up to its end or
   * its next pause. One reader at a time.
   *
   * @param signal Aborting it (or cancelling the stream) interrupts the turn.
   * @param warnings For the `stream-start` part.
   * @returns The parts.
   * @throws {DuplexError} `turn_in_flight` while another reader reads.
   */
  read(
    signal?: AbortSignal,
    warnings: readonly CallWarning[] = [],
  ): ReadableStream<TurnPart> {
    if (this.#reading) {
      throw new DuplexError("turn_in_flight", "Cannot read the turn: another request streams it");
    }
    this.#reading = true;
    this.#state = this.#state === "ended" ? "ended" : "running";
    clearTimeout(this.#timer);
    const stop = () => this.interrupt();
    signal?.addEventListener("abort", stop, { once: true });
    const release = () => {
      signal?.removeEventListener("abort", stop);
      this.#reading = false;
    };
    let started = false;
    return new ReadableStream<TurnPart>({
      pull: async (controller) => {
        if (!started) {
          started = true;
          controller.enqueue({ type: "stream-start", warnings: [...warnings] });
        }
        try {
          const done = await this.#pull(controller);
          if (done) {
            release();
            controller.close();
          }
        } catch (error) {
          release();
          controller.error(error);
        }
      },
      cancel: () => {
        release();
        if (this.#state !== "ended") this.interrupt("The client went away");
      },
    }, { highWaterMark: 0 });
  }

  /** Reads events until it enqueued something; true once the stream ends (pause or end). */
  async #pull(controller: ReadableStreamDefaultController<TurnPart>) {
    // Approvals still unanswered (answered in part): the CLI waits on them, so pause again.
    let pausing = this.#asked.size > 0;
    for (;;) {
      if ((this.#turn || this.#failure !== undefined) && this.#events.size === 0) {
        return this.#finish(controller);
      }
      if (pausing && this.#events.size === 0) return this.#pause(controller);
      this.#next ??= this.#events.next();
      const item = await Promise.race([this.#next, this.#settled]);
      if (item === ENDED) continue;
      this.#next = undefined;
      if (item.done) return this.#finish(controller);
      const event = item.value;
      if (event.type === "result") {
        await this.#settled;
        return this.#finish(controller);
      }
      const deferred = event.type === "permission_request" &&
        await (this.#deferrals.get(event.request.requestId) ?? false);
      const parts = this.#parts.parts(event, deferred);
      for (const part of parts) controller.enqueue(part);
      if (deferred) pausing = true;
      if (parts.length > 0 && !pausing) return false;
    }
  }

  #pause(controller: ReadableStreamDefaultController<TurnPart>): true {
    controller.enqueue({
      type: "finish",
      usage: NO_USAGE,
      finishReason: { unified: "tool-calls", raw: "approval_requested" },
      providerMetadata: {
        [PROVIDER]: { paused: true, sessionId: this.#session.sessionId ?? null },
      },
    });
    this.#state = "paused";
    this.#timer = setTimeout(
      () => this.interrupt(`No one answered the approval within ${this.#approvalTimeoutMs} ms`),
      this.#approvalTimeoutMs,
    );
    return true;
  }

  #finish(controller: ReadableStreamDefaultController<TurnPart>): true {
    this.#end();
    if (this.#turn) {
      for (const part of finishParts(this.#turn.result).parts) controller.enqueue(part);
      return true;
    }
    const aborted = this.#abort.signal.aborted;
    if (!aborted) controller.enqueue({ type: "error", error: this.#failure });
    controller.enqueue({
      type: "finish",
      usage: NO_USAGE,
      finishReason: {
        unified: aborted ? "interrupted" : "error",
        raw: aborted ? "aborted" : messageOf(this.#failure),
      },
    });
    return true;
  }

  #end(): void {
    this.#state = "ended";
    this.#events.unsubscribe();
  }
}
