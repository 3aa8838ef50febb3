import assert from "node:assert/strict";
import type { TransportExit } from "../../mod.ts";
import {
  endingOf,
  exitStatusOf,
  type Lifecycle,
  READY,
  stateOf,
} from "../../src/session/_lifecycle.ts";
import { DuplexError } from "../../src/errors.ts";

const exit = (code: number | null, signal: string | null = null): TransportExit => ({
  code,
  signal,
  stderrTail: "",
  requested: false,
});
const failure = new DuplexError("protocol", "the pump died");
const closing: Lifecycle = { phase: "closing", failure: undefined };
const failing: Lifecycle = { phase: "closing", failure };

Deno.test("endingOf() follows the lifecycle table", { permissions: "none" }, async (t) => {
  const table: [string, Exclude<Lifecycle, { phase: "ended" }>, TransportExit, string, string][] = [
    ["ready, exit 0", { phase: "ready" }, exit(0), "completed", "process_exited"],
    ["ready, exit 1", { phase: "ready" }, exit(1), "failed", "process_exited"],
    ["ready, SIGKILL", { phase: "ready" }, exit(null, "SIGKILL"), "failed", "process_exited"],
    ["closing, exit 143", closing, exit(143), "completed", "closed"],
    ["closing, exit 0", closing, exit(0), "completed", "closed"],
    ["closing after a failure, exit 0", failing, exit(0), "failed", "protocol"],
  ];
  for (const [name, lifecycle, peerExit, state, kind] of table) {
    await t.step(name, () => {
      const { status, error } = endingOf(lifecycle, peerExit);
      assert.equal(status.state, state);
      assert.equal(error.kind, kind);
      assert.equal(status.exit, peerExit);
      if (status.state === "failed") assert.equal(status.error, error);
      const ended: Lifecycle = { phase: "ended", status };
      assert.equal(stateOf(ended), state === "completed" ? "closed" : "failed");
      assert.equal(exitStatusOf(ended), status);
    });
  }
});

Deno.test("stateOf() and exitStatusOf() derive from one lifecycle", { permissions: "none" }, () => {
  assert.equal(stateOf(READY), "ready");
  assert.equal(stateOf(closing), "closing");
  assert.equal(stateOf(failing), "closing");
  assert.deepEqual(exitStatusOf(READY), { state: "running" });
  assert.deepEqual(exitStatusOf(failing), { state: "running" });
});
