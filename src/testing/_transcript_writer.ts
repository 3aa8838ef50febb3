// This module is browser compatible.
/**
 * Writes transcript entries (the shared fixtures' format, which
 * `parseTranscript` reads) to a sink as they happen, redacted, in order.
 * Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { DuplexError } from "../errors.ts";
import { isRecord, messageOf } from "../_values.ts";
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

/**
 * Where an entry is: handed to the sink and accepted (`written`, or `ended`
 * when the recording was already closed and keeps nothing more), refused
 * (`failed`, with the recording's error), or on its way (`pending`: resolves
 * once the sink accepted it, rejects with the recording's error).
 */
export type Recorded =
  | { readonly state: "written" | "ended" }
  | { readonly state: "failed"; readonly error: DuplexError }
  | { readonly state: "pending"; readonly written: Promise<void> };

const WRITTEN: Recorded = Object.freeze({ state: "written" });
const ENDED: Recorded = Object.freeze({ state: "ended" });

/** A line waiting for the sink, and who waits for it (made only when someone must). */
interface Queued {
  readonly text: string;
  done: boolean;
  waiter?: PromiseWithResolvers<void>;
}

/** One recording: numbered, timed entries, written one line each, in call order. */
export class TranscriptWriter {
  #sink: LineSink;
  #redact: Redactor;
  #started = performance.now();
  #seq = 0;
  #queue: Queued[] = [];
  #busy = false;
  #idle: (() => void)[] = [];
  #error: DuplexError | undefined = undefined;
  #closed = false;
  #closing: Promise<void> | undefined = undefined;
  #onError: (error: DuplexError) => void;

  /**
   * Prepares a recording; nothing is written yet.
   *
   * @param sink Where the lines go.
   * @param redact What to hide in every string.
   * @param onError Called once, on the first failed write, with the
   * recording's error (later entries are not written).
   */
  constructor(sink: RecordSink, redact: Redactor, onError: (error: DuplexError) => void) {
    this.#sink = lineSink(sink);
    this.#redact = redact;
    this.#onError = onError;
  }

  /**
   * The recording's error once a write failed: a `DuplexError` of kind
   * `aborted`, `Cannot record the session: …`, whose `cause` is what the sink
   * (or a redaction rule) threw.
   */
  get error(): DuplexError | undefined {
    return this.#error;
  }

  /** True once a write failed. */
  get failed(): boolean {
    return this.#error !== undefined;
  }

  /**
   * Records a line seen on a stream: parsed when it is a JSON object, else as text.
   *
   * @param dir Where it was seen.
   * @param line The line, without its newline.
   * @param extra Fields added to the entry (for example `truncated`).
   * @returns Where the entry is (see {@linkcode Recorded}).
   */
  line(
    dir: Exclude<TranscriptDirection, "meta">,
    line: string,
    extra?: Record<string, unknown>,
  ): Recorded {
    let msg: unknown = undefined;
    if (dir !== "stderr" && line.trimStart().startsWith("{")) {
      try {
        msg = JSON.parse(line);
      } catch {
        msg = undefined;
      }
    }
    try {
      if (isRecord(msg)) return this.#write({ dir, msg: redactJson(msg, this.#redact), ...extra });
      return this.#write({ dir, raw: this.#redact(line), ...extra });
    } catch (error) {
      return this.#fail(error);
    }
  }

  /**
   * Records a `meta` event (`spawn`, `stdin_end`, `exit`).
   *
   * @param msg The event, with its `event` field.
   * @returns Where the entry is (see {@linkcode Recorded}).
   */
  meta(msg: Record<string, unknown>): Recorded {
    try {
      return this.#write({ dir: "meta", msg: redactJson(msg, this.#redact) });
    } catch (error) {
      return this.#fail(error);
    }
  }

  #write(body: Record<string, unknown>): Recorded {
    if (this.#error) return { state: "failed", error: this.#error };
    if (this.#closed) return ENDED;
    const tMs = Math.round((performance.now() - this.#started) * 1000) / 1000;
    const entry: Queued = {
      text: JSON.stringify({ seq: this.#seq, t_ms: tMs, ...body }) + "\n",
      done: false,
    };
    this.#seq += 1;
    this.#queue.push(entry);
    if (!this.#busy) this.#pump();
    if (entry.done) return this.#error ? { state: "failed", error: this.#error } : WRITTEN;
    entry.waiter = Promise.withResolvers<void>();
    entry.waiter.promise.catch(() => {}); // the caller may ignore it; the failure is reported once
    return { state: "pending", written: entry.waiter.promise };
  }

  /* Writes queued lines; synchronously while the sink answers synchronously. */
  #pump(): void {
    while (this.#queue.length > 0 && !this.#error) {
      const entry = this.#queue.shift()!;
      let written: unknown;
      try {
        written = this.#sink.write(entry.text);
      } catch (error) {
        this.#fail(error);
        this.#settle(entry);
        break;
      }
      if (written instanceof Promise) {
        this.#busy = true;
        written.then(
          () => {
            this.#busy = false;
            this.#settle(entry);
            this.#pump();
          },
          (error: unknown) => {
            this.#busy = false;
            this.#fail(error);
            this.#settle(entry);
            this.#pump();
          },
        );
        return;
      }
      this.#settle(entry);
    }
    if (this.#error) { for (const entry of this.#queue.splice(0)) this.#settle(entry); }
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /* The sink accepted the entry, or the recording failed (at it or before it). */
  #settle(entry: Queued): void {
    entry.done = true;
    if (this.#error) entry.waiter?.reject(this.#error);
    else entry.waiter?.resolve();
  }

  /* Resolves once every queued line was handed to the sink (or dropped after a failure). */
  #flushed(): Promise<void> {
    if (!this.#busy && this.#queue.length === 0) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#idle.push(resolve);
    return promise;
  }

  #fail(cause: unknown): Recorded {
    if (!this.#error) {
      const why = messageOf(cause);
      this.#error = new DuplexError("aborted", `Cannot record the session: ${why}`, { cause });
      this.#onError(this.#error);
    }
    return { state: "failed", error: this.#error };
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
      if (this.#error) return;
      try {
        await this.#sink.close();
      } catch (error) {
        this.#fail(error);
      }
    })();
    return this.#closing;
  }
}
