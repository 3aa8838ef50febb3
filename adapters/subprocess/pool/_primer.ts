/**
 * Priming a spare: the work the CLI does lazily on a session's first user
 * line (the first attachments: environment, model, tool and agent listings,
 * skills, the `prompt.context` hook module; measured with
 * `tests/bench/first_turn_ideas.ts`) done before the spare is handed out,
 * without the conversation seeing it.
 *
 * The spare gets one user line with no content and `shouldQuery: false`:
 * the CLI computes the attachments, makes no API request, records no user
 * message (observed on 2.1.332: the transcript gains the attachments and
 * queue entries, no `user` entry, and the next turn's request carries the
 * same messages as a spare's that was not primed), and answers with a
 * `system/init` and an empty `result`. The primer's transport hides those two
 * frames from the session, so its turn count, usage, cost and events are a
 * plain spare's; every other frame (a `transcript_mirror` of the entries
 * above) passes, in order. Once primed, chunks pass through untouched.
 *
 * @module
 */

import { DuplexError } from "../../../src/errors.ts";
import { isRecord } from "../../../src/_values.ts";
import type {
  Transport,
  TransportExit,
  TransportFactory,
  TransportInfo,
} from "../../../src/transport/transport.ts";

/** The line a spare is primed with: no content, no API request. */
export const PRIMING_LINE: string = JSON.stringify({
  type: "user",
  message: { role: "user", content: [] },
  parent_tool_use_id: null,
  session_id: "",
  shouldQuery: false,
});

const NEWLINE = 0x0a;

/** A transport factory whose transport can be primed once. */
export interface Primer {
  /** Opens the transport (give it to `DuplexSession.start`). */
  readonly factory: TransportFactory;
  /**
   * Sends the priming line and resolves when the CLI's `result` for it has
   * been read (and hidden). Call it once, with the session idle.
   *
   * @param signal Aborts the wait (the caller then closes the session: a
   *   result read later would be taken for the next turn's).
   * @throws {DuplexError} `closed` when the transport is not open,
   *   `invalid_argument` when primed already, `protocol` when the CLI answers the line
   *   with an error result, `process_exited` when it ends first; the
   *   signal's reason when it aborts.
   */
  prime(signal: AbortSignal): Promise<void>;
}

/**
 * Wraps a transport factory so that the session it opens can be primed.
 *
 * @param open The factory to wrap.
 * @returns The wrapping factory and its `prime`.
 */
export function primer(open: TransportFactory): Primer {
  let opened: PrimedTransport | undefined;
  return {
    factory: async (context) => {
      if (opened) throw new DuplexError("invalid_argument", "Cannot open a primed transport twice");
      opened = new PrimedTransport(await open(context));
      return opened;
    },
    prime: (signal) => {
      if (!opened) {
        return Promise.reject(
          new DuplexError("closed", "Cannot prime a transport that is not open"),
        );
      }
      return opened.prime(signal);
    },
  };
}

type Priming = "not yet" | "priming" | "done";

/* The inner transport, its readable filtered while the priming line runs. */
class PrimedTransport implements Transport {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr?: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  readonly #inner: Transport;
  #state: Priming = "not yet";
  /** Bytes of a line not yet ended, read while priming. */
  #partial: Uint8Array[] = [];
  #seen: PromiseWithResolvers<void> | undefined;

  constructor(inner: Transport) {
    this.#inner = inner;
    this.info = inner.info;
    this.closed = inner.closed;
    if (inner.stderr) this.stderr = inner.stderr;
    this.readable = inner.readable.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          if (this.#state !== "priming") controller.enqueue(chunk);
          else this.#filter(chunk, controller);
        },
        flush: (controller) => {
          for (const part of this.#partial) controller.enqueue(part);
          this.#partial = [];
          this.#seen?.reject(new DuplexError("process_exited", "The CLI ended while primed"));
        },
      }),
    );
  }

  async prime(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#state !== "not yet") {
      throw new DuplexError("invalid_argument", "Cannot prime a transport twice");
    }
    this.#state = "priming";
    const seen = this.#seen = Promise.withResolvers<void>();
    seen.promise.catch(() => {}); // a write that failed first leaves it unawaited
    const abort = () => seen.reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    try {
      await this.#inner.write(PRIMING_LINE);
      await seen.promise;
    } finally {
      signal.removeEventListener("abort", abort);
    }
  }

  /* Splits a chunk read while priming into lines: the priming turn's init and result are dropped. */
  #filter(chunk: Uint8Array, controller: TransformStreamDefaultController<Uint8Array>): void {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
      const line = joined([...this.#partial, chunk.subarray(start, at + 1)]);
      this.#partial = [];
      start = at + 1;
      const verdict = this.#verdict(line);
      if (verdict !== "hide") controller.enqueue(line);
      if (this.#state === "done") {
        if (start < chunk.length) controller.enqueue(chunk.slice(start));
        return;
      }
    }
    if (start < chunk.length) this.#partial.push(chunk.slice(start));
  }

  #verdict(line: Uint8Array): "pass" | "hide" {
    let frame: unknown;
    try {
      frame = JSON.parse(new TextDecoder().decode(line));
    } catch {
      return "pass"; // noise: the session's decoder reports it
    }
    if (!isRecord(frame)) return "pass";
    if (frame.type === "system" && frame.subtype === "init") return "hide";
    if (frame.type !== "result") return "pass";
    this.#state = "done";
    if (frame.is_error === true) {
      this.#seen?.reject(
        new DuplexError(
          "protocol",
          `The CLI refused the priming line (${String(frame.subtype)}): ${
            JSON.stringify(frame.errors ?? frame.result ?? null)
          }`,
        ),
      );
    } else this.#seen?.resolve();
    return "hide";
  }

  write(line: string): Promise<void> {
    return this.#inner.write(line);
  }

  endInput(): Promise<void> {
    return this.#inner.endInput();
  }

  close(): Promise<TransportExit> {
    return this.#inner.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function joined(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!.slice();
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
