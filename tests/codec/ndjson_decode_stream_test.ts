import assert from "node:assert/strict";
import type { DecodeDiagnostic } from "../../src/codec/frame_decoder.ts";
import { NdjsonDecodeStream } from "../../src/codec/ndjson_decode_stream.ts";

const encoder = new TextEncoder();

function run(
  chunks: Uint8Array[],
  stream: NdjsonDecodeStream,
): Promise<Record<string, unknown>[]> {
  return Array.fromAsync(ReadableStream.from(chunks).pipeThrough(stream));
}

Deno.test({
  name: "NdjsonDecodeStream decodes bytes cut anywhere and the final line at flush",
  permissions: "none",
  async fn() {
    const bytes = encoder.encode('{"type":"a","t":"\u{1F600}"}\r\n\n{"type":"b"}\n{"type":"c"}');
    for (let i = 0; i <= bytes.length; i++) {
      const frames = await run([bytes.subarray(0, i), bytes.subarray(i)], new NdjsonDecodeStream());
      assert.deepEqual(frames, [{ type: "a", t: "\u{1F600}" }, { type: "b" }, { type: "c" }]);
    }
  },
});

Deno.test({
  name: "NdjsonDecodeStream errors with a TypeError on a chunk that is not bytes",
  permissions: "none",
  async fn() {
    const chunks = [encoder.encode('{"type":"a"}\n'), '{"type":"b"}' as unknown as Uint8Array];
    await assert.rejects(run(chunks, new NdjsonDecodeStream()), {
      name: "TypeError",
      message: /^Cannot push to a FrameDecoder: expected a Uint8Array, got a string/,
    });
  },
});

Deno.test({
  name: "NdjsonDecodeStream reports skipped lines to onDiagnostic",
  permissions: "none",
  async fn() {
    const diagnostics: DecodeDiagnostic[] = [];
    const stream = new NdjsonDecodeStream({
      maxLineBytes: 16,
      onDiagnostic(diagnostic) {
        diagnostics.push(diagnostic);
      },
    });
    const input = encoder.encode('noise\n{"bad"\n{"long":"xxxxxxxxxxxxxx"}\n{"ok":1}\n{"cut":');
    const frames = await run([input], stream);
    assert.deepEqual(frames, [{ ok: 1 }]);
    assert.deepEqual(diagnostics.map((d) => d.kind), [
      "noise",
      "invalid_json",
      "line_too_long",
      "invalid_json",
    ]);
  },
});

Deno.test({
  name: "NdjsonDecodeStream errors when onDiagnostic throws",
  permissions: "none",
  async fn() {
    const failure = new Error("stop");
    const stream = new NdjsonDecodeStream({
      onDiagnostic() {
        throw failure;
      },
    });
    await assert.rejects(run([encoder.encode('{"a":1}\nnoise\n')], stream), (e) => e === failure);
  },
});

Deno.test({
  name: "new NdjsonDecodeStream() rejects a bad maxLineBytes",
  permissions: "none",
  fn() {
    assert.throws(() => new NdjsonDecodeStream({ maxLineBytes: 0 }), RangeError);
  },
});
