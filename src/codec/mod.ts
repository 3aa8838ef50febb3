// This module is browser compatible.
/**
 * NDJSON as the session reads and writes it, as Web streams: one JSON object
 * per line. {@linkcode NdjsonDecodeStream} turns bytes cut anywhere into
 * objects with the session's own rules (blank lines skipped; noise, invalid
 * JSON, lines that are not objects and over-long lines skipped and reported;
 * invalid UTF-8 repaired and reported; a last line without a newline still
 * read), and {@linkcode NdjsonEncodeStream} turns values into lines. Use them
 * to read `claude -p --output-format stream-json` output or a transcript the
 * way a session would, or to write frames for a stand-in CLI.
 *
 * Everything here is Web-standard and runs in any runtime.
 *
 * @example Frames out and back in
 * ```ts
 * import { NdjsonDecodeStream, NdjsonEncodeStream } from "@duplex/claude/codec";
 * import assert from "node:assert/strict";
 *
 * const skipped: string[] = [];
 * const frames = await Array.fromAsync(
 *   ReadableStream.from([{ type: "system" }, { type: "result", result: "Hi" }])
 *     .pipeThrough(new NdjsonEncodeStream())
 *     .pipeThrough(new NdjsonDecodeStream({ onDiagnostic: (d) => skipped.push(d.kind) })),
 * );
 * assert.deepEqual(frames, [{ type: "system" }, { type: "result", result: "Hi" }]);
 * assert.deepEqual(skipped, []);
 * ```
 *
 * @module
 */

export { NdjsonDecodeStream, type NdjsonDecodeStreamOptions } from "./ndjson_decode_stream.ts";
export { NdjsonEncodeStream } from "./ndjson_encode_stream.ts";
export type { DecodeDiagnostic } from "./frame_decoder.ts";
