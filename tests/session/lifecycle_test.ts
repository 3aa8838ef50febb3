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

const exit = (
  code: number | null,
  signal: string | null = null,
  requested = false,
): TransportExit => ({ code, signal, stderrTail: "", requested });
/* An end the close caused. */
const closedBy = (code: number | null, signal: string | null = null): TransportExit =>
  exit(code, signal, true);
const failure = new DuplexError("protocol", "the pump died");
const closing: Lifecycle = { phase: "closing", failure: undefined };
const failing: Lifecycle = { phase: "closing", failure };

Deno.test("endingOf() follows the lifecycle table", { permissions: "none" }, async (t) => {
  const table: [string, Exclude<Lifecycle, { phase: "ended" }>, TransportExit, string, string][] = [
    ["ready, exit 0", { phase: "ready" }, exit(0), "completed", "process_exited"],
    ["ready, exit 1", { phase: "ready" }, exit(1), "failed", "process_exited"],
    ["ready, SIGKILL", { phase: "ready" }, exit(null, "SIGKILL"), "failed", "process_exited"],
    ["closing, exit 143 after its SIGTERM", closing, closedBy(143), "completed", "closed"],
    ["closing, SIGKILL", closing, closedBy(null, "SIGKILL"), "completed", "closed"],
    ["closing, exit 1 at its EOF", closing, closedBy(1), "completed", "closed"],
    ["closing, exit 0", closing, closedBy(0), "completed", "closed"],
    // The peer ended by itself before the close reached it: its own end, as when ready.
    ["closing, its own exit 1", closing, exit(1), "failed", "process_exited"],
    ["closing, its own SIGSEGV", closing, exit(null, "SIGSEGV"), "failed", "process_exited"],
    ["closing, its own exit 0", closing, exit(0), "completed", "process_exited"],
    ["closing after a failure, exit 0", failing, closedBy(0), "failed", "protocol"],
    ["closing after a failure, its own exit 1", failing, exit(1), "failed", "protocol"],
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
