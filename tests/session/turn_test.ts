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

Deno.test(
  "readTurnResult() derives a turn's own tokens per model",
  { permissions: "none" },
  async (t) => {
    const cumulative = (input: number, output: number, cost: number) => ({
      "m-a": {
        inputTokens: input,
        outputTokens: output,
        cacheReadInputTokens: 1,
        cacheCreationInputTokens: 0,
        costUSD: cost,
      },
    });
    await t.step("from model_usage_since_last_result", () => {
      const frame = {
        type: "result",
        subtype: "success",
        modelUsage: cumulative(84, 14, 0.6),
        model_usage_since_last_result: {
          "m-a": {
            inputTokens: 42,
            outputTokens: 7,
            cacheReadInputTokens: 1,
            cacheCreationInputTokens: 2,
            costUSD: 0.3,
          },
          "m-b": { inputTokens: 10, outputTokens: 3, costUSD: 0.1 },
        },
      } as unknown as ResultFrame;
      const r = readTurnResult(frame, { totalCostUsd: 0.3, modelUsage: cumulative(42, 7, 0.3) });
      assert.deepEqual(r.tokens, { input: 52, output: 10, cacheRead: 1, cacheCreation: 2 });
      assert.deepEqual(r.models["m-b"], {
        input: 10,
        output: 3,
        cacheRead: 0,
        cacheCreation: 0,
        costUsd: 0.1,
      });
    });
    await t.step("from the cumulative figures, minus the previous result's", () => {
      const frame = {
        type: "result",
        subtype: "success",
        modelUsage: cumulative(84, 14, 0.6),
      } as unknown as ResultFrame;
      const r = readTurnResult(frame, { totalCostUsd: 0.3, modelUsage: cumulative(42, 7, 0.3) });
      assert.deepEqual(r.tokens, { input: 42, output: 7, cacheRead: 0, cacheCreation: 0 });
      assert.ok(Math.abs((r.models["m-a"]?.costUsd ?? 0) - 0.3) < 1e-12);
    });
    await t.step("from the main loop's usage, as a last resort", () => {
      const frame = {
        type: "result",
        subtype: "success",
        usage: {
          input_tokens: 5,
          output_tokens: 6,
          cache_read_input_tokens: 7,
          cache_creation_input_tokens: 8,
        },
      } as ResultFrame;
      assert.deepEqual(readTurnResult(frame).tokens, {
        input: 5,
        output: 6,
        cacheRead: 7,
        cacheCreation: 8,
      });
      assert.deepEqual(readTurnResult(frame).models, {});
    });
  },
);
