// This module is browser compatible.
/*
 * The end of a session, and the one lifecycle state it moves (the pure
 * rules of that state are in `_lifecycle.ts`): `close()` lets the transport
 * end the peer, bounded by `closeTimeoutMs`; a failure (the read pump died,
 * a refusal) closes it the same way with its error; the owner's signal
 * closes it too. Once the peer ended, every part hears it at once: pending
 * requests and turns fail, the CLI's requests are dropped, the session span
 * ends, subscribers get `exit` and the end.
 */

import { abortable, checkMs, deadline } from "../_deadline.ts";
import { messageOf } from "../_values.ts";
import { DuplexError, type TransportExit } from "../errors.ts";
import type { Broadcast } from "../subscriptions/_broadcast.ts";
import type { Transport } from "../transport/transport.ts";
import type { ControlChannel } from "./_control_channel.ts";
import type { ControlRouter } from "./_control_router.ts";
import { assertUsable, endingOf, exitStatusOf, type Lifecycle, READY } from "./_lifecycle.ts";
import type { TranscriptMirror } from "./_mirror.ts";
import type { ReadPump } from "./_read_pump.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";
import type { TurnTracker } from "./_turn_tracker.ts";
import type { ExitStatus, SessionEvent } from "./events.ts";
import type { WaitOptions } from "./session_options.ts";

/** The parts that hear the end. */
export interface EndParts {
  readonly transport: Transport;
  readonly requests: ControlRouter;
  readonly control: ControlChannel;
  readonly turns: TurnTracker;
  readonly pump: ReadPump;
  readonly mirror: TranscriptMirror | undefined;
  readonly telemetry: SessionTelemetry;
  readonly broadcast: Broadcast<SessionEvent>;
  /** Delivers the `exit` event. */
  publish(event: SessionEvent): void;
}

export class SessionEnd {
  readonly #parts: EndParts;
  readonly #closeTimeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #exit = Promise.withResolvers<ExitStatus>();
  readonly #onOwnerAbort = (): void => void this.close();
  #lifecycle: Lifecycle = READY;
  #closing: Promise<ExitStatus> | undefined;

  /**
   * Follows the transport to its end.
   *
   * @param parts The session's parts.
   * @param closeTimeoutMs A checked bound on `close()`.
   * @param signal The owner's signal: aborting it closes the session.
   */
  constructor(parts: EndParts, closeTimeoutMs: number, signal: AbortSignal | undefined) {
    this.#parts = parts;
    this.#closeTimeoutMs = closeTimeoutMs;
    parts.transport.closed.then((exit) =>
      parts.pump.peerEnded()
        .then(() => parts.mirror?.close()) // the store gets the last lines before the exit
        .then(() => this.#finish(exit))
    );
    this.#signal = signal;
    signal?.addEventListener("abort", this.#onOwnerAbort, { once: true });
  }

  /** Where the session is in its life. */
  get lifecycle(): Lifecycle {
    return this.#lifecycle;
  }

  /**
   * Checks that the session takes work.
   *
   * @throws As `assertUsable` of `_lifecycle.ts`.
   */
  assertUsable(what: string): void {
    assertUsable(this.#lifecycle, what);
  }

  /** Closes the session (idempotent); resolves with how it ended. */
  close(): Promise<ExitStatus> {
    return this.#shutDown(undefined);
  }

  /** Ends the session with an error every pending operation gets (a refusal). */
  fail(failure: DuplexError): Promise<ExitStatus> {
    return this.#shutDown(failure);
  }

  /* The read pump died: nobody reads the CLI's output any more, so the session ends. */
  readFailed(cause: unknown): void {
    const error = new DuplexError(
      "protocol",
      `The session stopped: it could not read the CLI's output (${
        messageOf(cause)
      }); start a new session`,
      { cause },
    );
    void this.#shutDown(error);
  }

  /**
   * Waits until the session ended.
   *
   * @param options A timeout (then it resolves `{ state: "running" }`) and a signal.
   * @returns How the session ended, or `{ state: "running" }` on timeout.
   */
  waitForExit(options: WaitOptions): Promise<ExitStatus> {
    const { timeoutMs, signal } = options;
    const status = exitStatusOf(this.#lifecycle);
    if (status.state !== "running") return Promise.resolve(status);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (timeoutMs === undefined && !signal) return this.#exit.promise;
    let ms: number;
    try {
      ms = timeoutMs === undefined ? Infinity : checkMs(timeoutMs, "Cannot wait: timeoutMs");
    } catch (error) {
      return Promise.reject(error);
    }
    const limit = deadline(ms, { signal });
    return abortable(this.#exit.promise, limit.signal)
      .catch((reason) => {
        if (limit.expired) return status; // still running
        throw reason;
      })
      .finally(() => limit[Symbol.dispose]());
  }

  #shutDown(failure: DuplexError | undefined): Promise<ExitStatus> {
    if (this.#closing) return this.#closing;
    const lifecycle = this.#lifecycle;
    if (lifecycle.phase === "ended") return this.#closing = Promise.resolve(lifecycle.status);
    this.#lifecycle = { phase: "closing", failure };
    this.#parts.requests.abortAll(failure ? "The session failed" : "The session is closing");
    const bound = this.#closeTimeoutMs;
    this.#closing = (async () => {
      using limit = deadline(bound);
      const ended = this.#parts.transport.close().then(() => this.#exit.promise);
      await abortable(ended, limit.signal).catch(() => {
        this.#parts.pump.cancel();
        this.#finish({
          code: null,
          signal: null,
          reason: `the transport did not close within ${bound} ms`,
          stderrTail: "",
          requested: true,
        });
      });
      return this.#exit.promise;
    })();
    return this.#closing;
  }

  #finish(exit: TransportExit): void {
    const lifecycle = this.#lifecycle;
    if (lifecycle.phase === "ended") return;
    const { status, error } = endingOf(lifecycle, exit);
    this.#lifecycle = { phase: "ended", status };
    const parts = this.#parts;
    parts.control.failAll(error);
    parts.turns.failAll(error);
    parts.requests.abortAll("The session ended");
    this.#signal?.removeEventListener("abort", this.#onOwnerAbort);
    parts.telemetry.sessionEnded(exit, status);
    parts.publish({ type: "exit", status });
    parts.broadcast.close();
    this.#exit.resolve(status);
  }
}
