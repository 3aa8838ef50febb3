// This module is browser compatible.
/*
 * The one registry of requests that come from the CLI (permissions, hook
 * callbacks, MCP messages, elicitation, anything else). It serves each request
 * id exactly once: the first answer wins, a `control_cancel_request` aborts the
 * request's signal and suppresses its answer, a timeout answers for nobody, and
 * `abortAll` drops everything when the session ends. It also builds every
 * `control_response` the session writes.
 */

import { deadline } from "../_deadline.ts";
import { messageOf } from "../_values.ts";
import { DuplexError } from "../errors.ts";

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

export class InboundRegistry {
  // deno-lint-ignore no-explicit-any
  readonly #slots = new Map<string, Slot<any>>();
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
   * served: the first request with an id stands.
   */
  open<T>(requestId: string, options: OpenOptions<T>): InboundEntry<T> | undefined {
    if (this.#slots.has(requestId)) return undefined;
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
    this.reply(requestId, outcome);
    return true;
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
