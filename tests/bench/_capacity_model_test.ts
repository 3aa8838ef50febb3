/** The capacity model's formulas, on round constants worked out by hand. */

import assert from "node:assert/strict";
import { type Costs, fleet, hostCapacity, perConversation, perHost } from "./_capacity_model.ts";
import { checkSoak, parseShape, predictSoak } from "./_capacity_soak.ts";

const COSTS: Costs = {
  cliIdleNRss: 200, // MiB: 100 shared (the binary) + 100 private
  cliIdleNUss: 100,
  relayConnKib: 1024, // 1 MiB: a live conversation takes 101 MiB
  cliTurnCpuMs: 80,
  relayTurnCpuMs: 1,
  libTurnCpuMs: 1, // a warm turn: 82 ms
  cliColdCpuMs: 900,
  cliColdTailCpuMs: 100, // a resume: 1000 ms more
  cliColdMs: 1000,
  cliIdleCpu: 2,
  poolRecordBytes: 1024,
  storeRowsPerTurn: 5,
  storeAppendsPerTurn: 2,
  pgCpuMsPerAppend: 0.5, // 1 ms of the server's CPU per turn
  pgTurnBytes: 6000,
  turnJsonBytes: 3000, // 2 B in PostgreSQL per byte of JSON
  storeTurnBytes: 2500, // 5000 B in PostgreSQL per turn
  pgTurnsPerSecN: 1000,
};
const HOST = { cores: 16, gib: 64 }; // 64412 MiB free: 65536 - 1024 reserved - 100 shared

Deno.test("the capacity model", async (t) => {
  await t.step("a host: live conversations by memory and by idle CPU, turns and resumes", () => {
    const got = hostCapacity(COSTS, HOST);
    assert.equal(got.liveByMemory, 637); // 64412 / 101
    assert.equal(got.liveByIdleCpu, 5600); // 16 cores x 700 ms/s / 2 ms/s
    assert.ok(Math.abs(got.warmTurnsPerSec - 11200 / 82) < 1e-9);
    assert.ok(Math.abs(got.resumesPerSec - 11200 / 1082) < 1e-9);
    assert.equal(got.hibernatedInMemory, 65957888); // 64412 MiB / 1 KiB
  });

  await t.step("hibernating at once: every turn a resume, live only while it starts", () => {
    const one = perConversation(COSTS, { conversations: 1, thinkS: 60, idleS: 0 });
    assert.equal(one.resumeShare, 1);
    assert.ok(Math.abs(one.liveShare - 1 / 60) < 1e-12);
    assert.ok(Math.abs(one.cpuMsPerSec - (82 + 1000 + 2) / 60) < 1e-12);
    const host = perHost(COSTS, { conversations: 1, thinkS: 60, idleS: 0 }, HOST);
    assert.deepEqual(host, { byMemory: 38242, byCpu: 619, holds: 619, bottleneck: "cpu" });
  });

  await t.step("kept live 300 s after a turn: memory sets the count", () => {
    const load = { conversations: 10_000, thinkS: 60, idleS: 300 };
    const one = perConversation(COSTS, load);
    assert.ok(Math.abs(one.resumeShare - Math.exp(-5)) < 1e-12);
    assert.deepEqual(perHost(COSTS, load, HOST), {
      byMemory: 641,
      byCpu: 3231,
      holds: 641,
      bottleneck: "memory",
    });
    const got = fleet(COSTS, load, HOST);
    assert.equal(got.hosts, 16); // ceil(10000 / 641)
    assert.equal(got.pgConnections, 64);
    assert.ok(Math.abs(got.turnsPerSec - 10_000 / 60) < 1e-9);
    assert.ok(Math.abs(got.pgRowsPerSec - (10_000 / 60) * 5) < 1e-9);
    const perDay = (10_000 / 60) * 86400 * 5000 / 1073741824;
    assert.ok(Math.abs(got.pgGibPerDay - perDay) < 1e-9);
    assert.ok(Math.abs(got.pgAppendsPerSec - (10_000 / 60) * 2) < 1e-9);
    assert.ok(Math.abs(got.pgHeadroom - 3) < 1e-9); // 1000 / 333.3
    assert.ok(Math.abs(got.pgCores - (10_000 / 60) * 2 * 0.5 / 1000 / 0.7) < 1e-12);
  });

  await t.step(
    "a soak: its relays' RSS, its CLIs' memory, its CPU ceiling, the model's error",
    () => {
      const costs = {
        ...COSTS,
        relayBaseMb: 60,
        standInRss: 40,
        standInUss: 10, // 30 MiB shared
        standInTurnCpuMs: 2, // a turn: 2 + 1 + 1 + 1 (the server) = 5 ms
        standInColdCpuMs: 20, // a start over 10 turns: 2 ms more each
      };
      const shape = parseShape("stand-in:3:30", 2);
      assert.deepEqual(predictSoak(costs, shape), {
        relayRssMib: 70, // 60 + 10 conversations x 1 MiB
        cliMib: 330, // 30 x 10 + 30
        turnsPerSec: 400, // 2 cores / 5 ms
      });
      assert.throws(() => parseShape("stand-in:0:30", 2), /Cannot read the soak shape/);
      const report = (turns: number, peakMib: number) => ({
        options: { cli: "stand-in" as const, concurrency: 30, turns: 10 },
        turnsPerSec: 100,
        delivered: turns,
        errorResults: 0,
        relayRss: [{ peakMib }, { peakMib: 60 }, { peakMib: 61 }],
        relayKibPerSession: 1536,
      });
      const checks = checkSoak(costs, [
        { report: report(1000, 77), cpuS: 20 },
        { report: report(3000, 84), cpuS: 30 },
      ], 2);
      assert.deepEqual(checks.map((c) => [c.predicted, c.measured]), [
        [70, 77],
        [1024, 1536],
        [2000 / 7, 100], // a start spread over 10 turns: 7 ms a turn
        [70, 84],
        [1024, 1536],
        [2000 / 7, 100], // a start spread over 10 turns: 7 ms a turn
        [5, 5], // 10 s of CPU for 2000 more turns
      ]);
      assert.ok(Math.abs(checks[0]!.error - 0.1) < 1e-12);
      assert.equal(checks.at(-1)!.error, 0);
    },
  );

  await t.step("a cost not measured is named", () => {
    const { cliIdleCpu: _, ...without } = COSTS;
    assert.throws(() => hostCapacity(without, HOST), /no measured cliIdleCpu/);
  });
});
