import assert from "node:assert/strict";
import { subprocess, type SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { abortable, deadline } from "../../../src/_deadline.ts";
import { isDuplexError, type TransportExit } from "../../../src/errors.ts";
import {
  canTrackProcesses,
  fakeOptions,
  FrameReader,
  isGone,
  killIfAlive,
  openFake,
  userLine,
  waitGone,
  within,
} from "./_helpers.ts";
import { HostScript } from "./_run_host.ts";

/** How long a close with an unbounded wait is watched for not settling. */
const UNSETTLED_MS = 400;

/** Resolves with true when `promise` has not settled within `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  using limit = deadline(ms);
  return await abortable(promise.then(() => false, () => false), limit.signal).catch(() => true);
}

/** Opens the stand-in, waits for its hello, closes it; returns the exit and the close's time. */
async function timedClose(
  env: Record<string, string>,
  options: SubprocessOptions,
): Promise<{ exit: TransportExit; elapsed: number }> {
  await using transport = await openFake({ ...env, FAKE_CLAUDE_HELLO: "1" }, options);
  await new FrameReader(transport).nextOfType("fake_hello");
  const started = Date.now();
  const exit = await within(10_000, "close", transport.close());
  return { exit, elapsed: Date.now() - started };
}

Deno.test("Transport.close() is idempotent and bounded", async (t) => {
  await t.step("same promise, same result", async () => {
    const transport = await openFake();
    const first = transport.close();
    const second = transport.close();
    assert.equal(first, second);
    const exit = await first;
    assert.deepEqual(await transport.close(), exit);
    assert.deepEqual(await transport.closed, exit);
    await transport[Symbol.asyncDispose]();
    await transport.readable.cancel();
  });
  await t.step("a CLI that ignores stdin EOF gets SIGTERM", async () => {
    const { exit, elapsed } = await timedClose(
      { FAKE_CLAUDE_IGNORE_EOF: "1" },
      { closeGraceMs: 300, terminateGraceMs: 2000 },
    );
    assert.equal(exit.signal, "SIGTERM");
    assert.equal(exit.requested, true);
    assert.ok(elapsed >= 250 && elapsed < 2000, `took ${elapsed} ms`);
  });
  await t.step("a CLI that also ignores SIGTERM gets SIGKILL", async () => {
    const { exit, elapsed } = await timedClose(
      { FAKE_CLAUDE_IGNORE_EOF: "1", FAKE_CLAUDE_IGNORE_SIGTERM: "1" },
      { closeGraceMs: 200, terminateGraceMs: 300 },
    );
    assert.equal(exit.signal, "SIGKILL");
    assert.equal(exit.requested, true);
    assert.ok(elapsed >= 450 && elapsed < 3000, `took ${elapsed} ms`);
  });
  await t.step("a write the CLI never reads does not block close", async () => {
    await using transport = await openFake(
      { FAKE_CLAUDE_HELLO: "1" },
      { closeGraceMs: 200, terminateGraceMs: 500 },
    );
    const frames = new FrameReader(transport);
    await frames.nextOfType("fake_hello");
    // The stand-in answers each user line on stdout, which nobody reads any more:
    // it blocks, stops reading stdin, and this write never completes.
    const stuck = transport.write(userLine("w".repeat(20_000_000)));
    stuck.catch(() => {});
    const exit = await within(10_000, "close", transport.close());
    assert.equal(exit.requested, true);
    await assert.rejects(stuck, (error: unknown) => isDuplexError(error, "process_exited"));
    await frames.cancel();
  });
});

Deno.test({
  name: "Transport.close() leaves no descendant of the CLI alive",
  ignore: Deno.build.os !== "linux" ||
    Deno.permissions.querySync({ name: "run" }).state !== "granted",
  fn: async (t) => {
    const scenarios: ReadonlyArray<
      readonly [string, Record<string, string>, { closeGraceMs: number; terminateGraceMs: number }]
    > = [
      ["CLI exits on stdin EOF", {}, { closeGraceMs: 2000, terminateGraceMs: 2000 }],
      ["CLI ignores stdin EOF", { FAKE_CLAUDE_IGNORE_EOF: "1" }, {
        closeGraceMs: 200,
        terminateGraceMs: 2000,
      }],
      [
        "CLI ignores SIGTERM too",
        { FAKE_CLAUDE_IGNORE_EOF: "1", FAKE_CLAUDE_IGNORE_SIGTERM: "1" },
        {
          closeGraceMs: 200,
          terminateGraceMs: 300,
        },
      ],
      ["grandchild holds stdout and stderr", {
        FAKE_CLAUDE_IGNORE_EOF: "1",
        FAKE_CLAUDE_HOLD_STDIO: "1",
      }, { closeGraceMs: 200, terminateGraceMs: 500 }],
    ];
    // Finding descendants needs /proc, which Deno opens only to --allow-all: without it,
    // the same scenario runs in a host program that has it.
    const inProcess = canTrackProcesses();
    for (const [name, env, lifecycle] of scenarios) {
      await t.step(name, async () => {
        let grandchild: number | undefined;
        let cli: number | undefined;
        try {
          const options = fakeOptions({ FAKE_CLAUDE_GRANDCHILD: "1", ...env }, lifecycle);
          if (inProcess) {
            await using transport = await subprocess(options)({
              signal: AbortSignal.timeout(30_000),
            });
            const frames = new FrameReader(transport);
            grandchild = (await frames.nextOfType("fake_grandchild")).pid as number;
            cli = transport.info.pid;
            assert.equal(isGone(grandchild), false);
            const exit = await within(10_000, "close", transport.close());
            assert.equal(exit.requested, true);
            await frames.rest();
          } else {
            await using host = new HostScript("orphan", options);
            const report = await within(20_000, "the host's report", host.next());
            grandchild = report?.grandchild as number;
            cli = report?.cli as number;
            assert.equal((report?.exit as { requested: boolean }).requested, true);
          }
          assert.ok(await waitGone(grandchild, 2000), `grandchild ${grandchild} survived`);
          assert.ok(await waitGone(cli!, 1000));
        } finally {
          killIfAlive(grandchild);
          killIfAlive(cli);
        }
      });
    }
  },
});

Deno.test({
  name: "Transport.close() ends the processes of the CLI's group that outlive it",
  ignore: Deno.build.os !== "linux" ||
    Deno.permissions.querySync({ name: "run" }).state !== "granted",
  fn: async () => {
    let child: number | undefined;
    try {
      await using transport = await openFake({ FAKE_CLAUDE_GROUP_CHILD: "1" });
      const frames = new FrameReader(transport);
      child = (await frames.nextOfType("fake_group_child")).pid as number;
      const exit = await within(10_000, "close", transport.close());
      assert.equal(exit.code, 0); // the CLI itself exited on stdin EOF
      assert.ok(await waitGone(child, 2000), `group member ${child} survived`);
      await frames.rest();
    } finally {
      killIfAlive(child);
    }
  },
});

/**
 * Closes a stand-in that ignores stdin EOF (and more, as `env` says) and checks that
 * the close has not settled after a while; then ends the process from outside.
 *
 * @returns How the close ended.
 */
async function closeUntilEndedOutside(
  env: Record<string, string>,
  options: SubprocessOptions,
  signal: Deno.Signal,
): Promise<TransportExit> {
  await using transport = await openFake(
    { ...env, FAKE_CLAUDE_IGNORE_EOF: "1", FAKE_CLAUDE_HELLO: "1" },
    options,
  );
  await new FrameReader(transport).nextOfType("fake_hello");
  const closing = transport.close();
  // A clamped timer (2^31 ms or more fires after about 1 ms) would go on with the ladder.
  assert.equal(await pendingAfter(closing, UNSETTLED_MS), true, "close() did not wait");
  Deno.kill(transport.info.pid!, signal);
  return await within(10_000, "close", closing);
}

Deno.test({
  name: "Transport.close() with Infinity grace periods sets no timer and waits for the CLI",
  // Ending the CLI from outside needs Deno.kill (full --allow-run).
  ignore: Deno.permissions.querySync({ name: "run" }).state !== "granted",
  fn: async (t) => {
    await t.step("closeGraceMs: Infinity never sends SIGTERM", async () => {
      const options = { closeGraceMs: Infinity, terminateGraceMs: 100 };
      const exit = await closeUntilEndedOutside({}, options, "SIGKILL");
      assert.equal(exit.signal, "SIGKILL");
      assert.equal(exit.requested, true);
    });
    await t.step("terminateGraceMs: Infinity never sends SIGKILL", async () => {
      const env = { FAKE_CLAUDE_IGNORE_SIGTERM: "1" };
      const options = { closeGraceMs: 0, terminateGraceMs: Infinity };
      const exit = await closeUntilEndedOutside(env, options, "SIGINT");
      assert.equal(exit.signal, "SIGINT");
    });
  },
});

Deno.test("Transport.close() with zero grace periods skips the waits", async () => {
  await using transport = await openFake(
    { FAKE_CLAUDE_IGNORE_EOF: "1", FAKE_CLAUDE_IGNORE_SIGTERM: "1", FAKE_CLAUDE_HELLO: "1" },
    { closeGraceMs: 0, terminateGraceMs: 0 },
  );
  const frames = new FrameReader(transport);
  await frames.nextOfType("fake_hello");
  const started = Date.now();
  const exit = await within(10_000, "close", transport.close());
  assert.equal(exit.signal, "SIGKILL");
  assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
  await assert.rejects(transport.write(userLine("late")), (error: unknown) => {
    assert.ok(isDuplexError(error, "closed"), String(error));
    return true;
  });
  await frames.rest();
});
