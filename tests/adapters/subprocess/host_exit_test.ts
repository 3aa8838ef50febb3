import assert from "node:assert/strict";
import type { SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { fakeOptions, killIfAlive, waitGone, within } from "./_helpers.ts";
import { HostScript } from "./_run_host.ts";

// The host scripts run with -A (they find the CLI's descendants in /proc); this test only
// needs to signal processes and see them end (full --allow-run, Linux).
const CAN_SIGNAL = Deno.build.os === "linux" &&
  Deno.permissions.querySync({ name: "run" }).state === "granted";

const HOLDING = {
  FAKE_CLAUDE_HELLO: "1",
  FAKE_CLAUDE_IGNORE_EOF: "1",
  FAKE_CLAUDE_GRANDCHILD: "1",
};
const QUICK = { closeGraceMs: 200, terminateGraceMs: 1000 };
const HOST_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

interface Opened {
  pid: number;
  grandchild: number;
}

/**
 * Runs a host script that opens a CLI which starts a tool process, then
 * `body`; then asserts that both processes are gone within `goneMs`.
 *
 * @param body Gets the host and the listener reports (`"spy"` mode) before the open's.
 */
async function withHost(
  mode: string,
  options: SubprocessOptions,
  body: (host: HostScript, listeners: unknown[]) => Promise<void>,
  goneMs = 1000,
): Promise<void> {
  let opened: Opened | undefined;
  try {
    await using host = new HostScript(mode, options);
    const listeners: unknown[] = [];
    for (let report = await host.next(); report !== undefined; report = await host.next()) {
      if (!("listener" in report)) {
        opened = report as unknown as Opened;
        break;
      }
      listeners.push(report);
    }
    assert.equal(typeof opened?.pid, "number", JSON.stringify(opened));
    await body(host, listeners);
    assert.ok(await waitGone(opened!.pid, goneMs), "the CLI survived");
    assert.ok(await waitGone(opened!.grandchild, goneMs), "its tool process survived");
  } finally {
    killIfAlive(opened?.pid);
    killIfAlive(opened?.grandchild);
  }
}

Deno.test({
  name: "A signal to the host closes its CLIs and exits as a shell would",
  ignore: !CAN_SIGNAL,
  fn: async (t) => {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
      await t.step(signal, async () => {
        await withHost("hold", fakeOptions(HOLDING, QUICK), async (host) => {
          host.kill(signal);
          const status = await host.status();
          assert.equal(status.code, code, status.stderr);
        });
      });
    }
  },
});

Deno.test({
  name: "Deno.exit() in the host sends SIGTERM to its CLIs",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    await withHost("exit", fakeOptions(HOLDING, QUICK), async (host) => {
      const status = await host.status();
      assert.equal(status.code, 0, status.stderr);
    }, 3000);
  },
});

Deno.test({
  name: "hostSignal: close leaves exiting to the program's own listener",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    const options = fakeOptions(HOLDING, { ...QUICK, hostSignal: "close" });
    await withHost("user-listener", options, async (host) => {
      host.kill("SIGINT");
      const report = (await host.next()) as { user: { requested: boolean; signal: string } };
      assert.equal(report.user.requested, true);
      assert.equal(report.user.signal, "SIGTERM");
      const status = await host.status();
      assert.equal(status.code, 7, status.stderr);
    });
  },
});

Deno.test("A host with no open CLI ends by itself (the listeners are removed)", async () => {
  await using host = new HostScript("natural", fakeOptions());
  assert.equal(typeof (await host.next())?.opened, "number");
  assert.equal(((await host.next())?.exit as { code: number }).code, 0);
  const status = await within(10_000, "the host to end", host.status());
  assert.equal(status.code, 0, status.stderr);
});

Deno.test({
  name: "An open transport installs only the listeners its module doc names, none for rejections",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    await withHost("spy", fakeOptions(HOLDING, QUICK), async (host, atOpen) => {
      assert.deepEqual(atOpen, [
        ...HOST_SIGNALS.map((type) => ({ listener: "add", on: "signal", type })),
        { listener: "add", on: "event", type: "unload" },
      ]);
      host.kill("SIGTERM");
      const atSignal: unknown[] = [];
      for (let report = await host.next(); report !== undefined; report = await host.next()) {
        atSignal.push(report);
      }
      // Removed before the synchronous end; nothing added (no unhandledrejection listener).
      assert.deepEqual(atSignal, [
        ...HOST_SIGNALS.map((type) => ({ listener: "remove", on: "signal", type })),
        { listener: "remove", on: "event", type: "unload" },
      ]);
      const status = await host.status();
      assert.equal(status.code, 143, status.stderr);
    });
  },
});

Deno.test({
  name: "A signal to the host ends a CLI that ignores SIGTERM with SIGKILL, then exits",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    const options = fakeOptions({ ...HOLDING, FAKE_CLAUDE_IGNORE_SIGTERM: "1" }, QUICK);
    await withHost("hold", options, async (host) => {
      const signalled = Date.now();
      host.kill("SIGTERM");
      const status = await host.status();
      const took = Date.now() - signalled;
      assert.equal(status.code, 143, status.stderr);
      // SIGTERM, up to 1 s (QUICK.terminateGraceMs) polled, SIGKILL: the host exits after it.
      assert.ok(took >= 900 && took < 5000, `took ${took} ms`);
    });
  },
});
