// This module is browser compatible.
/* CLI-to-host control requests other than permissions: each answered once, or never if withdrawn. */

import { DuplexError } from "../errors.ts";

export type InboundReply = (
  requestId: string,
  outcome: { ok: true; payload: Record<string, unknown> } | { ok: false; error: string },
) => Promise<void>;

export class InboundRequests {
  readonly #pending = new Map<string, AbortController>();
  readonly #reply: InboundReply;

  constructor(reply: InboundReply) {
    this.#reply = reply;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Runs `handler` and answers with what it returns, or with its error; a repeated id is ignored. */
  serve(
    requestId: string,
    handler: (signal: AbortSignal) => Record<string, unknown> | Promise<Record<string, unknown>>,
  ): void {
    if (this.#pending.has(requestId)) return;
    const controller = new AbortController();
    this.#pending.set(requestId, controller);
    const settle = (
      outcome: { ok: true; payload: Record<string, unknown> } | { ok: false; error: string },
    ): void => {
      if (this.#pending.get(requestId) !== controller) return; // withdrawn meanwhile
      this.#pending.delete(requestId);
      this.#reply(requestId, outcome).catch((error) => {
        // A payload JSON cannot carry (a BigInt, a cycle) fails its encoding with a TypeError:
        // answer with that error instead, so the CLI is never left waiting.
        if (outcome.ok && error instanceof TypeError) {
          this.#reply(requestId, { ok: false, error: error.message }).catch(() => {});
        }
      });
    };
    Promise.resolve()
      .then(() => handler(controller.signal))
      .then(
        (payload) => settle({ ok: true, payload }),
        (error) =>
          settle({ ok: false, error: error instanceof Error ? error.message : String(error) }),
      );
  }

  /** The CLI withdrew a request: abort its handler and never answer. */
  cancel(requestId: string): boolean {
    const controller = this.#pending.get(requestId);
    if (!controller) return false;
    this.#pending.delete(requestId);
    controller.abort(new DuplexError("aborted", "The CLI withdrew the request", { requestId }));
    return true;
  }

  abortAll(reason: string): void {
    for (const [requestId, controller] of this.#pending) {
      controller.abort(new DuplexError("aborted", reason, { requestId }));
    }
    this.#pending.clear();
  }
}
