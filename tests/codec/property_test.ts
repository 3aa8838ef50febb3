import assert from "node:assert/strict";
import fc from "fast-check";
import { type DecodeDiagnostic, FrameDecoder } from "../../src/codec/frame_decoder.ts";

const encoder = new TextEncoder();

interface Output {
  frames: Record<string, unknown>[];
  diagnostics: DecodeDiagnostic[];
}

/** Cuts `bytes` at the given offsets (any order, duplicates allowed). */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const sorted = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const offset of sorted) {
    chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** Decodes the chunks; `check` runs after every push. */
function decode(
  chunks: Uint8Array[],
  maxLineBytes?: number,
  check?: (decoder: FrameDecoder) => void,
): Output {
  const output: Output = { frames: [], diagnostics: [] };
  const decoder = new FrameDecoder({
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
    onFrame(frame) {
      output.frames.push(frame);
    },
    onDiagnostic(diagnostic) {
      output.diagnostics.push(diagnostic);
    },
  });
  for (const chunk of chunks) {
    decoder.push(chunk);
    check?.(decoder);
  }
  decoder.end();
  check?.(decoder);
  return output;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

Deno.test({
  name: "FrameDecoder yields the frames of a real transcript however its bytes are chunked",
  permissions: { read: ["."] },
  async fn() {
    const url = new URL("../fixtures/transcripts/06-partial-messages.ndjson", import.meta.url);
    const frames = (await Deno.readTextFile(url))
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.dir === "stdout" && entry.msg !== undefined)
      .map((entry) => entry.msg as Record<string, unknown>);
    assert.ok(frames.length > 20, `only ${frames.length} stdout frames`);
    const bytes = encoder.encode(frames.map((frame) => `${JSON.stringify(frame)}\n`).join(""));
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.boolean(),
        (offsets, crlf) => {
          const input = crlf
            ? encoder.encode(frames.map((frame) => `${JSON.stringify(frame)}\r\n`).join(""))
            : bytes;
          const output = decode(cut(input, offsets));
          assert.deepEqual(output.diagnostics, []);
          assert.deepEqual(output.frames, frames);
        },
      ),
      { numRuns: 150 },
    );
  },
});

const PIECES = [
  "\n",
  "\r\n",
  "\r",
  "{",
  "}",
  '"',
  '{"a":1}',
  '{"s":"\u00e9\u{1F600}\u20ac"}',
  "[1]",
  "   ",
  "\uFFFD",
].map((piece) => encoder.encode(piece));

const garbage: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      fc.constantFrom(...PIECES),
      fc.uint8Array({ maxLength: 90 }),
      fc.constantFrom(new Uint8Array([0xff]), new Uint8Array([0xf0, 0x9f]), new Uint8Array([0x80])),
    ),
    { maxLength: 40 },
  )
  .map(concat);

Deno.test({
  name: "FrameDecoder never throws nor holds more than maxLineBytes on arbitrary bytes",
  permissions: "none",
  fn() {
    const limit = 64;
    fc.assert(
      fc.property(garbage, fc.array(fc.nat(), { maxLength: 30 }), (bytes, offsets) => {
        const whole = decode([bytes], limit);
        const chunked = decode(cut(bytes, offsets), limit, (decoder) => {
          assert.ok(decoder.pendingBytes <= limit, `holds ${decoder.pendingBytes} bytes`);
        });
        // Chunking changes nothing: same frames and same diagnostics.
        assert.deepEqual(chunked, whole);
        for (const diagnostic of whole.diagnostics) {
          assert.ok(diagnostic.excerpt.length <= 200);
          if (diagnostic.kind !== "line_too_long") assert.ok(diagnostic.bytes <= limit);
          else assert.ok(diagnostic.bytes > limit);
        }
      }),
      { numRuns: 200 },
    );
  },
});

Deno.test({
  name: "FrameDecoder round-trips arbitrary JSON objects through arbitrary chunking",
  permissions: "none",
  fn() {
    const objects = fc.array(
      fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 5,
      }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(objects, fc.array(fc.nat(), { maxLength: 20 }), (values, offsets) => {
        // Normalize through JSON (for example -0 becomes 0).
        const expected = values.map((value) => JSON.parse(JSON.stringify(value)));
        const bytes = encoder.encode(values.map((value) => `${JSON.stringify(value)}\n`).join(""));
        const output = decode(cut(bytes, offsets));
        assert.deepEqual(output.diagnostics, []);
        assert.deepEqual(output.frames, expected);
      }),
      { numRuns: 150 },
    );
  },
});

Deno.test({
  name: "FrameDecoder decodes a chunk's lines together exactly as it decodes them one by one",
  permissions: "none",
  fn() {
    // Pushed whole, a chunk's complete lines are decoded in one call; pushed a byte at a
    // time, every line is decoded alone. Frames and diagnostics (sizes included) must agree.
    const bom = encoder.encode("\uFEFF");
    const lines = fc
      .array(fc.oneof(garbage, fc.constant(bom), fc.constantFrom(...PIECES)), { maxLength: 12 })
      .map(concat);
    fc.assert(
      fc.property(lines, (bytes) => {
        const bytewise = decode(cut(bytes, [...bytes.keys()]));
        assert.deepEqual(decode([bytes]), bytewise);
      }),
      { numRuns: 300 },
    );
  },
});

Deno.test({
  name: "FrameDecoder with releaseChunks decodes fresh chunks exactly as without it",
  permissions: "none",
  fn() {
    fc.assert(
      fc.property(garbage, fc.array(fc.nat(), { maxLength: 30 }), (bytes, offsets) => {
        const expected = decode(cut(bytes, offsets), 64);
        const output: Output = { frames: [], diagnostics: [] };
        const decoder = new FrameDecoder({
          maxLineBytes: 64,
          releaseChunks: true,
          onFrame: (frame) => output.frames.push(frame),
          onDiagnostic: (diagnostic) => output.diagnostics.push(diagnostic),
        });
        // Each chunk a buffer of its own, as the option requires.
        for (const chunk of cut(bytes, offsets)) decoder.push(chunk.slice());
        decoder.end();
        assert.deepEqual(output, expected);
      }),
      { numRuns: 200 },
    );
  },
});
