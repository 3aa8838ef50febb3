// This module is browser compatible.
/**
 * The in-memory {@linkcode Transport} that the scripted and replay CLIs share:
 * a queue of output bytes, a stderr stream, and a `closed` promise settled
 * once, after both streams have ended. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import type { Chunking } from "./scripted_cli_options.ts";
import { describeExit, DuplexError, type TransportExit } from "../errors.ts";
import type { Transport, TransportInfo } from "../transport/transport.ts";

/** What the owner of a {@linkcode MemoryTransport} decides. */
export interface MemoryTransportHooks {
  /** Called synchronously, in call order, for each line written (after the checks). */
  onWrite(line: string): void;
  /** Called once, on the first `endInput()` while the peer runs. */
  onEndInput(): void;
  /** Called on the first `close()` while the peer runs: how it ends. */
  onClose(): Omit<TransportExit, "stderrTail" | "requested">;
  /** Called once when the transport ends, however it ended. */
  onFinish?(exit: TransportExit): void;
  /** Called on every `close()` call, before anything else. */
  onCloseCalled?(): void;
}

/** Options of a {@linkcode MemoryTransport}. */
export interface MemoryTransportOptions {
  info: TransportInfo;
  chunking?: Chunking | undefined;
}

const STDERR_TAIL_LINES = 20;
const RANDOM_CHUNK_MAX = 23;

/**
 * An in-memory transport whose peer is code in the same process. Output is
 * encoded as UTF-8 and queued without bound (the peer never waits for the
 * reader unless it asks with {@linkcode MemoryTransport.waitForRoom}), so
 * everything it wrote is queued, and `readable` and `stderr` are closed,
 * before `closed` resolves.
 */
export class MemoryTransport implements Transport {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  /** Set by the owner: later writes reject with a `process_exited` error caused by it. */
  writeError: unknown = undefined;
  #hooks: MemoryTransportHooks;
  #out!: ReadableStreamDefaultController<Uint8Array>;
  #err!: ReadableStreamDefaultController<string>;
  #outOpen = true;
  #errOpen = true;
  #resolveClosed: (exit: TransportExit) => void;
  #exit: TransportExit | undefined = undefined;
  #inputEnded = false;
  #stderrTail: string[] = [];
  #chunking: Chunking;
  #seed = 0x2545f491;
  #room: (() => void)[] = [];
  #encoder = new TextEncoder();

  constructor(options: MemoryTransportOptions, hooks: MemoryTransportHooks) {
    this.info = options.info;
    this.#hooks = hooks;
    this.#chunking = options.chunking ?? "line";
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#out = controller;
      },
      pull: () => this.#wakeRoom(),
      cancel: () => {
        this.#outOpen = false;
        this.#wakeRoom();
      },
    }, { highWaterMark: 64 });
    this.stderr = new ReadableStream<string>({
      start: (controller) => {
        this.#err = controller;
      },
      cancel: () => {
        this.#errOpen = false;
      },
    });
    const { promise, resolve } = Promise.withResolvers<TransportExit>();
    this.closed = promise;
    this.#resolveClosed = resolve;
  }

  /** True once the peer has ended. */
  get ended(): boolean {
    return this.#exit !== undefined;
  }

  /** True once `endInput()` (or `close()`) was called. */
  get inputEnded(): boolean {
    return this.#inputEnded;
  }

  /** How the peer ended, once it has. */
  get exit(): TransportExit | undefined {
    return this.#exit;
  }

  /** The last stderr lines, joined. */
  get stderrTail(): string {
    return this.#stderrTail.join("\n");
  }

  write(line: string): Promise<void> {
    if (this.#exit !== undefined) {
      return Promise.reject(
        new DuplexError(
          "process_exited",
          `Cannot write to the CLI: it has ended (${describeExit(this.#exit)})`,
          { exit: this.#exit },
        ),
      );
    }
    if (this.#inputEnded) {
      return Promise.reject(
        new DuplexError("closed", "Cannot write to the CLI: its input was ended (endInput)"),
      );
    }
    if (this.writeError !== undefined) {
      return Promise.reject(
        new DuplexError(
          "process_exited",
          "Cannot write to the CLI: its input is broken; restart the session",
          { cause: this.writeError },
        ),
      );
    }
    if (typeof line !== "string") {
      return Promise.reject(new TypeError("Cannot write to the CLI: the line is not a string"));
    }
    this.#hooks.onWrite(line);
    return Promise.resolve();
  }

  endInput(): Promise<void> {
    if (!this.#inputEnded && this.#exit === undefined) {
      this.#inputEnded = true;
      this.#hooks.onEndInput();
    }
    this.#inputEnded = true;
    return Promise.resolve();
  }

  close(): Promise<TransportExit> {
    this.#hooks.onCloseCalled?.();
    if (this.#exit === undefined) {
      this.#inputEnded = true;
      this.finish({ ...this.#hooks.onClose(), requested: true });
    }
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Queues output on `readable`: text is encoded as UTF-8, bytes are copied
   * (so the caller may reuse its buffer); both are cut per the chunking mode.
   *
   * @param chunk What the peer writes to stdout, as is (one or more lines, or a piece of one).
   */
  push(chunk: string | Uint8Array): void {
    if (!this.#outOpen) return;
    this.#pushBytes(typeof chunk === "string" ? this.#encoder.encode(chunk) : chunk.slice());
  }

  /** Queues one stderr line, and keeps it for the exit's stderr tail. */
  pushStderr(line: string): void {
    if (this.#exit !== undefined) return;
    this.#stderrTail.push(line);
    if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
    if (this.#errOpen) this.#err.enqueue(line);
  }

  /** Resolves when `readable` has room (or is cancelled, or the transport ended). */
  waitForRoom(): Promise<void> {
    if (!this.#outOpen || this.#exit !== undefined || (this.#out.desiredSize ?? 1) > 0) {
      return Promise.resolve();
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#room.push(resolve);
    return promise;
  }

  /**
   * Ends the peer: closes `readable` after what is queued and `stderr`, then
   * resolves `closed`. Only the first call counts.
   */
  finish(exit: Omit<TransportExit, "stderrTail"> & { stderrTail?: string }): void {
    if (this.#exit !== undefined) return;
    const full: TransportExit = { ...exit, stderrTail: exit.stderrTail ?? this.stderrTail };
    this.#exit = full;
    if (this.#outOpen) {
      this.#outOpen = false;
      this.#out.close();
    }
    if (this.#errOpen) {
      this.#errOpen = false;
      this.#err.close();
    }
    this.#wakeRoom();
    this.#hooks.onFinish?.(full);
    this.#resolveClosed(full);
  }

  #wakeRoom(): void {
    const waiting = this.#room;
    this.#room = [];
    for (const resolve of waiting) resolve();
  }

  #pushBytes(bytes: Uint8Array): void {
    const chunking = this.#chunking;
    if (chunking === "line" || bytes.length === 0) {
      this.#out.enqueue(bytes);
      return;
    }
    let offset = 0;
    while (offset < bytes.length) {
      const size = chunking === "bytes" ? 1 + (this.#random() % RANDOM_CHUNK_MAX) : Math.max(
        1,
        Math.floor(chunking.maxChunk),
      );
      this.#out.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    }
  }

  /* xorshift32: deterministic, so a failing cut can be reproduced. */
  #random(): number {
    let x = this.#seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#seed = x >>> 0;
    return this.#seed;
  }
}
