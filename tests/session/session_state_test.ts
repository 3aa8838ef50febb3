import assert from "node:assert/strict";
import { isUsable, type SessionState, type SessionStateEvent, transition } from "../../mod.ts";

const table: [SessionState, SessionStateEvent, SessionState][] = [
  ["ready", "close", "closing"],
  ["ready", "ended_clean", "closed"],
  ["ready", "ended_failed", "failed"],
  ["closing", "close", "closing"],
  ["closing", "ended_clean", "closed"],
  ["closing", "ended_failed", "closed"],
  ["closed", "close", "closed"],
  ["closed", "ended_failed", "closed"],
  ["failed", "close", "failed"],
  ["failed", "ended_clean", "failed"],
];

Deno.test("transition() follows the lifecycle table", { permissions: "none" }, async (t) => {
  for (const [from, event, to] of table) {
    await t.step(`${from} + ${event} -> ${to}`, () => {
      assert.equal(transition(from, event), to);
    });
  }
});

Deno.test("isUsable() is true only for ready", { permissions: "none" }, () => {
  const states: SessionState[] = ["ready", "closing", "closed", "failed"];
  assert.deepEqual(states.filter(isUsable), ["ready"]);
});
