// This module is browser compatible.
/**
 * {@linkcode NdjsonDecodeStream}: NDJSON bytes to JSON objects.
 *
 * @module
 */

import { type DecodeDiagnostic, FrameDecoder } from "./frame_decoder.ts";

/** Options of the {@linkcode NdjsonDecodeStream} constructor. */
export interface NdjsonDecodeStreamOptions {
  /**
   * Largest line accepted, in bytes, not counting its `\n`. Longer lines are
   * skipped (reported as `line_too_long`) without ever being held whole.
   *
   * @default {67108864}
   */
  maxLineBytes?: number;
  /**
   * Called with each skipped or repaired line (noise, invalid JSON, too long,
   * invalid UTF-8). By default diagnostics are ignored. An exception thrown
   * here errors the stream.
   *
   * @default {undefined}
   */
  onDiagnostic?: (diagnostic: DecodeDiagnostic) => void;
}

/**
 * Transforms NDJSON into JSON objects, one per line: a thin stream wrapper over
 * {@linkcode FrameDecoder}, with the same rules. Chunks are bytes cut
 * anywhere (a chunk of another type errors the stream with a `TypeError`).
 * Blank lines are skipped; lines that
 * are not JSON objects are skipped and reported to `onDiagnostic`; a final line
 * without a newline is still decoded when the input ends.
 *
 * @example Decode bytes cut in the middle of a line
 * ```ts
 * import assert from "node:assert/strict";
 * import { NdjsonDecodeStream } from "./ndjson_decode_stream.ts";
 *
 * const bytes = new TextEncoder().encode('{"type":"a"}\n\nnoise\n{"type":"b"}');
 * const skipped: string[] = [];
 * const frames = await Array.fromAsync(
 *   ReadableStream.from([bytes.subarray(0, 7), bytes.subarray(7)])
 *     .pipeThrough(new NdjsonDecodeStream({ onDiagnostic: (d) => skipped.push(d.excerpt) })),
 * );
 * assert.deepEqual(frames, [{ type: "a" }, { type: "b" }]);
 * assert.deepEqual(skipped, ["noise"]);
 * ```
 */
export class NdjsonDecodeStream extends TransformStream<Uint8Array, Record<string, unknown>> {
  /**
   * Creates the stream.
   *
   * @param options The line size limit and where diagnostics go.
   * @throws {RangeError} If `maxLineBytes` is not a positive integer.
   */
  constructor(options: NdjsonDecodeStreamOptions = {}) {
    let output: TransformStreamDefaultController<Record<string, unknown>> | undefined;
    const decoder = new FrameDecoder({
      ...options,
      onFrame(frame: Record<string, unknown>): void {
        output?.enqueue(frame);
      },
    });
    super({
      start(controller): void {
        output = controller;
      },
      transform(chunk): void {
        decoder.push(chunk);
      },
      flush(): void {
        decoder.end();
      },
    });
  }
}
