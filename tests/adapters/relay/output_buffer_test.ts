/** The relay's bounded replay buffer. */

import assert from "node:assert/strict";
import { OutputBuffer } from "../../../adapters/relay/_output_buffer.ts";

function text(seq: number, size: number) {
  return { seq, frame: "x".repeat(size) };
}

Deno.test("OutputBuffer", async (t) => {
  await t.step("keeps entries in order and replays those after a seq", () => {
    const buffer = new OutputBuffer(1000);
    for (let seq = 1; seq <= 5; seq++) buffer.push(text(seq, 10));
    assert.deepEqual(buffer.entriesAfter(2).map((e) => e.seq), [3, 4, 5]);
    assert.equal(buffer.bytes, 50);
    assert.ok(buffer.canReplayAfter(0));
  });

  await t.step("an ack trims; a resume before the ack is a gap", () => {
    const buffer = new OutputBuffer(1000);
    for (let seq = 1; seq <= 5; seq++) buffer.push(text(seq, 10));
    buffer.ack(3);
    assert.equal(buffer.length, 2);
    assert.equal(buffer.bytes, 20);
    assert.ok(buffer.canReplayAfter(3));
    assert.ok(!buffer.canReplayAfter(2));
  });

  await t.step("overflow drops the oldest and remembers them; the newest is always kept", () => {
    const buffer = new OutputBuffer(25);
    buffer.push({ seq: 1, frame: new Uint8Array(10) });
    buffer.push(text(2, 10));
    assert.ok(buffer.canReplayAfter(0));
    buffer.push(text(3, 10));
    assert.deepEqual(buffer.entriesAfter(0).map((e) => e.seq), [2, 3]);
    assert.ok(!buffer.canReplayAfter(0), "entry 1 was dropped");
    assert.ok(buffer.canReplayAfter(1));
    buffer.push(text(4, 100));
    assert.deepEqual(buffer.entriesAfter(0).map((e) => e.seq), [4]);
    assert.ok(!buffer.canReplayAfter(2));
    assert.ok(buffer.canReplayAfter(3));
  });

  await t.step("compacts its storage without losing entries", () => {
    const buffer = new OutputBuffer(10_000);
    for (let seq = 1; seq <= 5000; seq++) {
      buffer.push(text(seq, 1));
      if (seq % 2 === 0) buffer.ack(seq - 1);
    }
    assert.deepEqual(buffer.entriesAfter(0).map((e) => e.seq), [5000]);
    assert.equal(buffer.length, 1);
    assert.equal(buffer.bytes, 1);
    assert.ok(buffer.canReplayAfter(4999));
    assert.ok(!buffer.canReplayAfter(4998));
  });
});
