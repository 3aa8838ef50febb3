// This module is browser compatible.
/* Our outgoing control requests: unique ids, one pending entry each, settled exactly once. */

import { DuplexError } from "../errors.ts";
import type { ControlResponseFrame } from "../protocol/control.ts";

interface Pending {
  subtype: string;
  resolve(response: Record<string, unknown>): void;
  reject(error: unknown): void;
}

/** Options of one control request. */
export interface ControlRequestOptions {
  /** Aborting withdraws the request (a `control_cancel_request` is sent) and rejects with the reason. */
  signal?: AbortSignal;
  /** Rejects with a `timeout` DuplexError after this many milliseconds. */
  timeoutMs?: number;
}

export type ControlWriter = (frame: Record<string, unknown>) => Promise<void>;

export class ControlChannel {
  readonly #pending = new Map<string, Pending>();
  readonly #write: ControlWriter;
  readonly #defaultTimeoutMs: number;
  readonly #prefix = `req_${Math.random().toString(36).slice(2, 8)}_`;
  #counter = 0;
  #failure: DuplexError | undefined;

  constructor(write: ControlWriter, defaultTimeoutMs: number) {
    this.#write = write;
    this.#defaultTimeoutMs = defaultTimeoutMs;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Sends a request and resolves with the CLI's `response` payload (`{}` when it sent none). */
  request(
    subtype: string,
    fields: Record<string, unknown>,
    options: ControlRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#failure) return Promise.reject(this.#failure);
    const timeoutMs = options.timeoutMs ?? this.#defaultTimeoutMs;
    if (!(timeoutMs > 0)) {
      return Promise.reject(new RangeError(`Cannot send ${subtype}: timeoutMs must be > 0`));
    }
    const requestId = `${this.#prefix}${++this.#counter}`;
    const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
    const withdraw = (reason: unknown): void => {
      if (!this.#pending.delete(requestId)) return;
      this.#write({ type: "control_cancel_request", request_id: requestId }).catch(() => {});
      entry.reject(reason);
    };
    const onAbort = (): void => withdraw(signal?.reason);
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const entry: Pending = {
      subtype,
      resolve: (value) => {
        cleanup();
        resolve(value);
      },
      reject: (error) => {
        cleanup();
        reject(error);
      },
    };
    this.#pending.set(requestId, entry);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() =>
      withdraw(
        new DuplexError(
          "timeout",
          `Cannot complete ${subtype}: the CLI did not answer within ${timeoutMs} ms`,
          { requestId, subtype },
        ),
      ), timeoutMs);
    this.#write({ type: "control_request", request_id: requestId, request: { subtype, ...fields } })
      .catch((error) => {
        if (this.#pending.delete(requestId)) entry.reject(error);
      });
    return promise;
  }

  /** Settles the matching request. Returns false for a response nobody waits for. */
  settle(frame: ControlResponseFrame): boolean {
    const response = frame.response;
    const entry = this.#pending.get(response.request_id);
    if (!entry) return false;
    this.#pending.delete(response.request_id);
    if (response.subtype === "success") {
      entry.resolve(response.response ?? {});
    } else {
      entry.reject(
        new DuplexError(
          "control_failed",
          `Cannot complete ${entry.subtype}: the CLI answered "${response.error}"`,
          {
            requestId: response.request_id,
            subtype: entry.subtype,
            ...(response.error_code === undefined ? {} : { errorCode: response.error_code }),
          },
        ),
      );
    }
    return true;
  }

  /** Rejects every pending request, and every later one, with `error`. */
  failAll(error: DuplexError): void {
    this.#failure ??= error;
    const entries = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of entries) entry.reject(error);
  }
}
