import assert from "node:assert/strict";
import {
  MARKER_VARIABLE,
  parsePs,
  sweepMarked,
} from "../../../adapters/subprocess/_marked_processes.ts";
import { canTrackProcesses, denoRunArgs } from "./_helpers.ts";
import { checkBoth } from "./_marked_check.ts";

const CAN_SIGNAL = Deno.build.os === "linux" &&
  Deno.permissions.querySync({ name: "run" }).state === "granted";
const CHECK = decodeURIComponent(new URL("./_marked_check.ts", import.meta.url).pathname);

Deno.test({
  name: "parsePs() reads pid, start time and the marker from ps lines",
  permissions: "none",
  fn: () => {
    const text = [
      "  812 Tue Dec  1 09:22:42 2026 sleep 30 HOME=/root DUPLEX_CLAUDE_SESSION=abc PATH=/bin",
      "  813 Tue Dec  1 09:22:43 2026 sleep 30 DUPLEX_CLAUDE_SESSION=abcd",
      "  814 Tue Dec 11 10:00:00 2026 [kworker/0:1] <defunct>",
      "  815 Tue Dec 11 10:00:00 2026",
      "garbage",
    ].join("\n");
    assert.deepEqual(parsePs(text, `${MARKER_VARIABLE}=abc`), [
      { pid: 812, startTime: "Tue Dec 1 09:22:42 2026", source: "ps" },
    ]);
    assert.deepEqual(parsePs(text).map((process) => process.pid), [812, 813, 814, 815]);
  },
});

Deno.test({
  name: "signalFound() skips a found process whose start time no longer matches",
  ignore: !CAN_SIGNAL,
  fn: async (t) => {
    // This process cannot read /proc (Deno opens it only to --allow-all): ps finds them.
    await t.step("found by ps", async () => {
      const expected = canTrackProcesses() ? "proc" : "ps";
      assert.deepEqual(await checkBoth(), [expected, expected]);
    });
    await t.step("found in /proc (a program with --allow-all)", async () => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: denoRunArgs(CHECK),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert.equal(output.code, 0, stderr);
      assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), {
        sources: ["proc", "proc"],
      });
    });
  },
});

Deno.test({
  name: "sweepMarked() ends the marked processes, SIGKILL for one that ignores SIGTERM",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    const marker = crypto.randomUUID();
    const spawn = (script: string): Deno.ChildProcess =>
      new Deno.Command("sh", {
        args: ["-c", script],
        env: { [MARKER_VARIABLE]: marker },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    const polite = spawn("exec sleep 30");
    const stubborn = spawn(`trap "" TERM; exec sleep 31`);
    try {
      // Let the shell install its trap before the sweep.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(await sweepMarked(marker, 300), 2);
      assert.equal((await polite.status).signal, "SIGTERM");
      assert.equal((await stubborn.status).signal, "SIGKILL");
      assert.equal(await sweepMarked(marker, 300), 0);
    } finally {
      for (const child of [polite, stubborn]) {
        try {
          child.kill("SIGKILL");
        } catch {
          // ended
        }
        await child.status;
      }
    }
  },
});
