import assert from "node:assert/strict";
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

interface Opened {
  pid: number;
  grandchild: number;
}

Deno.test({
  name: "A signal to the host closes its CLIs and exits as a shell would",
  ignore: !CAN_SIGNAL,
  fn: async (t) => {
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
      await t.step(signal, async () => {
        let opened: Opened | undefined;
        try {
          await using host = new HostScript("hold", fakeOptions(HOLDING, QUICK));
          opened = (await host.next()) as unknown as Opened;
          assert.equal(typeof opened.pid, "number", JSON.stringify(opened));
          host.kill(signal);
          const status = await host.status();
          assert.equal(status.code, code, status.stderr);
          assert.ok(await waitGone(opened.pid, 1000), "the CLI survived");
          assert.ok(await waitGone(opened.grandchild, 1000), "its tool process survived");
        } finally {
          killIfAlive(opened?.pid);
          killIfAlive(opened?.grandchild);
        }
      });
    }
  },
});

Deno.test({
  name: "Deno.exit() in the host sends SIGTERM to its CLIs",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    let opened: Opened | undefined;
    try {
      await using host = new HostScript("exit", fakeOptions(HOLDING, QUICK));
      opened = (await host.next()) as unknown as Opened;
      const status = await host.status();
      assert.equal(status.code, 0, status.stderr);
      assert.ok(await waitGone(opened.pid, 3000), "the CLI survived");
      assert.ok(await waitGone(opened.grandchild, 3000), "its tool process survived");
    } finally {
      killIfAlive(opened?.pid);
      killIfAlive(opened?.grandchild);
    }
  },
});

Deno.test({
  name: "hostSignal: close leaves exiting to the program's own listener",
  ignore: !CAN_SIGNAL,
  fn: async () => {
    let opened: Opened | undefined;
    try {
      await using host = new HostScript(
        "user-listener",
        fakeOptions(HOLDING, { ...QUICK, hostSignal: "close" }),
      );
      opened = (await host.next()) as unknown as Opened;
      host.kill("SIGINT");
      const report = (await host.next()) as { user: { requested: boolean; signal: string } };
      assert.equal(report.user.requested, true);
      assert.equal(report.user.signal, "SIGTERM");
      const status = await host.status();
      assert.equal(status.code, 7, status.stderr);
      assert.ok(await waitGone(opened.pid, 1000));
      assert.ok(await waitGone(opened.grandchild, 1000));
    } finally {
      killIfAlive(opened?.pid);
      killIfAlive(opened?.grandchild);
    }
  },
});

Deno.test("A host with no open CLI ends by itself (the listeners are removed)", async () => {
  await using host = new HostScript("natural", fakeOptions());
  assert.equal(typeof (await host.next())?.opened, "number");
  assert.equal(((await host.next())?.exit as { code: number }).code, 0);
  const status = await within(10_000, "the host to end", host.status());
  assert.equal(status.code, 0, status.stderr);
});
