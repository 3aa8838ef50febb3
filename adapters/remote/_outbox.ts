// This module is browser compatible.
/*
 * The outbox of the remote transport: everything the client sends, and the
 * acknowledgement of the relay's output.
 *
 * - Messages queued in one burst (one turn of the event loop) leave as ONE
 *   frame, a JSON array when there are several. A Web WebSocket cannot
 *   disable Nagle's algorithm: a second small frame written before the relay
 *   answered the first waits for the relay's delayed TCP ACK (40 ms).
 * - The output acknowledgement rides on that frame. It goes at once every
 *   ACK_EVERY entries (a stream in flight), and after ACK_IDLE_MS alone when
 *   no input carries it.
 * - Nothing is kept for a connection that is down: the transport sends what
 *   matters again after the resume (unacknowledged input, eof or close, the
 *   acknowledgement).
 */

import { type Deadline, deadline } from "../../src/_deadline.ts";
import type { ClientMessage } from "../../src/wire/wire.ts";

/** Output entries after which the client acknowledges at once (flow control of a stream). */
export const ACK_EVERY = 32;
/** Otherwise acknowledgements ride with the next input, or go alone after this long. */
export const ACK_IDLE_MS = 1_000;

/** `WebSocket.OPEN`, without reading a global: a runtime given its own constructor may lack it. */
export const OPEN = 1;

/** What an output sequence number means: deliver it, skip a replayed one, or a gap. */
export type Arrival = "next" | "duplicate" | "gap";

/** The client's outgoing frames and its acknowledgement of output. */
export class Outbox {
  /** Where frames go; undefined while the connection is down. */
  #socket: WebSocket | undefined;
  /** The messages of this burst. */
  #queue: ClientMessage[] = [];
  #flushQueued = false;
  #closed = false;
  /** Output: the last sequence number delivered, and the last one acknowledged to the relay. */
  readonly #output = { delivered: 0, acknowledged: 0, idle: undefined as Deadline | undefined };
  readonly #onSendError: (socket: WebSocket, error: unknown) => void;

  /** @param onSendError Called when a socket throws on `send` (the frame is lost). */
  constructor(onSendError: (socket: WebSocket, error: unknown) => void) {
    this.#onSendError = onSendError;
  }

  /** The last output sequence number delivered (what a resume continues after). */
  get delivered(): number {
    return this.#output.delivered;
  }

  /**
   * Sends from now on through `socket`. The relay of a new connection has no
   * acknowledgement from it yet: the next frame repeats the last one.
   */
  attach(socket: WebSocket): void {
    this.#socket = socket;
    this.#output.acknowledged = 0;
  }

  /** The connection is down: queued and later messages are dropped until `attach`. */
  detach(): void {
    this.#socket = undefined;
  }

  /** Queues a message; every message of the same burst leaves in one frame. */
  send(message: ClientMessage): void {
    if (this.#closed) return;
    this.#queue.push(message);
    this.#schedule();
  }

  /**
   * Takes the sequence number of an output entry.
   *
   * @returns `"next"` to deliver it (then acknowledged in due time), `"duplicate"` for one
   * already delivered (replayed after a resume), `"gap"` when one is missing.
   */
  arrive(seq: number): Arrival {
    const output = this.#output;
    if (seq <= output.delivered) return "duplicate";
    if (seq !== output.delivered + 1) return "gap";
    output.delivered = seq;
    if (output.delivered - output.acknowledged >= ACK_EVERY) {
      this.acknowledge();
    } else if (output.idle === undefined) {
      const idle = deadline(ACK_IDLE_MS);
      idle.signal.addEventListener("abort", () => {
        output.idle = undefined;
        this.acknowledge();
      }, { once: true });
      output.idle = idle;
    }
    return "next";
  }

  /** Acknowledges the output delivered so far with the next frame (sent at the end of the burst). */
  acknowledge(): void {
    if (!this.#closed) this.#schedule();
  }

  /**
   * Ends the outbox: sends what is queued now (with a due acknowledgement: the
   * relay waits for the one of the exit), stops its timer, sends nothing more.
   */
  close(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#queue = [];
    this.#socket = undefined;
    this.#stopIdle();
  }

  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.#flush();
    });
  }

  #flush(): void {
    const messages = this.#queue;
    this.#queue = [];
    const socket = this.#socket;
    if (socket === undefined) return; // sent again on resume
    try {
      // Inside the try: in workerd even reading readyState of another request's socket throws.
      if (socket.readyState !== OPEN) return; // sent again on resume
      const output = this.#output;
      if (output.delivered > output.acknowledged) {
        messages.push({ t: "ack", seq: output.delivered });
        output.acknowledged = output.delivered;
        this.#stopIdle();
      }
      if (messages.length === 0) return;
      socket.send(JSON.stringify(messages.length === 1 ? messages[0] : messages));
    } catch (error) {
      // No close event may follow (in workerd: I/O on behalf of another request): say so now.
      this.#onSendError(socket, error);
    }
  }

  #stopIdle(): void {
    this.#output.idle?.[Symbol.dispose]();
    this.#output.idle = undefined;
  }
}
