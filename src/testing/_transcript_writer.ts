// This module is browser compatible.
/**
 * Writes transcript entries (the shared fixtures' format, which
 * `parseTranscript` reads) to a sink as they happen, redacted, in order.
 * Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { isRecord } from "../protocol/guards.ts";
import { redactJson, type Redactor } from "./redaction.ts";
import type { RecordSink } from "./record_transport.ts";
import type { TranscriptDirection } from "./transcript.ts";

/** A sink, normalised: serial writes of whole lines, then a close. */
interface LineSink {
  write(line: string): Promise<void> | void;
  close(): Promise<void> | void;
}

function lineSink(sink: RecordSink): LineSink {
  if (typeof sink === "function") return { write: (line) => sink(line), close: () => {} };
  const writer = sink.getWriter();
  const encoder = new TextEncoder();
  return {
    write: (line) => writer.write(encoder.encode(line)),
    close: () => writer.close(),
  };
}

/** One recording: numbered, timed entries, written one line each, in call order. */
export class TranscriptWriter {
  #sink: LineSink;
  #redact: Redactor;
  #started = performance.now();
  #seq = 0;
  #queue: string[] = [];
  #busy = false;
  #idle: (() => void)[] = [];
  #error: unknown = undefined;
  #failed = false;
  #closed = false;
  #closing: Promise<void> | undefined = undefined;
  #onError: (error: unknown) => void;

  /**
   * Prepares a recording; nothing is written yet.
   *
   * @param sink Where the lines go.
   * @param redact What to hide in every string.
   * @param onError Called once, on the first failed write (later entries are not written).
   */
  constructor(sink: RecordSink, redact: Redactor, onError: (error: unknown) => void) {
    this.#sink = lineSink(sink);
    this.#redact = redact;
    this.#onError = onError;
  }

  /** The first error the sink (or a redaction rule) raised, if any. */
  get error(): unknown {
    return this.#error;
  }

  /** True once a write failed. */
  get failed(): boolean {
    return this.#failed;
  }

  /**
   * Records a line seen on a stream: parsed when it is a JSON object, else as text.
   *
   * @param dir Where it was seen.
   * @param line The line, without its newline.
   * @param extra Fields added to the entry (for example `truncated`).
   */
  line(dir: Exclude<TranscriptDirection, "meta">, line: string, extra?: Record<string, unknown>) {
    let msg: unknown = undefined;
    if (dir !== "stderr" && line.trimStart().startsWith("{")) {
      try {
        msg = JSON.parse(line);
      } catch {
        msg = undefined;
      }
    }
    try {
      if (isRecord(msg)) this.#write({ dir, msg: redactJson(msg, this.#redact), ...extra });
      else this.#write({ dir, raw: this.#redact(line), ...extra });
    } catch (error) {
      this.#fail(error);
    }
  }

  /**
   * Records a `meta` event (`spawn`, `stdin_end`, `exit`).
   *
   * @param msg The event, with its `event` field.
   */
  meta(msg: Record<string, unknown>): void {
    try {
      this.#write({ dir: "meta", msg: redactJson(msg, this.#redact) });
    } catch (error) {
      this.#fail(error);
    }
  }

  #write(body: Record<string, unknown>): void {
    if (this.#failed || this.#closed) return;
    const tMs = Math.round((performance.now() - this.#started) * 1000) / 1000;
    const text = JSON.stringify({ seq: this.#seq, t_ms: tMs, ...body }) + "\n";
    this.#seq += 1;
    this.#queue.push(text);
    if (!this.#busy) this.#pump();
  }

  /* Writes queued lines; synchronously while the sink answers synchronously. */
  #pump(): void {
    while (this.#queue.length > 0 && !this.#failed) {
      let written: unknown;
      try {
        written = this.#sink.write(this.#queue.shift()!);
      } catch (error) {
        this.#fail(error);
        break;
      }
      if (written instanceof Promise) {
        this.#busy = true;
        written.then(
          () => {
            this.#busy = false;
            this.#pump();
          },
          (error: unknown) => {
            this.#busy = false;
            this.#fail(error);
            this.#pump();
          },
        );
        return;
      }
    }
    if (this.#failed) this.#queue.length = 0;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /* Resolves once every queued line was handed to the sink (or dropped after a failure). */
  #flushed(): Promise<void> {
    if (!this.#busy && this.#queue.length === 0) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#idle.push(resolve);
    return promise;
  }

  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#error = error;
    this.#onError(error);
  }

  /**
   * Writes what is queued and closes the sink (once).
   *
   * @returns Once the sink has closed (or failed).
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#flushed();
      if (this.#failed) return;
      try {
        await this.#sink.close();
      } catch (error) {
        this.#fail(error);
      }
    })();
    return this.#closing;
  }
}
