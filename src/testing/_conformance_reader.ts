// This module is browser compatible.
/**
 * The transport conformance suite's readers: {@linkcode OutputReader} decodes
 * `readable` and checks every chunk; {@linkcode drainEnded} reads a stream
 * that should have ended. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { abortable, deadline } from "../_deadline.ts";
import { type DecodeDiagnostic, FrameDecoder } from "../codec/frame_decoder.ts";
import type { Transport } from "../transport/transport.ts";
import {
  ContractTimeout,
  describeError,
  settle,
  settlesSoon,
  show,
} from "./_conformance_assert.ts";

/** The most chunks a stream may still yield once it should have ended. */
const MAX_DRAIN_READS = 100_000;

/**
 * Reads a stream that should have ended: every read must settle at once
 * (within a few macrotasks, not waiting on the peer) and one must be done.
 *
 * @returns The chunks read before the end.
 */
export async function drainEnded<T>(
  reader: ReadableStreamDefaultReader<T>,
  what: string,
): Promise<T[]> {
  const chunks: T[] = [];
  await untilEnded(
    async () => {
      const result = await reader.read();
      if (!result.done) chunks.push(result.value);
      return result.done;
    },
    what,
    () => `${chunks.length} chunk(s): ${show(chunks)}`,
  );
  return chunks;
}

/* Calls `read` (true at the end) until the end; each call must settle at once. */
async function untilEnded(
  read: () => Promise<boolean>,
  what: string,
  got: () => string,
): Promise<void> {
  for (let reads = 0; reads < MAX_DRAIN_READS; reads++) {
    const next = read();
    if (!(await settlesSoon(next))) {
      throw new Error(
        `Expected ${what} to have ended (reads return done at once); a read is still waiting ` +
          `after ${got()}`,
      );
    }
    if (await next) return;
  }
  throw new Error(`Expected ${what} to have ended; it yielded over ${MAX_DRAIN_READS} chunks`);
}

/**
 * Reads `readable` through a {@linkcode FrameDecoder}. Every chunk must be a
 * `Uint8Array` (with `info.freshChunks`, one with a buffer of its own); each
 * is kept with a copy, so a chunk changed after it was read can be found.
 */
export class OutputReader {
  readonly frames: Record<string, unknown>[] = [];
  readonly diagnostics: DecodeDiagnostic[] = [];
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder: FrameDecoder;
  readonly #timeoutMs: number;
  /** With `info.freshChunks`, the buffers seen so far (each chunk must bring its own). */
  readonly #buffers: WeakSet<ArrayBufferLike> | undefined;
  readonly #kept: { chunk: Uint8Array; copy: Uint8Array }[] = [];
  #inflight: Promise<boolean> | undefined;
  #done = false;
  #failure: Error | undefined;

  constructor(transport: Transport, timeoutMs: number) {
    const readable = transport.readable;
    if (typeof readable?.getReader !== "function") {
      throw new Error(
        `Expected transport.readable to be a ReadableStream; got ${describeError(readable)}`,
      );
    }
    this.reader = readable.getReader();
    this.#timeoutMs = timeoutMs;
    this.#buffers = transport.info?.freshChunks === true ? new WeakSet() : undefined;
    this.#decoder = new FrameDecoder({
      onFrame: (frame) => this.frames.push(frame),
      onDiagnostic: (diagnostic) => this.diagnostics.push(diagnostic),
    });
  }

  /** Waits until `count` frames were decoded in all. */
  async waitFor(count: number, what: string): Promise<void> {
    await this.#until(() => this.frames.length >= count, what);
    if (this.frames.length < count) {
      throw new Error(
        `Expected ${what}: ${count} frame(s); readable ended after ${this.frames.length}: ` +
          `${show(this.frames)}${this.#diagnosed()}`,
      );
    }
  }

  /** Reads until `readable` ends (then the decoder is ended too). */
  async toEnd(what: string): Promise<void> {
    await this.#until(() => false, what);
  }

  /** Reads a `readable` that should have ended: see {@linkcode drainEnded}. */
  async drainEnded(what: string): Promise<void> {
    if (!this.#done) {
      await untilEnded(
        () => this.readPending(),
        what,
        () => `${this.frames.length} frame(s): ${show(this.frames)}${this.#diagnosed()}`,
      );
    }
    this.#throwIfBroken();
  }

  /** Starts a read (or joins the one in flight); resolves with true when it found the end. */
  readPending(): Promise<boolean> {
    this.#inflight ??= this.#readOnce().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** Cancels `readable` through the reader. */
  cancel(): Promise<void> {
    try {
      return this.reader.cancel();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Throws if a chunk read so far has changed since it was read. */
  expectChunksUnchanged(): void {
    const changed = this.#kept.findIndex(({ chunk, copy }) =>
      chunk.length !== copy.length || chunk.some((byte, i) => byte !== copy[i])
    );
    if (changed >= 0) {
      throw new Error(
        `Expected readable's chunks never to change once enqueued; chunk ${changed} of ` +
          `${this.#kept.length} changed after it was read (a transport must not reuse its buffer)`,
      );
    }
  }

  async #until(done: () => boolean, what: string): Promise<void> {
    using limit = deadline(this.#timeoutMs);
    while (!done() && !this.#done) {
      this.#throwIfBroken();
      // A read never rejects (#readOnce records failures): a rejection is the deadline.
      const read = await settle(abortable(this.readPending(), limit.signal));
      if (read.status === "rejected") {
        throw new ContractTimeout(
          `Expected ${what} within ${this.#timeoutMs} ms; got ${this.frames.length} frame(s): ` +
            `${show(this.frames)}${this.#diagnosed()}`,
        );
      }
    }
    this.#throwIfBroken();
  }

  async #readOnce(): Promise<boolean> {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await this.reader.read();
    } catch (error) {
      this.#done = true;
      this.#failure ??= new Error(
        `Expected readable to end when the peer's output ends; it errored: ${describeError(error)}`,
        { cause: error },
      );
      return true;
    }
    if (result.done) {
      this.#done = true;
      this.#guard(() => this.#decoder.end());
      return true;
    }
    const chunk: unknown = result.value;
    if (!(chunk instanceof Uint8Array)) {
      const got = typeof chunk === "string" ? `a string ${show(chunk, 80)}` : describeError(chunk);
      this.#failure ??= new Error(`Expected readable to yield Uint8Array chunks only; got ${got}`);
      return false;
    }
    if (this.#buffers !== undefined) {
      if (this.#buffers.has(chunk.buffer)) {
        this.#failure ??= new Error(
          "Expected each readable chunk to have a buffer of its own (info.freshChunks is true); " +
            "one shares its buffer with an earlier chunk",
        );
      }
      this.#buffers.add(chunk.buffer);
    }
    this.#kept.push({ chunk, copy: chunk.slice() });
    this.#guard(() => this.#decoder.push(chunk));
    return false;
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#failure ??= new Error(`The decoder failed: ${describeError(error)}`, { cause: error });
    }
  }

  #throwIfBroken(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  #diagnosed(): string {
    if (this.diagnostics.length === 0) return "";
    const list = this.diagnostics.map((d) => `${d.kind} ${JSON.stringify(d.excerpt)}`);
    return `; skipped lines: ${show(list.join(", "))}`;
  }
}
