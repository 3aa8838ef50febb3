// This module is browser compatible.
/**
 * {@linkcode record}: wraps any transport and writes the session that runs
 * over it as a transcript, which {@linkcode replay} plays back in a test.
 *
 * @module
 */

import { checkMs } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { Transport, TransportFactory, TransportOpenContext } from "../transport/transport.ts";
import { RecordedTransport } from "./_recorded_transport.ts";
import { TranscriptWriter } from "./_transcript_writer.ts";
import { type Redaction, redactor } from "./redaction.ts";

/**
 * Where a recording goes: a byte stream (a file's `writable`), or a function
 * called with each line (its `\n` included), in order, awaited one at a time.
 */
export type RecordSink = WritableStream<Uint8Array> | ((line: string) => void | Promise<void>);

/** Options of {@linkcode record}. */
export interface RecordOptions {
  /**
   * Where the transcript goes. Each entry is written as it happens, so a
   * crash keeps everything before it; the stream is closed after the `exit`
   * entry. In Deno: `(await Deno.create(path)).writable`.
   */
  to: RecordSink;
  /**
   * What to hide in every string of every entry (see {@linkcode Redaction}):
   * API keys, home folders, customer names. Pass the same rules to
   * {@linkcode replay} so that it hides them in what the code under test
   * writes too.
   */
  redact?: readonly Redaction[];
  /** Hide Anthropic API keys (`sk-ant-…`) besides. @default {true} */
  redactDefaults?: boolean;
  /**
   * Longest line recorded whole, in bytes; a longer one is recorded cut, with
   * `truncated` giving the bytes dropped.
   * @default {1048576}
   */
  maxLineBytes?: number;
  /**
   * After the peer has ended, how long to wait for its output still queued
   * and for the sink to close: 1 to 2^31-1 milliseconds, or `Infinity`.
   * @default {2000}
   */
  drainTimeoutMs?: number;
}

const WHAT = "Cannot record";

/**
 * Records a session: every line the code under test writes (`stdin`),
 * every line the peer answers (`stdout`, `stderr`), the end of input and
 * the exit, in the format of the shared fixtures
 * (`{"seq","t_ms","dir","msg"|"raw"}` per line, read by
 * {@linkcode parseTranscript}).
 *
 * Nothing is changed on the way: the returned transport passes every write
 * and every output byte through. A line that is a JSON object is recorded
 * parsed (`msg`), any other as text (`raw`). The first `meta` entry names
 * the transport (`{event:"spawn",transport,description}`), the last is
 * `{event:"exit",code,signal}`. A factory records the one process it opens;
 * opening it again rejects (call `record()` again for another transcript).
 *
 * Nothing crosses unrecorded: a line written reaches the wrapped transport
 * only once the sink has taken its entry (a sink function has returned, or
 * its promise resolved; a stream's write resolved), and output reaches the
 * reader only once the lines it completes were taken. So a slow sink slows
 * the session down, and a sink that fails loses nothing the session saw.
 *
 * If the sink fails (throws, rejects, or a redaction rule throws), the
 * recording ends and so does the transport, with the recording's error: a
 * `DuplexError` of kind `aborted`, `Cannot record the session: …`, whose
 * `cause` is the sink's error. The line whose entry failed, and every later
 * one, is not written (its `write()` rejects with that error); `readable`
 * errors with it (output not yet read, recorded or not, is dropped);
 * `stderr` ends; the wrapped transport is closed, and `closed` resolves with
 * `reason` set to the error's message. A session over it fails: its pending
 * and later sends reject with that error, or with the session's own error
 * whose `cause` it is.
 *
 * @param transport An open transport, or a factory (for example `subprocess()`).
 * @param options Where to write, what to hide.
 * @returns The same kind of thing: a transport, or a factory.
 * @throws {TypeError} For a missing sink or a bad redaction rule.
 * @throws {RangeError} For a bad `maxLineBytes` or `drainTimeoutMs`.
 *
 * @example Record a scripted session and replay it
 * ```ts
 * import { DuplexSession } from "@duplex/claude";
 * import { parseTranscript, record, replay, ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const lines: string[] = [];
 * const cli = new ScriptedCli({ echo: true });
 * const session = await DuplexSession.start({
 *   transport: record(cli.transport, { to: (line) => void lines.push(line), redact: ["secret"] }),
 * });
 * assert.equal((await session.send("a secret plan")).result.text, "Echo: a secret plan");
 * await session.close();
 * assert.ok(!lines.join("").includes("secret plan"));
 *
 * const again = replay(parseTranscript(lines.join("")), { redact: ["secret"] });
 * const replayed = await DuplexSession.start({ transport: again.transport });
 * assert.equal((await replayed.send("a secret plan")).result.text, "Echo: a [redacted] plan");
 * await replayed.close();
 * again.verify();
 * ```
 */
export function record(transport: Transport, options: RecordOptions): Transport;
/**
 * Records the session of the process a factory opens (see the overload
 * taking a transport).
 *
 * @param factory A transport factory, for example `subprocess()`.
 * @param options Where to write, what to hide.
 * @returns A factory that opens the process once, recorded.
 * @throws {TypeError} For a missing sink or a bad redaction rule.
 * @throws {RangeError} For a bad `maxLineBytes` or `drainTimeoutMs`.
 */
export function record(factory: TransportFactory, options: RecordOptions): TransportFactory;
export function record(
  transport: Transport | TransportFactory,
  options: RecordOptions,
): Transport | TransportFactory {
  const settings = checkRecordOptions(options);
  const start = (inner: Transport): RecordedTransport => {
    let wrapped: RecordedTransport | undefined = undefined;
    const writer = new TranscriptWriter(
      options.to,
      settings.redact,
      (error) => wrapped?.abort(error),
    );
    wrapped = new RecordedTransport(inner, writer, settings);
    if (writer.error) wrapped.abort(writer.error);
    return wrapped;
  };
  if (typeof transport !== "function") {
    if (typeof transport !== "object" || transport === null || !transport.readable) {
      throw new TypeError(`${WHAT}: pass a transport or a transport factory`);
    }
    return start(transport);
  }
  let opened = false;
  return async (context: TransportOpenContext): Promise<Transport> => {
    if (opened) {
      throw new DuplexError(
        "invalid_argument",
        `${WHAT} a second process into one transcript: call record() again for each`,
      );
    }
    opened = true;
    return start(await transport(context));
  };
}

interface RecordSettings {
  readonly redact: (text: string) => string;
  readonly maxLineBytes: number;
  readonly drainTimeoutMs: number;
}

function checkRecordOptions(options: RecordOptions): RecordSettings {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${WHAT}: options with a sink (\`to\`) are required`);
  }
  const { to } = options;
  if (typeof to !== "function" && !(to instanceof WritableStream)) {
    throw new TypeError(`${WHAT}: \`to\` must be a WritableStream or a function`);
  }
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1) {
    throw new RangeError(`${WHAT}: maxLineBytes must be a positive integer, got ${maxLineBytes}`);
  }
  return {
    redact: redactor(options.redact, options.redactDefaults ?? true, WHAT),
    maxLineBytes,
    drainTimeoutMs: checkMs(options.drainTimeoutMs ?? 2000, `${WHAT}: drainTimeoutMs`),
  };
}
