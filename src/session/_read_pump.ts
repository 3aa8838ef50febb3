// This module is browser compatible.
/*
 * The read pump: reads the transport's stdout into the decoder in slices,
 * letting subscribers that keep reading catch up between slices, and its
 * stderr into events. It ends when the transport's streams end (which the
 * transport guarantees by the time `closed` resolves: the transport bounds
 * its own drain after its peer ended). A transport that breaks that promise is
 * not waited for: once its peer ended, a read that makes no progress for a few
 * macrotasks is given up and reported. A pump that dies (a stream that errors,
 * a chunk that is not bytes, a handler that throws) does not leave a session
 * that looks alive with nobody reading: it reports the failure, and the
 * session ends.
 */

import { messageOf } from "../_values.ts";
import { FrameDecoder } from "../codec/frame_decoder.ts";
import type { Broadcast } from "../subscriptions/_broadcast.ts";
import type { Transport } from "../transport/transport.ts";
import type { DiagnosticEvent, SessionEvent } from "./events.ts";

/* Bytes decoded between chances for subscribers to catch up (~30 stream_event frames). */
const SLICE_BYTES = 8_192;
/* Macrotasks without progress after the peer ended before a stream is given up. */
const ENDED_PATIENCE = 3;

export interface ReadPumpOptions {
  readonly transport: Transport;
  /** Whose subscribers may hold the pump back for a moment (see `Broadcast.drain`). */
  readonly broadcast: Broadcast<SessionEvent>;
  /** A checked line bound, or undefined for the decoder's default. */
  readonly maxLineBytes: number | undefined;
  readonly onFrame: (frame: Record<string, unknown>) => void;
  readonly publish: (event: SessionEvent) => void;
  /** Called once if stdout can no longer be read; the session must end. */
  readonly onFailure: (error: unknown) => void;
}

export class ReadPump {
  /** Resolves when both streams were read to their end (or given up). */
  readonly done: Promise<void>;
  readonly #options: ReadPumpOptions;
  readonly #decoder: FrameDecoder;
  readonly #readers = new Set<ReadableStreamDefaultReader<unknown>>();
  /** Reads completed, on both streams: progress, as the watch after the peer's end sees it. */
  #reads = 0;
  #finished = false;

  constructor(options: ReadPumpOptions) {
    this.#options = options;
    const { transport, maxLineBytes } = options;
    this.#decoder = new FrameDecoder({
      ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
      onFrame: options.onFrame,
      onDiagnostic: options.publish,
      retainChunks: true, // transports never change a chunk (the Transport contract)
      releaseChunks: transport.info.freshChunks === true,
    });
    const stdout = this.#stdout(transport.readable);
    const stderr = transport.stderr ? this.#stderr(transport.stderr) : Promise.resolve();
    this.done = Promise.all([stdout, stderr]).then(() => {
      this.#finished = true;
    });
  }

  /**
   * The peer ended (the transport's `closed` resolved): its streams have
   * ended, or are about to deliver their last queued chunks. Resolves once
   * the pump is done; a stream still waiting on its peer is given up.
   */
  async peerEnded(): Promise<void> {
    let idle = 0;
    while (!this.#finished && idle < ENDED_PATIENCE) {
      const before = this.#reads;
      await new Promise((resolve) => setTimeout(resolve, 0));
      idle = this.#reads === before ? idle + 1 : 0;
    }
    if (!this.#finished) {
      this.#options.publish({
        type: "diagnostic",
        kind: "stream_error",
        message: "The transport's output did not end with its peer (a transport that breaks " +
          "its contract); the rest was given up",
      });
      this.cancel();
    }
    await this.done;
  }

  /** Stops reading now (the session ended without its transport's end). */
  cancel(): void {
    for (const reader of this.#readers) reader.cancel().catch(() => {});
  }

  async #stdout(readable: ReadableStream<Uint8Array>): Promise<void> {
    const { broadcast } = this.#options;
    const reader = readable.getReader();
    this.#readers.add(reader);
    let failure: { error: unknown } | undefined;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        this.#reads++;
        if (done) break;
        if (!(value instanceof Uint8Array)) {
          throw new TypeError(
            `The transport yielded a ${typeof value} chunk; transports yield Uint8Array bytes ` +
              `(encode each line with its "\\n")`,
          );
        }
        // A read of a pipe that has data resolves without a macrotask, and a chunk can hold
        // hundreds of frames: feed it in slices and let subscribers that keep reading catch
        // up between slices, or a burst overflows even a subscriber that reads at full speed.
        if (value.length <= SLICE_BYTES) {
          this.#decoder.push(value);
          if (broadcast.pressured) await broadcast.drain();
          continue;
        }
        for (let offset = 0; offset < value.length; offset += SLICE_BYTES) {
          this.#decoder.push(value.subarray(offset, offset + SLICE_BYTES));
          if (broadcast.pressured) await broadcast.drain();
        }
      }
      this.#decoder.end();
    } catch (error) {
      failure = { error };
    } finally {
      this.#readers.delete(reader);
      reader.releaseLock();
    }
    if (failure) {
      this.#options.publish(streamError("Reading the CLI's output failed", failure.error));
      readable.cancel().catch(() => {});
      this.#options.onFailure(failure.error);
    }
  }

  async #stderr(stderr: ReadableStream<string>): Promise<void> {
    const reader = stderr.getReader();
    this.#readers.add(reader);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        this.#reads++;
        if (done) break;
        this.#options.publish({ type: "stderr", line: value });
      }
    } catch (error) {
      this.#options.publish(streamError("The CLI's stderr stream failed", error));
    } finally {
      this.#readers.delete(reader);
      reader.releaseLock();
    }
  }
}

function streamError(what: string, error: unknown): DiagnosticEvent {
  const reason = messageOf(error);
  return { type: "diagnostic", kind: "stream_error", message: `${what}: ${reason}` };
}
