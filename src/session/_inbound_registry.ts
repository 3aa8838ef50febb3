// This module is browser compatible.
/*
 * The one registry of requests that come from the CLI (permissions, hook
 * callbacks, MCP messages, elicitation, anything else). It serves each request
 * id exactly once: the first answer wins, a `control_cancel_request` aborts the
 * request's signal and suppresses its answer, a timeout answers for nobody, and
 * `abortAll` drops everything when the session ends. It also builds every
 * `control_response` the session writes.
 *
 * The CLI delivers a request again when `initialize` is re-sent (the SDK's
 * `reinitialize`, for a client that reconnected): its reply lists the
 * requests still waiting (`redeliveredRequests`). A request being served is
 * the same request (no second handler call, no second entry: the SDK skips
 * such a "duplicate delivery of in-flight request"); one already answered
 * gets the same answer again, written anew (the CLI still waits, so the
 * first answer was lost: nobody is asked twice); any other id is new.
 */

import { deadline } from "../_deadline.ts";
import { isRecord, messageOf } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { ControlRequestBody } from "../protocol/control.ts";

/** How many answers are kept to answer a re-sent request with (the oldest goes first). */
const ANSWERS_KEPT = 256;

/** The envelope lists of an `initialize` reply that hold re-sent requests, and their subtype. */
const REDELIVERY_LISTS = {
  pending_permission_requests: "can_use_tool",
  pending_user_dialog_requests: "request_user_dialog",
} as const;

/* Fields of a re-sent `can_use_tool` the SDK does not trust (it clears them): neither do we. */
const UNTRUSTED_ON_REDELIVERY = [
  "server_policy_ask_only",
  "plan_floor_ask_only",
  "ask_only_false_cause",
];

/** What a request is answered with. */
export type InboundOutcome =
  | { readonly ok: true; readonly payload: Record<string, unknown> }
  | { readonly ok: false; readonly error: string; readonly code?: string };

/** Who ended a request without an answer. */
export type DropSource = "cli" | "session";

/** A request being served. */
export interface InboundEntry<T> {
  readonly requestId: string;
  readonly subtype: string;
  /** Aborted when the request is answered by someone else, withdrawn, or dropped. */
  readonly signal: AbortSignal;
  /** What the owner of the request keeps with it. */
  readonly data: T;
}

/** How a request is opened. */
export interface OpenOptions<T> {
  readonly subtype: string;
  /** Makes what the owner keeps with the request, given the request's signal. */
  readonly data: (signal: AbortSignal) => T;
  /** Called once, when `timeoutMs` passes before an answer (the owner answers then). */
  readonly onTimeout?: (entry: InboundEntry<T>) => void;
  /** A checked duration, or undefined for none. */
  readonly timeoutMs?: number | undefined;
  /** Called once when the request ends without an answer (withdrawn, or dropped). */
  readonly onDrop?: (entry: InboundEntry<T>, source: DropSource) => void;
}

interface Slot<T> extends InboundEntry<T> {
  readonly controller: AbortController;
  readonly timer: Disposable | undefined;
  readonly onDrop: ((entry: InboundEntry<T>, source: DropSource) => void) | undefined;
}

/**
 * The `control_response` frame answering `requestId`: the only place one is built.
 *
 * @param requestId The id of the CLI's request.
 * @param outcome The payload, or the error.
 * @returns The frame.
 */
export function controlResponse(
  requestId: string,
  outcome: InboundOutcome,
): Record<string, unknown> {
  return {
    type: "control_response",
    response: outcome.ok
      ? { subtype: "success", request_id: requestId, response: outcome.payload }
      : {
        subtype: "error",
        request_id: requestId,
        error: outcome.error,
        ...(outcome.code === undefined ? {} : { error_code: outcome.code }),
      },
  };
}

/** A request the CLI delivered again, read from an `initialize` reply. */
export interface RedeliveredRequest {
  readonly requestId: string;
  readonly request: ControlRequestBody;
}

/**
 * The requests an `initialize` reply's envelope (the control response's
 * `response` object, beside the payload) says the CLI still waits on:
 * whole `control_request` frames, in `pending_permission_requests` (only
 * `can_use_tool` ones read) and `pending_user_dialog_requests` (only
 * `request_user_dialog`). Malformed entries are skipped.
 *
 * @param envelope The control response's `response` object.
 * @returns The requests, in the CLI's order, permissions first.
 */
export function redeliveredRequests(envelope: Record<string, unknown>): RedeliveredRequest[] {
  const found: RedeliveredRequest[] = [];
  for (const [list, subtype] of Object.entries(REDELIVERY_LISTS)) {
    const entries = envelope[list];
    if (!Array.isArray(entries)) continue;
    for (const frame of entries) {
      if (!isRecord(frame) || typeof frame.request_id !== "string") continue;
      const body = frame.request;
      if (!isRecord(body) || body.subtype !== subtype) continue;
      const request: ControlRequestBody = { ...body, subtype };
      if (subtype === "can_use_tool") {
        for (const field of UNTRUSTED_ON_REDELIVERY) delete request[field];
      }
      found.push({ requestId: frame.request_id, request });
    }
  }
  return found;
}

export class InboundRegistry {
  // deno-lint-ignore no-explicit-any
  readonly #slots = new Map<string, Slot<any>>();
  /** The last answers written, by request id (insertion order: the oldest first). */
  readonly #answers = new Map<string, InboundOutcome>();
  readonly #write: (frame: Record<string, unknown>) => Promise<void>;

  constructor(write: (frame: Record<string, unknown>) => Promise<void>) {
    this.#write = write;
  }

  /** How many requests are being served. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * Starts serving a request. Returns `undefined` for an id already being
   * served (the first request with an id stands), and for one answered
   * before, whose answer is written again (the CLI asks again only when it
   * did not get it).
   */
  open<T>(requestId: string, options: OpenOptions<T>): InboundEntry<T> | undefined {
    if (this.#slots.has(requestId)) return undefined;
    const answered = this.#answers.get(requestId);
    if (answered) {
      this.reply(requestId, answered);
      return undefined;
    }
    const controller = new AbortController();
    const { timeoutMs, onTimeout } = options;
    const timer = timeoutMs === undefined || onTimeout === undefined
      ? undefined
      : deadline(timeoutMs);
    const slot: Slot<T> = {
      requestId,
      subtype: options.subtype,
      signal: controller.signal,
      data: options.data(controller.signal),
      controller,
      timer,
      onDrop: options.onDrop,
    };
    this.#slots.set(requestId, slot);
    if (timer && onTimeout) {
      timer.signal.addEventListener("abort", () => {
        if (this.#slots.get(requestId) === slot) onTimeout(slot);
      }, { once: true });
    }
    return slot;
  }

  /** The request being served under `requestId`, if it is of `subtype`. */
  get<T>(requestId: string, subtype: string): InboundEntry<T> | undefined {
    const slot = this.#slots.get(requestId);
    return slot?.subtype === subtype ? slot : undefined;
  }

  /** The requests of `subtype` being served, oldest first. */
  entries<T>(subtype: string): InboundEntry<T>[] {
    return [...this.#slots.values()].filter((slot) => slot.subtype === subtype);
  }

  /**
   * Answers a request being served, once: false when it is not (answered,
   * withdrawn, or unknown). With `abortReason`, the request's signal aborts
   * (someone else answered: a handler still running can stop).
   */
  answer(requestId: string, outcome: InboundOutcome, abortReason?: unknown): boolean {
    const slot = this.#slots.get(requestId);
    if (!slot) return false;
    this.#release(slot);
    if (abortReason !== undefined) slot.controller.abort(abortReason);
    this.#remember(requestId, outcome);
    this.reply(requestId, outcome);
    return true;
  }

  #remember(requestId: string, outcome: InboundOutcome): void {
    this.#answers.set(requestId, outcome);
    if (this.#answers.size <= ANSWERS_KEPT) return;
    const oldest = this.#answers.keys().next().value;
    if (oldest !== undefined) this.#answers.delete(oldest);
  }

  /**
   * Writes an answer to a request that is not being served (unsupported,
   * unreadable): the CLI never waits on us. A payload JSON cannot carry (a
   * BigInt, a cycle) fails its encoding: it is answered with that error instead.
   */
  reply(requestId: string, outcome: InboundOutcome): void {
    this.#write(controlResponse(requestId, outcome)).catch((error) => {
      if (outcome.ok && error instanceof TypeError) {
        this.#write(controlResponse(requestId, { ok: false, error: error.message })).catch(
          () => {},
        );
      }
      // Otherwise the transport is gone; the session reports its end.
    });
  }

  /**
   * Runs `handler` for a request and answers with what it returns, or with
   * its error. A repeated id is ignored.
   */
  serve(
    requestId: string,
    subtype: string,
    handler: (signal: AbortSignal) => Record<string, unknown> | Promise<Record<string, unknown>>,
  ): void {
    const entry = this.open(requestId, { subtype, data: () => undefined });
    if (!entry) return;
    Promise.resolve()
      .then(() => handler(entry.signal))
      .then(
        (payload) => this.answer(requestId, { ok: true, payload }),
        (error) =>
          this.answer(requestId, {
            ok: false,
            error: messageOf(error),
          }),
      );
  }

  /** The CLI withdrew a request: abort its signal and never answer. False when not served. */
  cancel(requestId: string): boolean {
    const slot = this.#slots.get(requestId);
    if (!slot) return false;
    this.#drop(slot, "cli", "The CLI withdrew the request");
    return true;
  }

  /** The session ends: drop every request without answering. */
  abortAll(reason: string): void {
    for (const slot of [...this.#slots.values()]) this.#drop(slot, "session", reason);
  }

  // deno-lint-ignore no-explicit-any
  #drop(slot: Slot<any>, source: DropSource, reason: string): void {
    this.#release(slot);
    slot.controller.abort(new DuplexError("aborted", reason, { requestId: slot.requestId }));
    slot.onDrop?.(slot, source);
  }

  // deno-lint-ignore no-explicit-any
  #release(slot: Slot<any>): void {
    this.#slots.delete(slot.requestId);
    slot.timer?.[Symbol.dispose]();
  }
}
