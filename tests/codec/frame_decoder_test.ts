import assert from "node:assert/strict";
import {
  type DecodeDiagnostic,
  DEFAULT_MAX_LINE_BYTES,
  FrameDecoder,
  type FrameDecoderOptions,
} from "../../src/codec/frame_decoder.ts";

const encoder = new TextEncoder();

interface Harness {
  decoder: FrameDecoder;
  frames: Record<string, unknown>[];
  diagnostics: DecodeDiagnostic[];
}

function harness(options: Partial<FrameDecoderOptions> = {}): Harness {
  const frames: Record<string, unknown>[] = [];
  const diagnostics: DecodeDiagnostic[] = [];
  const decoder = new FrameDecoder({
    onFrame(frame) {
      frames.push(frame);
    },
    onDiagnostic(diagnostic) {
      diagnostics.push(diagnostic);
    },
    ...options,
  });
  return { decoder, frames, diagnostics };
}

/** Decodes `chunks` (then calls end()) and returns what came out. */
function decode(
  chunks: Uint8Array[],
  options: Partial<FrameDecoderOptions> = {},
): Harness {
  const h = harness(options);
  for (const chunk of chunks) h.decoder.push(chunk);
  h.decoder.end();
  return h;
}

function kinds(h: Harness): string[] {
  return h.diagnostics.map((d) => d.kind);
}

// A 2-byte "é", a 4-byte emoji, a 3-byte "€", a CRLF line and a blank line.
const SAMPLE_FRAMES = [
  { type: "a", text: "caf\u00e9" },
  { type: "b", text: "\u{1F600} smile", n: [1, 2] },
  { type: "c", text: "\u20ac", nested: { ok: true } },
  { type: "d" },
];
const SAMPLE = encoder.encode(
  `${JSON.stringify(SAMPLE_FRAMES[0])}\n${JSON.stringify(SAMPLE_FRAMES[1])}\n\n` +
    `${JSON.stringify(SAMPLE_FRAMES[2])}\r\n   \n${JSON.stringify(SAMPLE_FRAMES[3])}\n`,
);

Deno.test({
  name: "FrameDecoder.push() yields the same frames wherever the bytes are cut",
  permissions: "none",
  fn() {
    for (let i = 0; i <= SAMPLE.length; i++) {
      const h = decode([SAMPLE.subarray(0, i), SAMPLE.subarray(i)]);
      assert.deepEqual(h.frames, SAMPLE_FRAMES, `split at ${i}`);
      assert.deepEqual(h.diagnostics, [], `split at ${i}`);
    }
    // Every pair of cut points (three chunks), including empty chunks.
    for (let i = 0; i <= SAMPLE.length; i += 3) {
      for (let j = i; j <= SAMPLE.length; j++) {
        const h = decode([SAMPLE.subarray(0, i), SAMPLE.subarray(i, j), SAMPLE.subarray(j)]);
        assert.deepEqual(h.frames, SAMPLE_FRAMES, `split at ${i}, ${j}`);
      }
    }
  },
});

Deno.test({
  name: "FrameDecoder.push() joins a 4-byte character cut across three chunks",
  permissions: "none",
  fn() {
    const bytes = encoder.encode('{"t":"\u{1F600}\u00e9"}\n');
    const emoji = bytes.indexOf(0xf0);
    assert.notEqual(emoji, -1);
    const h = decode([
      bytes.subarray(0, emoji + 1),
      bytes.subarray(emoji + 1, emoji + 3),
      bytes.subarray(emoji + 3, emoji + 5), // last emoji byte + first byte of "é"
      bytes.subarray(emoji + 5),
    ]);
    assert.deepEqual(h.frames, [{ t: "\u{1F600}\u00e9" }]);
    assert.deepEqual(h.diagnostics, []);
  },
});

Deno.test({
  name: "FrameDecoder.push() skips blank lines silently and reports noise lines",
  permissions: "none",
  async fn(t) {
    const h = decode([
      encoder.encode('\n\r\n  \t \n{"a":1}\r\nWarning: something\r\n  {"b":2}\n[1]\n'),
    ]);
    assert.deepEqual(h.frames, [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(kinds(h), ["noise", "noise"]);
    const [noise, array] = h.diagnostics;
    assert.deepEqual(noise, {
      type: "diagnostic",
      kind: "noise",
      message: 'Skipped a line of 19 bytes: it does not start with "{"',
      bytes: 19, // the "\r" counts, the "\n" does not
      excerpt: "Warning: something",
    });
    assert.equal(array?.excerpt, "[1]");

    await t.step("with a long noise line, the excerpt holds its first 200 characters", () => {
      const long = "x".repeat(1000);
      const h = decode([encoder.encode(`${long}\n`)]);
      assert.equal(h.diagnostics[0]?.excerpt, "x".repeat(200));
      assert.equal(h.diagnostics[0]?.bytes, 1000);
    });
  },
});

Deno.test({
  name: "FrameDecoder.push() reports an invalid JSON line and goes on with the next lines",
  permissions: "none",
  fn() {
    const h = decode([encoder.encode('{"a":1}\n{"broken":\n{"b":2}\n{"c":3} trailing\n{"d":4}\n')]);
    assert.deepEqual(h.frames, [{ a: 1 }, { b: 2 }, { d: 4 }]);
    assert.deepEqual(kinds(h), ["invalid_json", "invalid_json"]);
    assert.equal(h.diagnostics[0]?.excerpt, '{"broken":');
    assert.equal(h.diagnostics[0]?.bytes, 10);
    assert.match(h.diagnostics[0]?.message ?? "", /^Skipped a line of 10 bytes: not valid JSON/);
  },
});

Deno.test({
  name: "FrameDecoder.push() drops an over-long line without ever buffering more than the limit",
  permissions: "none",
  async fn(t) {
    const limit = 1024 * 1024;
    const lineBytes = 5 * 1024 * 1024;
    const stream = new Uint8Array(lineBytes + 1 + 20);
    stream.fill(0x61, 0, lineBytes); // "aaaa…"
    stream.set(encoder.encode('{"x":'), 0);
    stream[lineBytes] = 10;
    stream.set(encoder.encode('{"after":1}\n{"n":2}\n'), lineBytes + 1);
    const h = harness({ maxLineBytes: limit });
    let highest = 0;
    for (let i = 0; i < stream.length; i += 64 * 1024) {
      h.decoder.push(stream.subarray(i, i + 64 * 1024));
      highest = Math.max(highest, h.decoder.pendingBytes);
    }
    h.decoder.end();
    assert.ok(highest <= limit, `held ${highest} bytes`);
    assert.ok(highest > 0);
    assert.deepEqual(h.frames, [{ after: 1 }, { n: 2 }]);
    assert.deepEqual(h.diagnostics, [{
      type: "diagnostic",
      kind: "line_too_long",
      message: `Skipped a line of ${lineBytes} bytes: over the ${limit}-byte limit`,
      bytes: lineBytes,
      excerpt: `{"x":${"a".repeat(195)}`,
    }]);
    assert.equal(h.decoder.pendingBytes, 0);

    await t.step("a line of exactly the limit is accepted", () => {
      const line = `{"s":"${"b".repeat(92)}"}`;
      assert.equal(line.length, 100);
      const h = decode([encoder.encode(`${line}\n`)], { maxLineBytes: 100 });
      assert.deepEqual(kinds(h), []);
      assert.equal(h.frames.length, 1);
      const over = decode([encoder.encode(`${line} \n{"ok":1}\n`)], { maxLineBytes: 100 });
      assert.deepEqual(kinds(over), ["line_too_long"]);
      assert.equal(over.diagnostics[0]?.bytes, 101);
      assert.deepEqual(over.frames, [{ ok: 1 }]);
    });
    await t.step("an over-long line inside one chunk is reported the same way", () => {
      const h = decode([encoder.encode(`{"ok":0}\n${"z".repeat(500)}\n{"ok":1}\n`)], {
        maxLineBytes: 64,
      });
      assert.deepEqual(h.frames, [{ ok: 0 }, { ok: 1 }]);
      assert.deepEqual(h.diagnostics.map((d) => [d.kind, d.bytes, d.excerpt]), [
        ["line_too_long", 500, "z".repeat(64)],
      ]);
    });
    await t.step("an over-long line cut by the end of input is reported by end()", () => {
      const h = harness({ maxLineBytes: 10 });
      h.decoder.push(encoder.encode('{"a":1}\n{"long": "'));
      h.decoder.push(encoder.encode("more than ten bytes"));
      assert.deepEqual(kinds(h), []);
      h.decoder.end();
      assert.deepEqual(h.frames, [{ a: 1 }]);
      assert.deepEqual(h.diagnostics.map((d) => [d.kind, d.bytes]), [["line_too_long", 29]]);
    });
    await t.step("the excerpt does not end with half a character", () => {
      const h = decode([encoder.encode(`${"\u00e9".repeat(150)}\n`)], { maxLineBytes: 250 });
      assert.equal(h.diagnostics[0]?.excerpt, "\u00e9".repeat(100));
      const odd = decode([encoder.encode(`a${"\u00e9".repeat(150)}\n`)], { maxLineBytes: 250 });
      assert.equal(odd.diagnostics[0]?.excerpt, `a${"\u00e9".repeat(99)}`);
    });
  },
});

Deno.test({
  name: "FrameDecoder.end() decodes a final line without newline",
  permissions: "none",
  async fn(t) {
    await t.step("complete JSON is delivered", () => {
      const h = decode([encoder.encode('{"a":1}\n{"b":'), encoder.encode("2}")]);
      assert.deepEqual(h.frames, [{ a: 1 }, { b: 2 }]);
      assert.deepEqual(h.diagnostics, []);
    });
    await t.step("a truncated tail is reported as invalid_json", () => {
      const h = decode([encoder.encode('{"a":1}\n{"b":')]);
      assert.deepEqual(h.frames, [{ a: 1 }]);
      assert.deepEqual(h.diagnostics.map((d) => [d.kind, d.bytes, d.excerpt]), [
        ["invalid_json", 5, '{"b":'],
      ]);
    });
    await t.step("nothing is reported at end() when the input ended with a newline", () => {
      const h = decode([encoder.encode('{"a":1}\n')]);
      assert.deepEqual(h.diagnostics, []);
    });
  },
});

Deno.test({
  name: "FrameDecoder.push() decodes 20000 lines in one chunk, in order",
  permissions: "none",
  fn() {
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(JSON.stringify({ type: "stream_event", i }));
    const h = decode([encoder.encode(`${lines.join("\n")}\n`)]);
    assert.equal(h.frames.length, 20_000);
    assert.ok(h.frames.every((frame, i) => frame.i === i));
    assert.deepEqual(h.diagnostics, []);
  },
});

Deno.test({
  name: "FrameDecoder.push() repairs invalid UTF-8, delivers the frame and reports it",
  permissions: "none",
  async fn(t) {
    const head = encoder.encode('{"t":"a');
    const tail = encoder.encode('b"}\n{"ok":1}\n');
    const bytes = new Uint8Array([...head, 0xff, ...tail]);
    const h = decode([bytes]);
    assert.deepEqual(h.frames, [{ t: "a\uFFFDb" }, { ok: 1 }]);
    assert.deepEqual(h.diagnostics.map((d) => [d.kind, d.bytes, d.excerpt]), [
      ["invalid_utf8", 11, '{"t":"a\uFFFDb"}'],
    ]);
    assert.equal(
      h.diagnostics[0]?.message,
      "A line of 11 bytes is not valid UTF-8; invalid bytes were replaced with U+FFFD",
    );

    await t.step("a real U+FFFD character in valid UTF-8 is not reported", () => {
      const h = decode([encoder.encode('{"t":"\uFFFD"}\n')]);
      assert.deepEqual(h.frames, [{ t: "\uFFFD" }]);
      assert.deepEqual(h.diagnostics, []);
    });
    await t.step("a truncated sequence at the end of a line is reported", () => {
      const h = decode([new Uint8Array([...encoder.encode('{"t":1}'), 0xe2, 0x82, 10])]);
      assert.deepEqual(kinds(h), ["invalid_utf8", "invalid_json"]);
      assert.deepEqual(h.frames, []);
    });
  },
});

Deno.test({
  name: "FrameDecoder.end() is idempotent and push() after it throws",
  permissions: "none",
  fn() {
    const h = harness();
    h.decoder.push(encoder.encode('{"a":1}'));
    h.decoder.end();
    h.decoder.end();
    assert.deepEqual(h.frames, [{ a: 1 }]);
    assert.throws(() => h.decoder.push(encoder.encode("{}\n")), {
      name: "TypeError",
      message: "Cannot push to a FrameDecoder: end() was already called",
    });
    assert.deepEqual(h.frames, [{ a: 1 }]);
  },
});

Deno.test({
  name: "FrameDecoder.push() finishes the chunk then rethrows the first error of a callback",
  permissions: "none",
  async fn(t) {
    const frames: unknown[] = [];
    const first = new Error("first");
    const decoder = new FrameDecoder({
      onFrame(frame) {
        frames.push(frame);
        if (frame.fail === 1) throw first;
        if (frame.fail === 2) throw new Error("second");
      },
    });
    assert.throws(
      () => decoder.push(encoder.encode('{"fail":1}\n{"n":2}\n{"fail":2}\n{"n":3}\n{"par')),
      (e) => e === first,
    );
    assert.deepEqual(frames, [{ fail: 1 }, { n: 2 }, { fail: 2 }, { n: 3 }]);
    assert.equal(decoder.pendingBytes, 5);
    decoder.push(encoder.encode('t":4}\n'));
    decoder.end();
    assert.deepEqual(frames.at(-1), { part: 4 });
    assert.equal(frames.length, 5);

    await t.step("an error from onDiagnostic is rethrown the same way", () => {
      const frames: unknown[] = [];
      const decoder = new FrameDecoder({
        onFrame(frame) {
          frames.push(frame);
        },
        onDiagnostic() {
          throw new RangeError("diagnostic failed");
        },
      });
      assert.throws(() => decoder.push(encoder.encode('noise\n{"a":1}\n')), RangeError);
      assert.deepEqual(frames, [{ a: 1 }]);
      decoder.push(encoder.encode('{"b":2}\n'));
      assert.throws(() => decoder.push(encoder.encode("noise again\n")), RangeError);
      decoder.push(encoder.encode("noise without newline"));
      assert.throws(() => decoder.end(), RangeError);
      decoder.end();
      assert.deepEqual(frames, [{ a: 1 }, { b: 2 }]);
    });
  },
});

Deno.test({
  name: "new FrameDecoder() rejects bad options",
  permissions: "none",
  fn() {
    assert.equal(DEFAULT_MAX_LINE_BYTES, 67_108_864);
    for (const maxLineBytes of [0, -1, 1.5, Number.NaN, Infinity]) {
      assert.throws(
        () => new FrameDecoder({ maxLineBytes, onFrame() {} }),
        {
          name: "RangeError",
          message:
            `Cannot create a FrameDecoder: maxLineBytes must be a positive integer, got ${maxLineBytes}`,
        },
      );
    }
    assert.throws(
      () => new FrameDecoder({} as FrameDecoderOptions),
      { name: "TypeError", message: "Cannot create a FrameDecoder: onFrame must be a function" },
    );
    const decoder = new FrameDecoder({ onFrame() {} });
    assert.throws(() => decoder.push(new ArrayBuffer(2) as unknown as Uint8Array), {
      name: "TypeError",
      message: "Cannot push to a FrameDecoder: expected a Uint8Array, got [object ArrayBuffer]",
    });
    assert.throws(() => decoder.push('{"a":1}' as unknown as Uint8Array), {
      name: "TypeError",
      message: "Cannot push to a FrameDecoder: expected a Uint8Array, got a string; " +
        "encode the text (with its newlines) as UTF-8 first",
    });
  },
});

Deno.test({
  name: "FrameDecoder.push() keeps no reference to a chunk the caller reuses",
  permissions: "none",
  fn() {
    const h = harness();
    const buffer = encoder.encode('{"a":"12');
    h.decoder.push(buffer);
    buffer.fill(0x78); // the caller reads its next chunk into the same buffer
    h.decoder.push(encoder.encode('34"}\n'));
    assert.deepEqual(h.frames, [{ a: "1234" }]);
  },
});

Deno.test("FrameDecoder with retainChunks keeps held bytes by reference and still decodes", {
  permissions: "none",
}, () => {
  const frames: unknown[] = [];
  const decoder = new FrameDecoder({ onFrame: (f) => frames.push(f), retainChunks: true });
  const bytes = new TextEncoder().encode('{"a":"' + "x".repeat(100) + '"}\n');
  for (let i = 0; i < bytes.length; i += 7) decoder.push(bytes.subarray(i, i + 7));
  assert.deepEqual(frames, [{ a: "x".repeat(100) }]);
  const reused = new Uint8Array(4);
  const copied: unknown[] = [];
  const copying = new FrameDecoder({ onFrame: (f) => copied.push(f) });
  reused.set(new TextEncoder().encode('{"b"'));
  copying.push(reused);
  reused.set(new TextEncoder().encode("XXXX")); // the caller reuses its buffer
  copying.push(new TextEncoder().encode(":1}\n"));
  assert.deepEqual(copied, [{ b: 1 }], "without retainChunks, pushed bytes are copied");
});

Deno.test("FrameDecoder with releaseChunks frees the buffers of a line it is done with", {
  permissions: "none",
}, async (t) => {
  const encoder = new TextEncoder();
  /** Pushes each piece as a chunk of its own, as a subprocess's stdout yields them. */
  function feed(release: boolean, pieces: string[], max = 64) {
    const frames: unknown[] = [];
    const kinds: string[] = [];
    const decoder = new FrameDecoder({
      maxLineBytes: max,
      releaseChunks: release,
      onFrame: (frame) => frames.push(frame),
      onDiagnostic: (diagnostic) => kinds.push(diagnostic.kind),
    });
    const chunks = pieces.map((piece) => encoder.encode(piece));
    for (const chunk of chunks) decoder.push(chunk);
    decoder.end();
    return { frames, kinds, detached: chunks.map((chunk) => chunk.buffer.detached) };
  }
  const longLine = ['{"a":"', "x".repeat(40), "x".repeat(40), '"}\n{"b":1}\n'];

  await t.step("an over-long line's held chunks are detached when it is dropped", () => {
    const out = feed(true, longLine);
    assert.deepEqual(out.kinds, ["line_too_long"]);
    assert.deepEqual(out.frames, [{ b: 1 }], "the next line is still decoded");
    // The chunks held when the limit was crossed are freed; the chunk being pushed is not.
    assert.deepEqual(out.detached, [true, true, false, false]);
  });
  await t.step("without the option nothing is detached", () => {
    const out = feed(false, longLine);
    assert.deepEqual(out.frames, [{ b: 1 }]);
    assert.deepEqual(out.detached, [false, false, false, false]);
  });
  await t.step("the pieces of a long valid line are freed once joined", () => {
    const out = feed(true, ['{"a":', '"yy', 'y"}\n{"c":2}', "\n"], 1024);
    assert.deepEqual(out.frames, [{ a: "yyy" }, { c: 2 }]);
    // The third chunk ends the first line and holds the start of the second: it is freed
    // when the fourth chunk ends that line.
    assert.deepEqual(out.detached, [true, true, true, false]);
  });
  await t.step("slices of the chunk being pushed are never detached", () => {
    const frames: unknown[] = [];
    const decoder = new FrameDecoder({
      maxLineBytes: 16,
      releaseChunks: true,
      onFrame: (frame) => frames.push(frame),
    });
    const chunk = encoder.encode(`{"a":"${"z".repeat(30)}"}\n{"d":4}\n`);
    // The session feeds a large chunk in slices: all share one buffer.
    for (let offset = 0; offset < chunk.length; offset += 8) {
      decoder.push(chunk.subarray(offset, offset + 8));
    }
    assert.equal(chunk.buffer.detached, false);
    assert.deepEqual(frames, [{ d: 4 }]);
  });
});
