// This module is browser compatible.
/**
 * {@linkcode NdjsonEncodeStream} and {@linkcode encodeLine}: values to NDJSON.
 *
 * @module
 */

import { describe, messageOf } from "../_values.ts";

/**
 * Serializes one value as a single line of JSON text, without the newline.
 * Like `JSON.stringify`, it drops object properties whose value is
 * `undefined`, a function or a symbol; the text never contains a raw newline.
 *
 * @example Encode a frame
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeLine } from "./ndjson_encode_stream.ts";
 *
 * assert.equal(encodeLine({ type: "keep_alive" }), '{"type":"keep_alive"}');
 * assert.throws(() => encodeLine(undefined), TypeError);
 * ```
 *
 * @param value The value to serialize.
 * @returns Its JSON text.
 * @throws {TypeError} If JSON cannot represent the value: `undefined`, a
 * function or a symbol at top level, a cycle, a `BigInt`, or a `toJSON` that throws.
 */
export function encodeLine(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    const why = messageOf(error);
    throw new TypeError(`Cannot encode value as JSON: ${why}`, { cause: error });
  }
  if (text === undefined) {
    throw new TypeError(
      `Cannot encode value as JSON: JSON has no representation for ${describe(value)}`,
    );
  }
  return text;
}

/**
 * Transforms values into NDJSON bytes: `JSON.stringify(value) + "\n"` per
 * chunk, as UTF-8. A value JSON cannot represent errors the stream with the
 * `TypeError` of {@linkcode encodeLine}.
 *
 * @example Encode two frames
 * ```ts
 * import assert from "node:assert/strict";
 * import { NdjsonEncodeStream } from "./ndjson_encode_stream.ts";
 *
 * const text = await new Response(
 *   ReadableStream.from([{ type: "a" }, { type: "b", n: 1 }]).pipeThrough(new NdjsonEncodeStream()),
 * ).text();
 * assert.equal(text, '{"type":"a"}\n{"type":"b","n":1}\n');
 * ```
 */
export class NdjsonEncodeStream extends TransformStream<unknown, Uint8Array> {
  /** Creates the stream. */
  constructor() {
    const encoder = new TextEncoder();
    super({
      transform(value, controller): void {
        controller.enqueue(encoder.encode(`${encodeLine(value)}\n`));
      },
    });
  }
}
