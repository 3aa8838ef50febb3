/**
 * The child's output pipes as the transport exposes them.
 *
 * - {@linkcode OutputPipe} (stdout): bytes passed through unchanged, read
 *   only as fast as the consumer reads (backpressure reaches the CLI). When
 *   the process has exited, {@linkcode OutputPipe.finish} reads what is left
 *   in the pipe eagerly, so that bytes written just before the exit are
 *   kept even if the exit is noticed first.
 * - {@linkcode LinePipe} (stderr): always drained, so a chatty CLI can never
 *   stall on a full pipe; split into bounded lines that go to the stderr
 *   tail and to a bounded drop-oldest queue behind a `ReadableStream<string>`.
 *
 * @module
 */

import { type Deadline, deadline } from "../../src/_deadline.ts";
import { StderrTail } from "./_stderr_tail.ts";

/* A deadline that cancels the pipe's reader when it expires (dispose it to stop it). */
function giveUpAfter(ms: number, reader: ReadableStreamDefaultReader<Uint8Array>): Deadline {
  const limit = deadline(ms);
  limit.signal.addEventListener("abort", () => {
    reader.cancel().catch(() => {});
  }, { once: true });
  return limit;
}

/** Stdout of the child, passed through as bytes. */
export class OutputPipe {
  /** The bytes, as the consumer sees them. */
  readonly readable: ReadableStream<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  #cancelled = false;

  /** @param source The child's stdout. */
  constructor(source: ReadableStream<Uint8Array>) {
    this.#reader = source.getReader();
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => this.#step(),
      cancel: async (reason) => {
        this.#cancelled = true;
        await this.#reader.cancel(reason).catch(() => {});
        this.#end();
      },
    }, { highWaterMark: 0 });
  }

  /** True once the pipe reached its end (or was cancelled). */
  get ended(): boolean {
    return this.#ended;
  }

  /** True once the pipe reached its end by itself (EOF or a failed read), not by a cancel. */
  get reachedEnd(): boolean {
    return this.#ended && !this.#cancelled;
  }

  /**
   * Reads the rest of the pipe eagerly into the stream's queue, for at most
   * `ms` milliseconds (a process that left a descendant holding the pipe
   * would otherwise keep it open); then gives the pipe up.
   *
   * @param ms The most time to spend.
   */
  async finish(ms: number): Promise<void> {
    using _giveUp = giveUpAfter(ms, this.#reader);
    while (!this.#ended) await this.#step();
  }

  #step(): Promise<void> {
    const next = this.#chain.then(() => this.#readOnce());
    this.#chain = next;
    return next;
  }

  async #readOnce(): Promise<void> {
    if (this.#ended) return;
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await this.#reader.read();
    } catch {
      // A failed read of a pipe means its end; the exit tells what happened.
      this.#end();
      return;
    }
    if (result.done) {
      this.#end();
      return;
    }
    if (!this.#cancelled) {
      try {
        this.#controller?.enqueue(result.value);
      } catch {
        // the consumer went away
      }
    }
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (!this.#cancelled) {
      try {
        this.#controller?.close();
      } catch {
        // already closed or cancelled
      }
    }
  }
}

/** Bounds of a {@linkcode LinePipe}. */
export interface LinePipeBounds {
  /** The longest line kept, in UTF-16 code units; the rest of a longer line is cut. */
  readonly maxLineLength: number;
  /** The most unread lines queued for the stream (older ones are dropped). */
  readonly queueLines: number;
  /** The most unread bytes queued for the stream (older lines are dropped). */
  readonly queueBytes: number;
}

/** Stderr of the child: always drained, split into lines. */
export class LinePipe {
  /** The lines (without newline) nobody has read yet, bounded, oldest dropped first. */
  readonly readable: ReadableStream<string>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #tail: StderrTail;
  readonly #queue: StderrTail;
  readonly #maxLineLength: number;
  readonly #done: Promise<void>;
  #partial = "";
  #cut = 0;
  #ended = false;
  #cancelled = false;
  #wake: (() => void) | undefined;

  /**
   * @param source The child's stderr.
   * @param tail Where every line also goes (the stderr tail).
   * @param bounds The bounds of lines and of the unread queue.
   */
  constructor(source: ReadableStream<Uint8Array>, tail: StderrTail, bounds: LinePipeBounds) {
    this.#reader = source.getReader();
    this.#tail = tail;
    this.#queue = new StderrTail(bounds.queueBytes, bounds.queueLines);
    this.#maxLineLength = bounds.maxLineLength;
    this.readable = new ReadableStream<string>({
      pull: (controller) => this.#pull(controller),
      cancel: () => {
        this.#cancelled = true;
        this.#queue.clear();
        this.#notify();
      },
    }, { highWaterMark: 0 });
    this.#done = this.#run();
  }

  /** How many unread lines were dropped because nobody read them in time. */
  get dropped(): number {
    return this.#queue.dropped;
  }

  /**
   * Waits for the end of the pipe for at most `ms` milliseconds, then gives
   * the pipe up.
   *
   * @param ms The most time to wait.
   */
  async finish(ms: number): Promise<void> {
    using _giveUp = giveUpAfter(ms, this.#reader);
    await this.#done;
  }

  async #run(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.#reader.read();
        if (done) break;
        this.#accept(this.#decoder.decode(value, { stream: true }));
      }
    } catch {
      // A failed read of a pipe means its end.
    } finally {
      this.#accept(this.#decoder.decode());
      if (this.#partial !== "" || this.#cut > 0) this.#emit();
      this.#ended = true;
      this.#notify();
    }
  }

  #accept(text: string): void {
    let start = 0;
    while (start < text.length) {
      const newline = text.indexOf("\n", start);
      const end = newline < 0 ? text.length : newline;
      this.#append(text, start, end);
      if (newline < 0) break;
      this.#emit();
      start = newline + 1;
    }
  }

  #append(text: string, start: number, end: number): void {
    const room = this.#maxLineLength - this.#partial.length;
    const length = end - start;
    if (length <= room) {
      this.#partial += text.slice(start, end);
    } else {
      if (room > 0) this.#partial += text.slice(start, start + room);
      this.#cut += length - Math.max(0, room);
    }
  }

  #emit(): void {
    let line = this.#partial.endsWith("\r") ? this.#partial.slice(0, -1) : this.#partial;
    if (this.#cut > 0) line += `…(${this.#cut} more characters cut)`;
    this.#partial = "";
    this.#cut = 0;
    this.#tail.push(line);
    if (!this.#cancelled) {
      this.#queue.push(line);
      this.#notify();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #pull(controller: ReadableStreamDefaultController<string>): Promise<void> {
    for (;;) {
      if (this.#cancelled) return;
      const line = this.#queue.shift();
      if (line !== undefined) {
        controller.enqueue(line);
        return;
      }
      if (this.#ended) {
        controller.close();
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}
