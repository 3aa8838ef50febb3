// This module is browser compatible.
/**
 * {@linkcode FrameDecoder}: the NDJSON framing engine. Bytes cut anywhere go
 * in, one callback per JSON object line comes out, with a bound on how much
 * of an unfinished line it holds.
 *
 * Why one file of ~450 lines: one engine whose fast path (a chunk's complete
 * lines decoded in one call) and fallbacks (line by line, over-long lines
 * skipped as they stream) share the same pending state; about 150 lines are
 * JSDoc.
 *
 * @module
 */

import { utf8Length } from "../_utf8.ts";
import { isRecord, messageOf } from "../_values.ts";

/** The default maximum size of one line: 64 MiB. */
export const DEFAULT_MAX_LINE_BYTES: number = 67_108_864;

/** A line the decoder skipped or repaired, reported instead of thrown. */
export interface DecodeDiagnostic {
  /** Always `"diagnostic"`, so it can travel among session events. */
  type: "diagnostic";
  /**
   * What was wrong with the line:
   * - `noise`: its first non-whitespace character is not `{` (skipped);
   * - `invalid_json`: it starts with `{` but is not valid JSON (skipped);
   * - `not_an_object`: its JSON value is not an object (skipped);
   * - `line_too_long`: it is longer than `maxLineBytes` (skipped, never buffered whole);
   * - `invalid_utf8`: it holds bytes that are not UTF-8; they were replaced with
   *   U+FFFD and the line was still parsed (and delivered if it is an object).
   */
  kind: "noise" | "invalid_json" | "not_an_object" | "line_too_long" | "invalid_utf8";
  /** A human-readable sentence, for example `Skipped a line of 70000000 bytes: over the 67108864-byte limit`. */
  message: string;
  /** Size of the line in bytes, without its `\n`. */
  bytes: number;
  /** The first characters of the line (at most 200; for `line_too_long`, of its first bytes). */
  excerpt: string;
}

/** Options of the {@linkcode FrameDecoder} constructor. */
export interface FrameDecoderOptions {
  /**
   * Largest line accepted, in bytes, not counting its `\n`.
   * The decoder never holds more than this much of an unfinished line.
   *
   * @default {67108864}
   */
  maxLineBytes?: number;
  /** Called with each decoded JSON object, in order. */
  onFrame: (frame: Record<string, unknown>) => void;
  /**
   * Called with each skipped or repaired line. By default diagnostics are ignored.
   *
   * @default {undefined}
   */
  onDiagnostic?: (diagnostic: DecodeDiagnostic) => void;
  /**
   * The caller never changes a chunk after pushing it (true of `ReadableStream`
   * chunks): the decoder may then keep the bytes of an unfinished line by
   * reference instead of copying them, which halves the memory a long line
   * costs. By default pushed chunks are copied, so a caller may reuse its buffer.
   *
   * @default {false}
   */
  retainChunks?: boolean;
  /**
   * The caller hands each pushed chunk over: nothing else holds a view of its
   * buffer, and each chunk has a buffer of its own (true of the chunks a
   * subprocess's stdout yields, not of a `tee()`d stream). Implies
   * `retainChunks`. When the decoder drops an over-long line it then releases
   * the buffers it held for it at once (detaches them with
   * `ArrayBuffer.prototype.transfer`), instead of leaving up to `maxLineBytes`
   * to the garbage collector while the rest of the line streams in; likewise
   * the pieces of a long line once they are joined. The buffer of the chunk
   * being pushed is never detached.
   *
   * @default {false}
   */
  releaseChunks?: boolean;
}

const EXCERPT_LENGTH = 200;
const LF = 10;
const CR = 13;
const OPEN_BRACE = 123;
const BOM = 0xfeff;

/**
 * Splits NDJSON into JSON objects. It splits on the `\n` byte first, then
 * decodes each line alone as UTF-8, so a character cut across chunks needs no
 * special care. A trailing `\r` is ignored, blank lines are skipped silently,
 * and every other line that is not a JSON object is reported to
 * `onDiagnostic` and skipped: a bad line never stops the stream.
 *
 * Memory is bounded: the decoder never holds more than `maxLineBytes` of an
 * unfinished line. A longer line is dropped as it arrives and reported once,
 * with its full size, when its end is seen. Unless `retainChunks` is set, the
 * decoder keeps no reference to a chunk after `push` returns.
 *
 * Callbacks that throw: the decoder finishes the current chunk (every
 * complete line in it is still delivered), stays consistent, then rethrows the
 * first exception out of `push` (or `end`). Later exceptions from the same
 * chunk are dropped.
 *
 * @example Decode a stream cut in the middle of lines
 * ```ts
 * import assert from "node:assert/strict";
 * import { FrameDecoder } from "./frame_decoder.ts";
 *
 * const frames: Record<string, unknown>[] = [];
 * const kinds: string[] = [];
 * const decoder = new FrameDecoder({
 *   onFrame: (frame) => frames.push(frame),
 *   onDiagnostic: (diagnostic) => kinds.push(diagnostic.kind),
 * });
 * const bytes = new TextEncoder().encode('{"type":"a"}\nnot json\r\n{"type":"b","t":"é"}');
 * decoder.push(bytes.subarray(0, 5));
 * decoder.push(bytes.subarray(5, 41)); // cuts the two bytes of "é"
 * decoder.push(bytes.subarray(41));
 * decoder.end(); // the last line has no newline
 * assert.deepEqual(frames, [{ type: "a" }, { type: "b", t: "é" }]);
 * assert.deepEqual(kinds, ["noise"]);
 * ```
 */
export class FrameDecoder {
  readonly #max: number;
  readonly #headLength: number;
  readonly #onFrame: (frame: Record<string, unknown>) => void;
  readonly #onDiagnostic: ((diagnostic: DecodeDiagnostic) => void) | undefined;
  readonly #retain: boolean;
  readonly #release: boolean;
  readonly #decoder = new TextDecoder();
  readonly #spanDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
  #parts: Uint8Array[] = [];
  #pendingLength = 0;
  #skipping = false;
  #skipped = 0;
  #head: Uint8Array = new Uint8Array(0);
  #ended = false;
  #failure: { error: unknown } | undefined = undefined;

  /**
   * Creates a decoder.
   *
   * @param options Where frames and diagnostics go, and the line size limit.
   * @throws {RangeError} If `maxLineBytes` is not a positive integer.
   * @throws {TypeError} If `onFrame` is not a function.
   */
  constructor(options: FrameDecoderOptions) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(max) || max <= 0) {
      throw new RangeError(
        `Cannot create a FrameDecoder: maxLineBytes must be a positive integer, got ${max}`,
      );
    }
    if (typeof options.onFrame !== "function") {
      throw new TypeError("Cannot create a FrameDecoder: onFrame must be a function");
    }
    this.#max = max;
    this.#headLength = Math.min(EXCERPT_LENGTH, max);
    this.#onFrame = options.onFrame;
    this.#onDiagnostic = options.onDiagnostic;
    this.#release = options.releaseChunks === true;
    this.#retain = this.#release || options.retainChunks === true;
  }

  /** Bytes currently held for an unfinished line; never more than `maxLineBytes`. */
  get pendingBytes(): number {
    return this.#skipping ? this.#head.length : this.#pendingLength;
  }

  /**
   * Feeds output of the peer.
   *
   * @param chunk Bytes cut anywhere.
   * @throws {TypeError} If called after {@linkcode FrameDecoder.end}, or with anything but a
   * `Uint8Array`.
   * @throws The first exception thrown by `onFrame` or `onDiagnostic` for this chunk.
   */
  push(chunk: Uint8Array): void {
    if (this.#ended) throw new TypeError("Cannot push to a FrameDecoder: end() was already called");
    if (!(chunk instanceof Uint8Array)) {
      const got = typeof chunk === "string"
        ? "a string; encode the text (with its newlines) as UTF-8 first"
        : Object.prototype.toString.call(chunk);
      throw new TypeError(`Cannot push to a FrameDecoder: expected a Uint8Array, got ${got}`);
    }
    this.#bytes(chunk);
    this.#rethrow();
  }

  /**
   * Ends the input: parses a final line that lacks its newline (reported as
   * `invalid_json` if it is incomplete). Idempotent.
   *
   * @throws The first exception thrown by `onFrame` or `onDiagnostic` for that line.
   */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#skipping) {
      this.#finishSkipping(this.#skipped);
    } else if (this.#pendingLength > 0) {
      const line = this.#join(new Uint8Array(0));
      this.#bytesLine(line, 0, line.length);
    }
    this.#rethrow();
  }

  #bytes(chunk: Uint8Array): void {
    const length = chunk.length;
    let start = 0;
    let newline = chunk.indexOf(LF);
    if (newline !== -1 && (this.#pendingLength !== 0 || this.#skipping)) {
      this.#completePending(chunk.subarray(0, newline));
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (newline !== -1) {
      const last = chunk.lastIndexOf(LF);
      // Every line of a span no longer than the limit is within it: decode them in one call.
      if (last - start > this.#max || !this.#span(chunk, start, last)) {
        this.#lines(chunk, start, newline, last);
      }
      start = last + 1;
    }
    if (start < length) this.#hold(chunk.subarray(start));
  }

  /** The complete lines of `chunk` from `start` to the `\n` at `last`, one decode each. */
  #lines(chunk: Uint8Array, start: number, newline: number, last: number): void {
    for (;;) {
      const size = newline - start;
      if (size > this.#max) {
        this.#tooLong(chunk.slice(start, start + this.#headLength), size);
      } else {
        this.#bytesLine(chunk, start, newline);
      }
      if (newline === last) return;
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
  }

  /**
   * Decodes the complete lines from `start` to the `\n` at `last` with one
   * decoder call (a call per line costs more than its parse), then parses
   * each. Returns false, having done nothing, if the span holds a U+FFFD
   * (invalid UTF-8, or a real U+FFFD): the caller then decodes line by line,
   * so a bad line is found and reported.
   */
  #span(chunk: Uint8Array, start: number, last: number): boolean {
    const text = this.#spanDecoder.decode(chunk.subarray(start, last));
    if (text.indexOf("\uFFFD") !== -1) return false;
    let from = 0;
    for (;;) {
      const newline = text.indexOf("\n", from);
      const end = newline === -1 ? text.length : newline;
      let stop = end;
      let extra = 0;
      if (stop > from && text.charCodeAt(stop - 1) === CR) {
        stop--;
        extra = 1;
      }
      // A line decoded alone loses a leading byte order mark: so does one decoded here.
      if (from < stop && text.charCodeAt(from) === BOM) {
        from++;
        extra += 3;
      }
      if (stop > from) this.#textLine(text.slice(from, stop), undefined, extra);
      if (newline === -1) return true;
      from = newline + 1;
    }
  }

  #hold(tail: Uint8Array): void {
    if (this.#skipping) {
      this.#skipped += tail.length;
      return;
    }
    const total = this.#pendingLength + tail.length;
    if (total > this.#max) {
      this.#head = this.#takeHead(tail);
      this.#skipping = true;
      this.#skipped = total;
      return;
    }
    this.#parts.push(this.#retain ? tail : tail.slice());
    this.#pendingLength = total;
  }

  #completePending(tail: Uint8Array): void {
    if (this.#skipping) {
      this.#finishSkipping(this.#skipped + tail.length);
      return;
    }
    const total = this.#pendingLength + tail.length;
    if (total > this.#max) {
      this.#tooLong(this.#takeHead(tail), total);
      return;
    }
    const line = this.#join(tail);
    this.#bytesLine(line, 0, line.length);
  }

  /** Concatenates the pending parts and `tail`, and empties the pending parts. */
  #join(tail: Uint8Array): Uint8Array {
    const line = new Uint8Array(this.#pendingLength + tail.length);
    let offset = 0;
    for (const part of this.#parts) {
      line.set(part, offset);
      offset += part.length;
    }
    line.set(tail, offset);
    this.#drop(tail);
    return line;
  }

  /**
   * The first bytes (at most the excerpt's length) of the pending parts and
   * `tail`, copied without joining the whole line; empties the pending parts.
   */
  #takeHead(tail: Uint8Array): Uint8Array {
    const head = new Uint8Array(Math.min(this.#headLength, this.#pendingLength + tail.length));
    let offset = 0;
    for (const part of [...this.#parts, tail]) {
      if (offset === head.length) break;
      const take = Math.min(part.length, head.length - offset);
      head.set(part.subarray(0, take), offset);
      offset += take;
    }
    this.#drop(tail);
    return head;
  }

  /**
   * Empties the pending parts; with `releaseChunks`, also frees their buffers
   * (but the buffer of `current`, the chunk being pushed).
   */
  #drop(current: Uint8Array): void {
    if (this.#release) {
      for (const part of this.#parts) {
        const buffer = part.buffer;
        if (buffer !== current.buffer && buffer instanceof ArrayBuffer && !buffer.detached) {
          buffer.transfer(0);
        }
      }
    }
    this.#parts = [];
    this.#pendingLength = 0;
  }

  #finishSkipping(total: number): void {
    const head = this.#head;
    this.#skipping = false;
    this.#skipped = 0;
    this.#head = new Uint8Array(0);
    this.#tooLong(head, total);
  }

  #tooLong(head: Uint8Array, total: number): void {
    // A throwaway streaming decoder drops a character cut at the end of the head.
    const excerpt = new TextDecoder().decode(head, { stream: true });
    this.#diagnose("line_too_long", `over the ${this.#max}-byte limit`, total, excerpt);
  }

  #bytesLine(chunk: Uint8Array, start: number, newline: number): void {
    let stop = newline;
    if (stop > start && chunk[stop - 1] === CR) stop--;
    if (stop === start) return;
    const bytes = chunk.subarray(start, stop);
    const text = this.#decoder.decode(bytes);
    // A fatal TextDecoder is several times slower, so it only confirms a U+FFFD seen here.
    if (text.indexOf("\uFFFD") !== -1 && !isUtf8(bytes)) {
      const message = "not valid UTF-8; invalid bytes were replaced with U+FFFD";
      this.#diagnose("invalid_utf8", message, newline - start, text);
    }
    this.#textLine(text, newline - start);
  }

  /**
   * Parses one line. `size` is its length in bytes, for diagnostics; when it
   * is undefined it is counted from `text` (as UTF-8) plus `extraBytes` (a
   * stripped `\r` or byte order mark), only if a diagnostic needs it.
   */
  #textLine(text: string, size: number | undefined, extraBytes = 0): void {
    const sizeOf = (): number => size ?? utf8Length(text) + extraBytes;
    if (text.charCodeAt(0) !== OPEN_BRACE) {
      let i = 0;
      while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
      if (i === text.length) return;
      if (text.charCodeAt(i) !== OPEN_BRACE) {
        this.#diagnose("noise", 'it does not start with "{"', sizeOf(), text);
        return;
      }
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const why = `not valid JSON (${messageOf(error)})`;
      this.#diagnose("invalid_json", why, sizeOf(), text);
      return;
    }
    if (!isRecord(value)) {
      const what = Array.isArray(value) ? "an array" : value === null ? "null" : typeof value;
      this.#diagnose("not_an_object", `its JSON value is ${what}, not an object`, sizeOf(), text);
      return;
    }
    try {
      this.#onFrame(value);
    } catch (error) {
      this.#failure ??= { error };
    }
  }

  #diagnose(kind: DecodeDiagnostic["kind"], why: string, size: number, text: string): void {
    if (this.#onDiagnostic === undefined) return;
    const message = kind === "invalid_utf8"
      ? `A line of ${size} bytes is ${why}`
      : `Skipped a line of ${size} bytes: ${why}`;
    const excerpt = text.slice(0, EXCERPT_LENGTH);
    try {
      this.#onDiagnostic({ type: "diagnostic", kind, message, bytes: size, excerpt });
    } catch (error) {
      this.#failure ??= { error };
    }
  }

  #rethrow(): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    this.#failure = undefined;
    throw failure.error;
  }
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictDecoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}
