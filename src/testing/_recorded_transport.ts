// This module is browser compatible.
/**
 * The transport {@linkcode record} returns: passes everything through to the
 * wrapped transport, unchanged, and writes what crosses it to a transcript.
 * Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { abortable, deadline } from "../_deadline.ts";
import type { TransportExit } from "../errors.ts";
import type { Transport, TransportInfo } from "../transport/transport.ts";
import type { TranscriptWriter } from "./_transcript_writer.ts";

/** How a tapped stream is read: ahead of its consumer by this many chunks. */
const READ_AHEAD_CHUNKS = 64;

/** A stream that reads its source in order, calling `seen` for each chunk on the way. */
class Tap<T> {
  readonly stream: ReadableStream<T>;
  /** Resolves once the source has ended, failed or been cancelled. */
  readonly ended: Promise<void>;
  #reader: ReadableStreamDefaultReader<T>;
  #controller!: ReadableStreamDefaultController<T>;
  #queue: Promise<boolean> = Promise.resolve(true);
  #done = false;
  #end: () => void;

  constructor(source: ReadableStream<T>, seen: (chunk: T) => void, last: () => void) {
    this.#reader = source.getReader();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.ended = promise;
    this.#end = () => {
      if (this.#done) return;
      this.#done = true;
      try {
        last();
      } finally {
        resolve();
      }
    };
    this.stream = new ReadableStream<T>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: async () => {
        await this.#step(seen);
      },
      cancel: async (reason) => {
        this.#end();
        await this.#reader.cancel(reason).catch(() => {});
      },
    }, { highWaterMark: READ_AHEAD_CHUNKS });
  }

  /* One read, after the previous one: serial, so chunks are seen in order. */
  #step(seen: (chunk: T) => void): Promise<boolean> {
    this.#queue = this.#queue.then(async (more) => {
      if (!more || this.#done) return false;
      try {
        const { done, value } = await this.#reader.read();
        if (done) {
          this.#end();
          this.#controller.close();
          return false;
        }
        seen(value);
        this.#controller.enqueue(value);
        return true;
      } catch (error) {
        this.#end();
        this.#controller.error(error);
        return false;
      }
    });
    return this.#queue;
  }

  /** Reads everything the source still holds (it has ended), whatever the consumer's pace. */
  async drain(seen: (chunk: T) => void): Promise<void> {
    while (await this.#step(seen));
  }
}

/** Splits bytes into lines, keeping at most `max` bytes of one. */
class LineSplitter {
  #parts: Uint8Array[] = [];
  #size = 0;
  #dropped = 0;
  #decoder = new TextDecoder();
  #max: number;
  #line: (text: string, dropped: number) => void;

  constructor(max: number, line: (text: string, dropped: number) => void) {
    this.#max = max;
    this.#line = line;
  }

  push(chunk: Uint8Array): void {
    let from = 0;
    for (;;) {
      const at = chunk.indexOf(10, from);
      this.#keep(chunk.subarray(from, at < 0 ? chunk.length : at));
      if (at < 0) return;
      this.#flush();
      from = at + 1;
    }
  }

  end(): void {
    if (this.#size > 0 || this.#dropped > 0) this.#flush();
  }

  #keep(part: Uint8Array): void {
    const n = Math.max(0, Math.min(this.#max - this.#size, part.length));
    if (n > 0) {
      this.#parts.push(part.slice(0, n));
      this.#size += n;
    }
    this.#dropped += part.length - n;
  }

  #flush(): void {
    let bytes = new Uint8Array(this.#size);
    let at = 0;
    for (const part of this.#parts) {
      bytes.set(part, at);
      at += part.length;
    }
    let dropped = this.#dropped;
    if (dropped > 0) {
      const whole = wholeCharacters(bytes);
      dropped += bytes.length - whole;
      bytes = bytes.subarray(0, whole);
    }
    this.#parts = [];
    this.#size = 0;
    this.#dropped = 0;
    const text = this.#decoder.decode(bytes);
    if (text.trim() !== "" || dropped > 0) this.#line(text, dropped);
  }
}

/* The length of `bytes` without a UTF-8 sequence cut short at its end. */
function wholeCharacters(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  while (i >= 0 && bytes.length - i < 4 && (bytes[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return bytes.length;
  const lead = bytes[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - i < need ? i : bytes.length;
}

/* Waits for `promise`, at most `ms` (then goes on; its outcome is ignored). */
async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  using limit = deadline(ms);
  await abortable(promise, limit.signal).catch(() => {});
}

/** What a {@linkcode RecordedTransport} needs besides the transport. */
export interface RecordedTransportOptions {
  /** Longest line kept whole (bytes); longer ones are recorded cut, with `truncated`. */
  readonly maxLineBytes: number;
  /** Longest wait after the peer's end for output still queued and for the sink. */
  readonly drainTimeoutMs: number;
}

/** A transport that records what crosses it. */
export class RecordedTransport implements Transport {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr?: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  #inner: Transport;
  #writer: TranscriptWriter;
  #inputEnded = false;

  /**
   * Starts recording an open transport.
   *
   * @param inner The transport.
   * @param writer The transcript.
   * @param options Line bound and drain bound.
   */
  constructor(inner: Transport, writer: TranscriptWriter, options: RecordedTransportOptions) {
    this.#inner = inner;
    this.#writer = writer;
    const { freshChunks: _fresh, ...info } = inner.info;
    this.info = info;
    writer.meta({
      event: "spawn",
      transport: info.kind,
      ...(info.description === undefined ? {} : { description: info.description }),
    });
    const splitter = new LineSplitter(options.maxLineBytes, (text, dropped) => {
      writer.line("stdout", text, dropped > 0 ? { truncated: dropped } : undefined);
    });
    const seeOut = (chunk: Uint8Array) => splitter.push(chunk);
    const out = new Tap(inner.readable, seeOut, () => splitter.end());
    this.readable = out.stream;
    const seeErr = (line: string) => writer.line("stderr", line);
    const err = inner.stderr ? new Tap(inner.stderr, seeErr, () => {}) : undefined;
    if (err) this.stderr = err.stream;
    this.closed = inner.closed.then(async (exit) => {
      // The peer has ended: what it wrote is queued in its streams; take it all, in order.
      const drained = Promise.all([out.drain(seeOut), err?.drain(seeErr)]);
      await bounded(drained, options.drainTimeoutMs);
      writer.meta({
        event: "exit",
        code: exit.code,
        signal: exit.signal,
        ...(exit.reason === undefined ? {} : { reason: exit.reason }),
      });
      await bounded(writer.close(), options.drainTimeoutMs);
      if (!writer.failed) return exit;
      const why = writer.error instanceof Error ? writer.error.message : String(writer.error);
      // The recorder ended the peer: not the peer's choice, nor the session's.
      return { ...exit, code: null, requested: false, reason: `Cannot record the session: ${why}` };
    });
  }

  write(line: string): Promise<void> {
    if (!this.#inputEnded) this.#writer.line("stdin", line);
    return this.#inner.write(line);
  }

  endInput(): Promise<void> {
    this.#endedInput();
    return this.#inner.endInput();
  }

  async close(): Promise<TransportExit> {
    this.#endedInput();
    await this.#inner.close();
    return await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Ends the wrapped transport after a failed write to the transcript. */
  abort(): void {
    void this.#inner.close().catch(() => {});
  }

  #endedInput(): void {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    this.#writer.meta({ event: "stdin_end" });
  }
}
