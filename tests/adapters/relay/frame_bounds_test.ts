/** The bounds on what one client connection sends (adapters/relay/_frame_bounds.ts). */

import assert from "node:assert/strict";
import {
  closeWhenQuiet,
  CONFIRM_MS,
  EarlyFrames,
  frameBytes,
  frameTooLarge,
  inputOverflow,
  LINGER_MS,
  QUIET_MS,
} from "../../../adapters/relay/_frame_bounds.ts";

Deno.test("frameBytes() measures a frame in bytes, cheaply past the bound", {
  permissions: "none",
}, () => {
  assert.equal(frameBytes("abc", 10), 3);
  assert.equal(frameBytes("é€😀", 100), 2 + 3 + 4, "UTF-8 bytes, not UTF-16 units");
  assert.equal(frameBytes("x".repeat(50), 10), 50, "over the bound: its length suffices");
  assert.equal(frameBytes(new ArrayBuffer(7), 10), 7);
  assert.equal(frameBytes(new Uint8Array(new ArrayBuffer(16), 4, 5), 10), 5);
  assert.equal(frameBytes(new Blob(["12345678"]), 10), 8);
  assert.equal(frameBytes(undefined, 10), 0);
});

Deno.test("EarlyFrames holds frames until ready, within maxPendingInputBytes and a count", {
  permissions: "none",
}, async (t) => {
  await t.step("holds, then hands over in order and forgets", () => {
    const early = new EarlyFrames(10);
    assert.equal(early.hold("a", 4), undefined);
    assert.equal(early.hold("b", 6), undefined, "exactly at the bound");
    const refusal = early.hold("c", 1);
    assert.equal(refusal?.kind, "too_large");
    assert.match(refusal!.message, /10 bytes wait for claude \(maxPendingInputBytes 10\)/);
    assert.deepEqual(early.take(), ["a", "b"]);
    assert.deepEqual(early.take(), []);
    assert.equal(early.hold("d", 10), undefined, "room again after take()");
  });

  await t.step("at most 1024 frames, whatever their size", () => {
    const early = new EarlyFrames(1_000_000);
    for (let i = 0; i < 1024; i++) assert.equal(early.hold("{}", 2), undefined);
    const refusal = early.hold("{}", 2);
    assert.equal(refusal?.kind, "protocol");
    assert.match(refusal!.message, /Too many messages before ready/);
  });
});

Deno.test("the refusals name the option to change", { permissions: "none" }, () => {
  assert.deepEqual(
    [frameTooLarge(64).kind, frameTooLarge(64).message],
    ["too_large", "Cannot take a frame of more than 64 bytes (the relay's maxFrameBytes)"],
  );
  assert.match(
    inputOverflow(3, 8).message,
    /^Cannot take more input: 3 bytes .*maxPendingInputBytes 8/,
  );
});

Deno.test(
  "closeWhenQuiet() closes once the peer is quiet, and at the latest LINGER_MS after the refusal",
  {
    permissions: "none",
  },
  async (t) => {
    const closing = (lastHeard: () => number) => {
      const started = Date.now();
      const { promise, resolve } = Promise.withResolvers<number>();
      closeWhenQuiet(lastHeard, () => resolve(Date.now() - started));
      return promise;
    };

    await t.step("the bounds: 250 ms of quiet, 1 s at most", () => {
      assert.equal(LINGER_MS, 1000);
      assert.equal(QUIET_MS, 250);
    });

    await t.step("a quiet peer: soon, on a later turn, not inside the call", async () => {
      let checks = 0;
      const after = closing(() => (checks++, Date.now() - 1000));
      assert.equal(checks, 0, "the refusal's own frame goes out first: not even checked yet");
      const ms = await after;
      assert.ok(ms >= CONFIRM_MS && ms < LINGER_MS, `closed after ${ms} ms`);
    });

    await t.step("a stalled event loop is no quiet peer", async () => {
      // Under load the loop stalls; the check that fell due in the stall runs before the frame
      // that arrived in it is read (here: a timer due just after the check's). Closing then
      // loses the refusal: Deno drops the socket at that frame.
      let heard = Date.now();
      let frameAt: number | undefined;
      const { promise: closedAt, resolve } = Promise.withResolvers<number>();
      closeWhenQuiet(() => heard, () => resolve(Date.now()));
      const frame = setTimeout(() => void (frameAt = heard = Date.now()), QUIET_MS + 1);
      const stallEnd = Date.now() + QUIET_MS + 50;
      while (Date.now() < stallEnd) {
        // The event loop is busy elsewhere.
      }
      const at = await closedAt;
      clearTimeout(frame);
      assert.ok(frameAt !== undefined, "closed before the frame that came in the stall was read");
      assert.ok(at >= frameAt + QUIET_MS, `closed ${at - frameAt} ms after the last frame`);
    });

    await t.step("a peer that goes on sending for 100 ms: soon after it stops", async () => {
      const started = Date.now();
      const after = await closing(() => Math.min(Date.now(), started + 100));
      assert.ok(after >= 100 && after < LINGER_MS + 200, `closed after ${after} ms`);
    });

    await t.step("a peer that never stops cannot move the deadline", async () => {
      const after = await closing(() => Date.now());
      assert.ok(after >= LINGER_MS - 5 && after < LINGER_MS + 300, `closed after ${after} ms`);
    });

    await t.step("cancelled: never", async () => {
      let closed = 0;
      const cancel = closeWhenQuiet(() => Date.now(), () => closed++);
      cancel();
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.equal(closed, 0);
      const quiet = closeWhenQuiet(() => 0, () => closed++);
      quiet();
      await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(closed, 0, "cancelled before its first check");
    });
  },
);
