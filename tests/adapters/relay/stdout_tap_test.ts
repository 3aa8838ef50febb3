/** The relay's stdout tap: mirror lines out, results heard, every other byte through unchanged. */

import assert from "node:assert/strict";
import { DECIDE_BYTES, StdoutTap } from "../../../adapters/relay/_stdout_tap.ts";
import type { TranscriptMirrorFrame } from "../../../src/protocol/status_frames.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function tapped(maxMirrorBytes?: number) {
  const mirrors: TranscriptMirrorFrame[] = [];
  const dropped: string[] = [];
  let results = 0;
  const tap = new StdoutTap({
    mirror: (frame) => mirrors.push(frame),
    result: () => results++,
    dropped: (reason) => dropped.push(reason),
  }, maxMirrorBytes);
  const forwarded: Uint8Array[] = [];
  return {
    mirrors,
    dropped,
    get results() {
      return results;
    },
    forwarded,
    feed(...chunks: string[]) {
      for (const chunk of chunks) {
        const out = tap.take(encoder.encode(chunk));
        if (out !== undefined) forwarded.push(out);
      }
    },
    end() {
      const out = tap.end();
      if (out !== undefined) forwarded.push(out);
    },
    text: () => forwarded.map((bytes) => decoder.decode(bytes)).join(""),
  };
}

const mirrorLine = (n: number) =>
  JSON.stringify({
    type: "transcript_mirror",
    filePath: "/c/p/s.jsonl",
    entries: [{ type: "x", n }],
  }) +
  "\n";
const assistant = '{"type":"assistant","message":{"content":[]}}\n';
const result = '{"type":"result","subtype":"success","result":"ok"}\n';

/** Splits a text at every given offset. */
function cut(text: string, at: number[]): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (const offset of at) {
    pieces.push(text.slice(from, offset));
    from = offset;
  }
  pieces.push(text.slice(from));
  return pieces;
}

Deno.test({
  name: "StdoutTap.take() takes mirror lines out and forwards the rest unchanged",
  permissions: "none",
  fn: async (t) => {
    const stream = assistant + mirrorLine(1) + mirrorLine(2) + result + mirrorLine(3);
    await t.step("in one chunk", () => {
      const tap = tapped();
      tap.feed(stream);
      assert.equal(tap.text(), assistant + result);
      assert.deepEqual(tap.mirrors.map((frame) => frame.entries[0]), [
        { type: "x", n: 1 },
        { type: "x", n: 2 },
        { type: "x", n: 3 },
      ]);
      assert.equal(tap.results, 1);
    });
    await t.step("cut at every offset", () => {
      for (let at = 1; at < stream.length; at++) {
        const tap = tapped();
        tap.feed(...cut(stream, [at]));
        assert.equal(tap.text(), assistant + result, `cut at ${at}`);
        assert.equal(tap.mirrors.length, 3, `cut at ${at}`);
        assert.equal(tap.results, 1);
      }
    });
    await t.step("a byte at a time", () => {
      const tap = tapped();
      tap.feed(...stream.split(""));
      assert.equal(tap.text(), assistant + result);
      assert.equal(tap.mirrors.length, 3);
      assert.equal(tap.results, 1);
    });
  },
});

Deno.test({
  name: "StdoutTap.take() returns the chunk itself when it holds no mirror line",
  permissions: "none",
  fn() {
    const tap = new StdoutTap({ mirror() {}, result() {}, dropped() {} });
    const chunk = encoder.encode(assistant + result);
    const same = tap.take(chunk)!;
    assert.ok(same.buffer === chunk.buffer && same.byteLength === chunk.byteLength, "no copy");
    const two = encoder.encode(assistant + mirrorLine(1) + result);
    const out = tap.take(two)!;
    assert.equal(decoder.decode(out), assistant + result);
  },
});

Deno.test({
  name: "StdoutTap.take() streams a long line that is no mirror line once its start decides",
  permissions: "none",
  fn() {
    const tap = tapped();
    const head = '{"type":"assistant","text":"';
    tap.feed(head + "a".repeat(DECIDE_BYTES));
    assert.ok(tap.text().startsWith(head), "forwarded before its newline");
    tap.feed("b".repeat(10));
    assert.ok(tap.text().endsWith("b".repeat(10)), "later bytes go through as they come");
    tap.feed('"}\n' + mirrorLine(1));
    assert.equal(tap.text(), head + "a".repeat(DECIDE_BYTES) + "b".repeat(10) + '"}\n');
    assert.equal(tap.mirrors.length, 1);
  },
});

Deno.test({
  name: "StdoutTap.take() drops a mirror line beyond its bound, one not JSON, one of another shape",
  permissions: "none",
  fn() {
    const tap = tapped(200);
    tap.feed(
      JSON.stringify({ type: "transcript_mirror", filePath: "/f", entries: ["y".repeat(300)] }) +
        "\n",
    );
    tap.feed('{"type":"transcript_mirror", broken\n');
    tap.feed('{"type":"transcript_mirror","filePath":7,"entries":[]}\n');
    tap.feed('{"type":"transcript_mirror","filePath":"/f","entries":{}}\n');
    tap.feed(assistant);
    assert.equal(tap.text(), assistant);
    assert.equal(tap.mirrors.length, 0);
    assert.equal(tap.dropped.length, 4);
    assert.match(tap.dropped[0]!, /longer than 200 bytes/);
    assert.match(tap.dropped[1]!, /not JSON/);
    assert.match(tap.dropped[2]!, /without filePath and entries/);
    assert.match(tap.dropped[3]!, /without filePath and entries/);
  },
});

Deno.test({
  name: "StdoutTap.end() forwards a last line without its newline, never a mirror line",
  permissions: "none",
  fn() {
    const tap = tapped();
    tap.feed('{"type":"assistant"');
    tap.end();
    assert.equal(tap.text(), '{"type":"assistant"');
    const other = tapped();
    other.feed('{"type":"transcript_mirror","filePath":"/f","entries":[]}');
    other.end();
    assert.equal(other.text(), "");
    assert.equal(other.mirrors.length, 1, "taken as a mirror line");
  },
});

Deno.test({
  name: "StdoutTap.take() hears a result whose type comes late, wherever the chunks cut it",
  permissions: "none",
  fn() {
    // The real CLI writes its result's type among the last keys.
    const late = `{"duration_api_ms":140,"result":"${"r".repeat(DECIDE_BYTES)}","type":"result"}\n`;
    const notResult = '{"type":"assistant","input":{"type":"resulting"}}\n';
    const stream = notResult + late + notResult;
    const offsets = [1, 20, DECIDE_BYTES - 1, DECIDE_BYTES + 60, stream.length - 70];
    for (let a = 0; a < offsets.length; a++) {
      for (let cutAt = stream.length - 80; cutAt < stream.length - 50; cutAt++) {
        const tap = tapped();
        tap.feed(
          ...cut(stream, [offsets[a]!, Math.max(offsets[a]! + 1, cutAt)].sort((x, y) => x - y)),
        );
        assert.equal(tap.results, 1, `cut at ${offsets[a]} and ${cutAt}`);
        assert.equal(tap.text(), stream);
      }
    }
    const none = tapped();
    none.feed(notResult, '{"type":"user","text":"\\"type\\":\\"result\\""}\n');
    assert.equal(none.results, 0, "an escaped one is text, not a result");
  },
});
