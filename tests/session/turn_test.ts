import assert from "node:assert/strict";
import type { ResultFrame } from "../../src/protocol/mod.ts";
import { readTurnResult } from "../../src/session/turn.ts";

Deno.test("readTurnResult() reads a success result", { permissions: "none" }, () => {
  const r = readTurnResult({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "Echo: hi",
    total_cost_usd: 0.000616,
    num_turns: 1,
    duration_ms: 47,
    terminal_reason: "completed",
    stop_reason: "end_turn",
    session_id: "s1",
    permission_denials: [],
  }, 0.000308);
  assert.equal(r.text, "Echo: hi");
  assert.equal(r.isError, false);
  assert.ok(Math.abs(r.costUsd - 0.000308) < 1e-12);
  assert.equal(r.totalCostUsd, 0.000616);
  assert.equal(r.sessionId, "s1");
  assert.equal(r.stopReason, "end_turn");
});

Deno.test(
  "readTurnResult() prefers the CLI's per-turn usage figure",
  { permissions: "none" },
  () => {
    const frame = {
      type: "result",
      subtype: "success",
      is_error: false,
      total_cost_usd: 10,
      model_usage_since_last_result: { a: { costUSD: 0.25 }, b: { costUSD: 0.5 } },
    } as ResultFrame;
    assert.equal(readTurnResult(frame, 1).costUsd, 0.75);
  },
);

Deno.test("readTurnResult() classifies by is_error, API errors included", {
  permissions: "none",
}, () => {
  const api = readTurnResult({
    type: "result",
    subtype: "success",
    is_error: true,
    result: "API Error: 500",
    terminal_reason: "api_error",
    api_error_status: 500,
  });
  assert.equal(api.isError, true);
  assert.equal(api.apiErrorStatus, 500);
  const interrupted = readTurnResult({
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    errors: ["[ede_diagnostic] x", 5 as unknown as string],
    terminal_reason: "aborted_streaming",
  });
  assert.equal(interrupted.text, "");
  assert.deepEqual(interrupted.errors, ["[ede_diagnostic] x"]);
});

Deno.test("readTurnResult() survives a result with missing fields", { permissions: "none" }, () => {
  const r = readTurnResult({ type: "result" } as ResultFrame);
  assert.equal(r.subtype, "unknown");
  assert.equal(r.isError, true);
  assert.equal(r.costUsd, 0);
  assert.equal(r.text, "");
  assert.deepEqual(r.permissionDenials, []);
});
