import assert from "node:assert/strict";
import { NdjsonDecodeStream } from "../../src/codec/ndjson_decode_stream.ts";
import { encodeLine, NdjsonEncodeStream } from "../../src/codec/ndjson_encode_stream.ts";

Deno.test({
  name: "NdjsonEncodeStream writes one UTF-8 JSON line per value",
  permissions: "none",
  async fn() {
    const values = [{ type: "a", t: "caf\u00e9 \u{1F600}" }, [1, 2], "line\nbreak", 3, null];
    const chunks = await Array.fromAsync(
      ReadableStream.from(values).pipeThrough(new NdjsonEncodeStream()),
    );
    assert.equal(chunks.length, values.length);
    assert.ok(chunks.every((chunk) => chunk instanceof Uint8Array));
    const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
    assert.equal(
      text,
      '{"type":"a","t":"caf\u00e9 \u{1F600}"}\n[1,2]\n"line\\nbreak"\n3\nnull\n',
    );
  },
});

Deno.test({
  name: "NdjsonEncodeStream output decodes back to the same frames",
  permissions: "none",
  async fn() {
    const frames = [
      { type: "user", message: { content: [{ type: "text", text: "a\u2028b\r\n\u0000" }] } },
      { type: "control_request", request_id: "r1", request: { subtype: "interrupt" } },
      { lone: "\uD800" },
    ];
    const decoded = await Array.fromAsync(
      ReadableStream.from(frames)
        .pipeThrough(new NdjsonEncodeStream())
        .pipeThrough(new NdjsonDecodeStream()),
    );
    assert.deepEqual(decoded, frames);
  },
});

Deno.test({
  name: "NdjsonEncodeStream errors on a value JSON cannot represent",
  permissions: "none",
  async fn() {
    await assert.rejects(
      Array.fromAsync(
        ReadableStream.from([{ ok: 1 }, undefined]).pipeThrough(
          new NdjsonEncodeStream(),
        ),
      ),
      { name: "TypeError", message: /^Cannot encode value as JSON/ },
    );
  },
});

Deno.test({
  name: "encodeLine() returns JSON text without newline",
  permissions: "none",
  fn() {
    assert.equal(encodeLine({ type: "keep_alive" }), '{"type":"keep_alive"}');
    assert.equal(encodeLine({ a: undefined, b: "x\ny" }), '{"b":"x\\ny"}');
    assert.equal(encodeLine({ toJSON: () => ({ z: 1 }) }), '{"z":1}');
  },
});

Deno.test({
  name: "encodeLine() throws a TypeError for values JSON cannot represent",
  permissions: "none",
  async fn(t) {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const cases: [string, unknown, RegExp][] = [
      ["undefined", undefined, /JSON has no representation for undefined$/],
      ["a function", () => 1, /JSON has no representation for a function$/],
      ["a symbol", Symbol("s"), /JSON has no representation for a symbol$/],
      ["a cycle", cycle, /^Cannot encode value as JSON: .*circular/i],
      ["a BigInt", { n: 1n }, /^Cannot encode value as JSON: .*BigInt/],
    ];
    for (const [name, value, message] of cases) {
      await t.step(name, () => {
        assert.throws(() => encodeLine(value), { name: "TypeError", message });
      });
    }
    await t.step("the JSON.stringify error is the cause", () => {
      assert.throws(
        () => encodeLine(cycle),
        (error) => error instanceof TypeError && error.cause instanceof TypeError,
      );
    });
  },
});
