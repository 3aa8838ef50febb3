/**
 * FrameDecoder throughput against the JSON.parse-only limit.
 *
 * Run: `deno bench tests/codec/frame_decoder_bench.ts`. Each iteration decodes
 * 200,000 realistic `stream_event` frames (2 % with a non-ASCII character),
 * so frames/s = 200,000 / (time per iteration).
 */

import { FrameDecoder } from "../../src/codec/frame_decoder.ts";
import { NdjsonDecodeStream } from "../../src/codec/ndjson_decode_stream.ts";

const FRAMES = 200_000;
const CHUNK = 64 * 1024;

function makeLines(count: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const text = i % 50 === 0 ? `r\u00e9ponse ${i % 97}` : `s a slow rep ${i % 97}`;
    lines.push(JSON.stringify({
      type: "stream_event",
      event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
      session_id: "cc496edb-cfee-4be8-8aea-7bd0c4485c4d",
      parent_tool_use_id: null,
      uuid: crypto.randomUUID(),
      api_message_id: "msg_fake_1",
    }));
  }
  return lines;
}

const lines = makeLines(FRAMES);
const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
const chunks: Uint8Array[] = [];
for (let i = 0; i < bytes.length; i += CHUNK) chunks.push(bytes.slice(i, i + CHUNK));
const averageBytes = Math.round(bytes.length / FRAMES);

Deno.bench({
  name: `limit: JSON.parse of pre-split lines (${FRAMES} frames, ~${averageBytes} B)`,
  group: "decode",
  baseline: true,
  n: 12,
  warmup: 3,
  fn() {
    let count = 0;
    for (const line of lines) if (JSON.parse(line) !== null) count++;
    if (count !== FRAMES) throw new Error(`Decoded ${count} frames`);
  },
});

Deno.bench({
  name: "raw: split on the \\n byte, decode each line, JSON.parse (no checks)",
  group: "decode",
  n: 12,
  warmup: 3,
  fn() {
    const decoder = new TextDecoder();
    let count = 0;
    let pending: Uint8Array | undefined;
    for (const chunk of chunks) {
      let start = 0;
      let newline = chunk.indexOf(10);
      while (newline !== -1) {
        let line = chunk.subarray(start, newline);
        if (pending !== undefined) {
          const joined = new Uint8Array(pending.length + line.length);
          joined.set(pending);
          joined.set(line, pending.length);
          line = joined;
          pending = undefined;
        }
        if (JSON.parse(decoder.decode(line)) !== null) count++;
        start = newline + 1;
        newline = chunk.indexOf(10, start);
      }
      if (start < chunk.length) pending = chunk.slice(start);
    }
    if (count !== FRAMES) throw new Error(`Decoded ${count} frames`);
  },
});

Deno.bench({
  name: "FrameDecoder.push() of 64 KiB byte chunks",
  group: "decode",
  n: 12,
  warmup: 3,
  fn() {
    let count = 0;
    const decoder = new FrameDecoder({
      onFrame() {
        count++;
      },
    });
    for (const chunk of chunks) decoder.push(chunk);
    decoder.end();
    if (count !== FRAMES) throw new Error(`Decoded ${count} frames`);
  },
});

Deno.bench({
  name: "NdjsonDecodeStream over 64 KiB byte chunks",
  group: "decode",
  n: 12,
  warmup: 3,
  async fn() {
    let count = 0;
    for await (const _ of ReadableStream.from(chunks).pipeThrough(new NdjsonDecodeStream())) {
      count++;
    }
    if (count !== FRAMES) throw new Error(`Decoded ${count} frames`);
  },
});
