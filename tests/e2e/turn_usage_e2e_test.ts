/**
 * A turn's own tokens and cost, over several turns and after an interrupt,
 * with the real `claude` 2.1.332: each turn reports only what it used, never
 * what earlier turns (the interrupted one included) used.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, type SessionEvent } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

const TURN = { timeoutMs: 30_000 } as const;

e2eTest(
  "per-turn tokens and cost: several turns and an interrupted one in between",
  async (_t, cli) => {
    await withSandbox(async ({ work, env }) => {
      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }),
      });
      const results: SessionEvent[] = [];
      const sub = session.subscribe({ capacity: 4096 });
      const reading = (async () => {
        for await (const event of sub) if (event.type === "result") results.push(event);
      })();
      const first = await session.send("one", TURN);
      const second = await session.send("two", TURN);
      const controller = new AbortController();
      const stalled = session.send("[[stall]] three", { ...TURN, signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 300));
      controller.abort(new Error("stop"));
      await assert.rejects(stalled);
      const fourth = await session.send("four", TURN);
      for (const turn of [first, second, fourth]) {
        assert.ok(turn.result.tokens.input > 0 && turn.result.tokens.output > 0);
        assert.ok(Object.keys(turn.result.models).length > 0);
      }
      // The process's cumulative cost rises by exactly each turn's own cost between results.
      const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;
      assert.ok(
        near(second.result.totalCostUsd - first.result.totalCostUsd, second.result.costUsd),
      );
      const interrupted = results.find((r) => r.type === "result" && r.is_error === true);
      assert.ok(interrupted, "the interrupted turn had its result");
      const interruptedCost = interrupted.type === "result" ? interrupted.total_cost_usd ?? 0 : 0;
      assert.ok(near(fourth.result.totalCostUsd - interruptedCost, fourth.result.costUsd));
      assert.ok(
        fourth.result.costUsd < fourth.result.totalCostUsd - second.result.totalCostUsd,
        "the turn after the interrupt does not count the interrupted turn's usage",
      );
      assert.ok(fourth.result.tokens.input < first.result.tokens.input * 3, "its own tokens only");
      await session.close();
      await reading;
    });
  },
);
