import assert from "node:assert/strict";
import {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_STDERR_TAIL_BYTES,
  DEFAULT_TERMINATE_GRACE_MS,
  subprocess,
  type SubprocessOptions,
} from "../../../adapters/subprocess/mod.ts";
import {
  checkOptions,
  checkSubprocessOptions,
} from "../../../adapters/subprocess/subprocess_options.ts";
import { planLaunch } from "../../../adapters/subprocess/build_args.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import { DuplexError, isDuplexError } from "../../../src/errors.ts";

Deno.test({
  name: "subprocess() throws for invalid lifecycle options before spawning",
  permissions: "none",
  fn: async (t) => {
    await t.step("values it cannot use", () => {
      for (const options of [{ stderrTailBytes: 0 }, { hostSignal: "explode" }]) {
        assert.throws(
          () => subprocess(options as SubprocessOptions),
          (error: unknown) => isDuplexError(error, "invalid_argument"),
          JSON.stringify(options),
        );
      }
      assert.throws(() => subprocess({ permissionMode: "yolo" as "plan" }), DuplexError);
    });
    await t.step("wrong types", () => {
      assert.throws(() => subprocess({ binaryArgs: "run" as unknown as string[] }), TypeError);
      assert.throws(() => subprocess({ env: { A: 1 as unknown as string } }), TypeError);
      assert.throws(() => subprocess({ closeGraceMs: "1" as unknown as number }), TypeError);
    });
    await t.step("durations out of range", () => {
      for (const name of ["closeGraceMs", "terminateGraceMs"] as const) {
        // 2^31 ms and more would overflow the runtime's timer and fire after about 1 ms.
        for (const value of [-1, 2 ** 31, Number.MAX_SAFE_INTEGER, NaN, -Infinity]) {
          assert.throws(
            () => subprocess({ [name]: value }),
            (error: unknown) => {
              assert.ok(error instanceof RangeError, `${name}: ${value}: ${error}`);
              assert.match(
                error.message,
                new RegExp(`^Cannot use the subprocess options: ${name}`),
              );
              return true;
            },
          );
        }
      }
    });
  },
});

Deno.test({
  name: "subprocess() accepts grace periods from 0 to 2^31-1 ms, and Infinity",
  permissions: "none",
  fn: () => {
    for (const value of [0, 1, 2 ** 31 - 1, Infinity]) {
      const lifecycle = checkOptions({ closeGraceMs: value, terminateGraceMs: value });
      assert.equal(lifecycle.closeGraceMs, value);
      assert.equal(lifecycle.terminateGraceMs, value);
      assert.equal(typeof subprocess({ closeGraceMs: value, terminateGraceMs: value }), "function");
    }
  },
});

Deno.test({
  name: "checkOptions() applies the defaults",
  permissions: "none",
  fn: () => {
    assert.deepEqual(checkOptions({}), {
      closeGraceMs: DEFAULT_CLOSE_GRACE_MS,
      terminateGraceMs: DEFAULT_TERMINATE_GRACE_MS,
      stderrTailBytes: DEFAULT_STDERR_TAIL_BYTES,
      hostSignal: "close-and-exit",
    });
  },
});

Deno.test({
  name: "checkSubprocessOptions() checks everything once, purely: the options, the plan, the close",
  permissions: "none",
  fn: () => {
    const given: SubprocessOptions = { sessionStore: new InMemorySessionStore(), model: "sonnet" };
    const checked = checkSubprocessOptions(given);
    assert.equal(checked.options.sessionMirror, true);
    assert.equal(given.sessionMirror, undefined, "the caller's object is left as it was");
    assert.deepEqual(checked.plan.args, planLaunch(checked.options).args);
    assert.ok(checked.plan.args.includes("--session-mirror"));
    assert.deepEqual(checked.close, checkOptions({}));
    assert.equal(checkSubprocessOptions({}).options.sessionMirror, undefined);
    // The same refusals as subprocess(), the CLI flags first.
    assert.throws(
      () => checkSubprocessOptions({ permissionMode: "yolo" as "plan", stderrTailBytes: 0 }),
      /permissionMode/,
    );
    assert.throws(() => checkSubprocessOptions({ stderrTailBytes: 0 }), /stderrTailBytes/);
  },
});

Deno.test({
  name: "subprocess() checks the environment, program and folder options before spawning",
  permissions: "none",
  fn: async (t) => {
    await t.step("a new name and its deprecated alias together", () => {
      for (
        const options of [
          { pathToClaudeCodeExecutable: "a", binary: "b" },
          { executableArgs: [], binaryArgs: [] },
        ]
      ) {
        assert.throws(
          () => subprocess(options),
          (error: unknown) =>
            isDuplexError(error, "invalid_argument") && /deprecated name/.test(error.message),
          JSON.stringify(options),
        );
      }
    });
    await t.step("wrong types", () => {
      const wrong: unknown[] = [
        { pathToClaudeCodeExecutable: 1 },
        { executableArgs: "run" },
        { executableArgs: [1] },
        { extraEnv: { A: 1 } },
        { extraEnv: ["A=1"] },
        { env: null },
        { tempDir: 1 },
        { clearEnv: "yes" },
      ];
      for (const options of wrong) {
        assert.throws(
          () => subprocess(options as SubprocessOptions),
          (error: unknown) =>
            error instanceof TypeError &&
            /^Cannot use the subprocess options: /.test(error.message),
          JSON.stringify(options),
        );
      }
    });
    await t.step("the deprecated names alone still work", () => {
      assert.equal(typeof subprocess({ binary: "claude", binaryArgs: ["-x"] }), "function");
      assert.equal(typeof subprocess({ clearEnv: true, extraEnv: { A: "1" } }), "function");
      assert.equal(typeof subprocess({ clearEnv: true, env: { A: "1" } }), "function");
    });
  },
});
