// This module is browser compatible.
/* Our outgoing control requests: unique ids, one pending entry each, settled exactly once. */

import { checkMs, deadline } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { ControlResponseFrame } from "../protocol/control.ts";
import type { ControlRequestOptions } from "./session_options.ts";
import { SessionTelemetry } from "./_session_telemetry.ts";

interface Pending {
  readonly subtype: string;
  resolve(response: Record<string, unknown>): void;
  reject(error: unknown): void;
}

export type ControlWriter = (frame: Record<string, unknown>) => Promise<void>;

export class ControlChannel {
  readonly #pending = new Map<string, Pending>();
  readonly #write: ControlWriter;
  readonly #defaultTimeoutMs: number;
  readonly #telemetry: SessionTelemetry;
  readonly #prefix = `req_${Math.random().toString(36).slice(2, 8)}_`;
  #counter = 0;
  #failure: DuplexError | undefined;

  /**
   * @param write Writes a frame to the CLI.
   * @param defaultTimeoutMs A checked duration: how long a request waits by default.
   * @param telemetry Where requests report (spans, metrics, stats).
   */
  constructor(
    write: ControlWriter,
    defaultTimeoutMs: number,
    telemetry: SessionTelemetry = new SessionTelemetry(),
  ) {
    this.#write = write;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    this.#telemetry = telemetry;
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
    let timeoutMs: number;
    try {
      signal?.throwIfAborted();
      if (this.#failure) throw this.#failure;
      timeoutMs = options.timeoutMs === undefined
        ? this.#defaultTimeoutMs
        : checkMs(options.timeoutMs, `Cannot send ${subtype}: timeoutMs`);
    } catch (error) {
      return Promise.reject(error);
    }
    const requestId = `${this.#prefix}${++this.#counter}`;
    const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
    const limit = deadline(timeoutMs, {
      signal,
      reason: () =>
        new DuplexError(
          "timeout",
          `Cannot complete ${subtype}: the CLI did not answer within ${timeoutMs} ms`,
          { requestId, subtype },
        ),
    });
    const onAbort = (): void => {
      if (!this.#pending.delete(requestId)) return;
      this.#write({ type: "control_cancel_request", request_id: requestId }).catch(() => {});
      entry.reject(limit.signal.reason);
    };
    const telemetry = this.#telemetry;
    const span = telemetry.controlStarted(subtype, requestId);
    const entry: Pending = {
      subtype,
      resolve: (value) => {
        done();
        telemetry.controlAnswered(span);
        resolve(value);
      },
      reject: (error) => {
        done();
        telemetry.controlFailed(span, error);
        reject(error);
      },
    };
    function done(): void {
      limit[Symbol.dispose]();
      limit.signal.removeEventListener("abort", onAbort);
    }
    this.#pending.set(requestId, entry);
    limit.signal.addEventListener("abort", onAbort, { once: true });
    this.#write({ type: "control_request", request_id: requestId, request: { subtype, ...fields } })
      .catch((error) => {
        if (this.#pending.delete(requestId)) entry.reject(error);
      });
    return promise;
  }

  /** The subtype of our request `requestId` while it waits for its answer. */
  subtypeOf(requestId: string): string | undefined {
    return this.#pending.get(requestId)?.subtype;
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
