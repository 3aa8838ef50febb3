// This module is browser compatible.
/**
 * The transport {@linkcode record} returns: passes everything through to the
 * wrapped transport, unchanged, and writes what crosses it to a transcript.
 * Private to `@duplex/claude/testing`.
 *
 * Nothing crosses unrecorded: a written line reaches the wrapped transport
 * only once the sink has accepted it, and an output chunk reaches the reader
 * only once the sink has accepted the lines it completes. When the sink
 * fails, the transport ends with the recording's error: writes reject with
 * it, `readable` errors with it (output not yet read is not delivered),
 * `stderr` ends, and the wrapped transport is closed.
 *
 * @module
 */

import { abortable, deadline } from "../_deadline.ts";
import type { DuplexError, TransportExit } from "../errors.ts";
import type { Transport, TransportInfo } from "../transport/transport.ts";
import type { Recorded, TranscriptWriter } from "./_transcript_writer.ts";

/** How a tapped stream is read: ahead of its consumer by this many chunks. */
const READ_AHEAD_CHUNKS = 64;

/**
 * Records a chunk: undefined once its entries are accepted, else a promise
 * that resolves when they are (or rejects with the recording's error).
 */
type Seen<T> = (chunk: T) => Promise<void> | undefined;

/**
 * A stream that reads its source in order, calling `seen` for each chunk on
 * the way, and passes a chunk on only once `seen` says it was recorded.
 */
class Tap<T> {
  readonly stream: ReadableStream<T>;
  /** Resolves once the source has ended, failed or been cancelled. */
  readonly ended: Promise<void>;
  #reader: ReadableStreamDefaultReader<T>;
  #controller!: ReadableStreamDefaultController<T>;
  #queue: Promise<boolean> = Promise.resolve(true);
  #done = false;
  /** Marks the end (once); `last` is called unless the recording is over. */
  #end: (recordTail?: boolean) => void;

  constructor(source: ReadableStream<T>, seen: Seen<T>, last: () => void) {
    this.#reader = source.getReader();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.ended = promise;
    this.#end = (recordTail = true) => {
      if (this.#done) return;
      this.#done = true;
      try {
        if (recordTail) last();
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
  #step(seen: Seen<T>): Promise<boolean> {
    this.#queue = this.#queue.then(async (more) => {
      if (!more || this.#done) return false;
      try {
        const { done, value } = await this.#reader.read();
        if (this.#done) return false; // stopped meanwhile: nothing more passes
        if (done) {
          this.#end();
          this.#controller.close();
          return false;
        }
        const recorded = seen(value);
        if (recorded) await recorded;
        if (this.#done) return false;
        this.#controller.enqueue(value);
        return true;
      } catch (error) {
        // The source failed (or the chunk's recording did, and stop() has run).
        if (!this.#done) {
          this.#end();
          this.#controller.error(error);
        }
        return false;
      }
    });
    return this.#queue;
  }

  /** Reads everything the source still holds (it has ended), whatever the consumer's pace. */
  async drain(seen: Seen<T>): Promise<void> {
    while (await this.#step(seen));
  }

  /**
   * Passes nothing more on: errors the stream with `error` (chunks not yet
   * read are dropped), or ends it after what it holds when `error` is
   * undefined, and cancels the source.
   */
  stop(error?: unknown): void {
    if (this.#done) return;
    this.#end(false);
    if (error === undefined) this.#controller.close();
    else this.#controller.error(error);
    this.#reader.cancel(error).catch(() => {});
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

/* The wait for entries to be accepted: none when all were; a rejection with the recording's error. */
function whenRecorded(entries: readonly Recorded[]): Promise<void> | undefined {
  let last: Promise<void> | undefined = undefined;
  for (const entry of entries) {
    if (entry.state === "failed") return Promise.reject(entry.error);
    if (entry.state === "pending") last = entry.written; // the sink takes them in order
  }
  return last;
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
  #out: Tap<Uint8Array>;
  #err: Tap<string> | undefined;
  #inputEnded = false;
  /** Settles once the last write (or end of input) asked for was handed on, or refused. */
  #input: Promise<void> = Promise.resolve();
  /** Writes and ends of input waiting for their turn (for their line's recording). */
  #waiting = 0;

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
    let lines: Recorded[] = [];
    const splitter = new LineSplitter(options.maxLineBytes, (text, dropped) => {
      lines.push(writer.line("stdout", text, dropped > 0 ? { truncated: dropped } : undefined));
    });
    const seeOut = (chunk: Uint8Array) => {
      lines = [];
      splitter.push(chunk);
      return whenRecorded(lines);
    };
    const out = new Tap(inner.readable, seeOut, () => splitter.end());
    this.#out = out;
    this.readable = out.stream;
    const seeErr = (line: string) => whenRecorded([writer.line("stderr", line)]);
    const err = inner.stderr ? new Tap(inner.stderr, seeErr, () => {}) : undefined;
    this.#err = err;
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
      const failure = writer.error;
      if (!failure) return exit;
      // The recorder ended the peer: not the peer's choice, nor the session's.
      return { ...exit, code: null, requested: false, reason: failure.message };
    });
  }

  /**
   * Records the line, then writes it, once the sink has accepted it (a line
   * the recording lost never reaches the peer).
   *
   * @param line One JSON text.
   * @returns Once the wrapped transport took it.
   * @throws {DuplexError} The recording's error (`aborted`, `Cannot record the
   * session: …`) once the sink failed; else what the wrapped transport throws.
   */
  write(line: string): Promise<void> {
    const recorded = this.#inputEnded ? undefined : this.#writer.line("stdin", line);
    if (recorded?.state === "failed") return Promise.reject(recorded.error);
    if (this.#waiting === 0 && recorded?.state !== "pending") return this.#send(line);
    return this.#inOrder(recorded?.state === "pending" ? recorded.written : undefined, () => {
      return this.#send(line);
    });
  }

  endInput(): Promise<void> {
    this.#endedInput();
    if (this.#waiting === 0) return this.#inner.endInput();
    return this.#inOrder(undefined, () => this.#inner.endInput());
  }

  async close(): Promise<TransportExit> {
    this.#endedInput();
    await this.#inner.close();
    return await this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Ends the transport after a failed write to the transcript: nothing more
   * is passed on, `readable` errors with the recording's error, `stderr`
   * ends, and the wrapped transport is closed.
   *
   * @param error The recording's error.
   */
  abort(error: DuplexError): void {
    this.#out.stop(error);
    this.#err?.stop();
    void this.#inner.close().catch(() => {});
  }

  /*
   * Hands a line (or the end of input) on after everything asked for before
   * it, once `recorded` resolves; the next waits for the hand-over only, not
   * for the wrapped transport's answer.
   */
  #inOrder(recorded: Promise<void> | undefined, hand: () => Promise<void>): Promise<void> {
    this.#waiting += 1;
    const turn = this.#input
      .then(() => recorded)
      .then(() => ({ handed: hand() }))
      .finally(() => {
        this.#waiting -= 1;
      });
    this.#input = turn.then(() => {}, () => {});
    return turn.then(({ handed }) => handed);
  }

  /* Writes a recorded line, unless the recording failed meanwhile; its failure explains the peer's end. */
  #send(line: string): Promise<void> {
    if (this.#writer.error) return Promise.reject(this.#writer.error);
    return this.#inner.write(line).catch((error: unknown) => {
      throw this.#writer.error ?? error;
    });
  }

  #endedInput(): void {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    this.#writer.meta({ event: "stdin_end" });
  }
}
