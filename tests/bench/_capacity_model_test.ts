/** The capacity model's formulas, on round constants worked out by hand. */

import assert from "node:assert/strict";
import { type Costs, fleet, hostCapacity, perConversation, perHost } from "./_capacity_model.ts";

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
  });

  await t.step("a cost not measured is named", () => {
    const { cliIdleCpu: _, ...without } = COSTS;
    assert.throws(() => hostCapacity(without, HOST), /no measured cliIdleCpu/);
  });
});
