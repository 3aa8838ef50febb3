import assert from "node:assert/strict";
import {
  descendantsOf,
  findDescendants,
  isAlive,
  parseStat,
  type StatFields,
} from "../../../adapters/subprocess/_process_tree.ts";
import { canTrackProcesses } from "./_helpers.ts";

Deno.test({
  name: "parseStat() reads pid, ppid, pgid, state and start time",
  permissions: "none",
  fn: async (t) => {
    await t.step("a plain name", () => {
      const text =
        "5618 (sleep) S 5612 5618 5618 0 -1 4194560 107 0 1 0 0 0 0 0 20 0 1 0 51140 2990080 388";
      assert.deepEqual(parseStat(text), {
        pid: 5618,
        ppid: 5612,
        pgid: 5618,
        state: "S",
        startTime: "51140",
      });
    });
    await t.step("a name with spaces and parentheses", () => {
      const text = "77 (a (b) c) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999 0 0";
      assert.deepEqual(parseStat(text), {
        pid: 77,
        ppid: 1,
        pgid: 77,
        state: "R",
        startTime: "999",
      });
    });
    await t.step("garbage", () => {
      assert.equal(parseStat(""), undefined);
      assert.equal(parseStat("1 (x) S"), undefined);
    });
  },
});

function proc(pid: number, ppid: number, state = "S", pgid = pid): StatFields {
  return { pid, ppid, pgid, state, startTime: String(pid * 10) };
}

Deno.test({
  name: "descendantsOf() walks children of children, nearest first",
  permissions: "none",
  fn: () => {
    const table = [
      proc(1, 0),
      proc(10, 1),
      proc(11, 10),
      proc(12, 10),
      proc(13, 12, "S", 10),
      proc(14, 12, "Z"),
      proc(20, 1),
    ];
    assert.deepEqual(descendantsOf(10, table).map((p) => p.pid), [11, 12, 13]);
    assert.deepEqual(descendantsOf(13, table), []);
    assert.deepEqual(descendantsOf(10, table)[2], { pid: 13, pgid: 10, startTime: "130" });
  },
});

Deno.test({
  name: "findDescendants() finds a child process, and isAlive() sees it end",
  ignore: !canTrackProcesses(),
  fn: async () => {
    const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" })
      .spawn();
    try {
      const found = (await findDescendants(Deno.pid)).find((p) => p.pid === child.pid);
      assert.ok(found);
      assert.equal(await isAlive(found), true);
      assert.equal(await isAlive({ ...found, startTime: "0" }), false);
      child.kill("SIGKILL");
      await child.status;
      assert.equal(await isAlive(found), false);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // already ended
      }
      await child.status;
    }
  },
});

Deno.test({
  name: "findDescendants() returns nothing when /proc cannot be read",
  permissions: { read: false },
  fn: async () => {
    assert.deepEqual(await findDescendants(Deno.pid), []);
    assert.equal(await isAlive({ pid: Deno.pid, pgid: Deno.pid, startTime: "1" }), false);
  },
});
