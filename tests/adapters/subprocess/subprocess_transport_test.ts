import assert from "node:assert/strict";
import { buildArgs, subprocess } from "../../../adapters/subprocess/mod.ts";
import { hostExitState } from "../../../adapters/subprocess/_host_exit.ts";
import { isDuplexError } from "../../../src/errors.ts";
import {
  fakeOptions,
  FrameReader,
  makeTestDir,
  openFake,
  TEST_TMP,
  userLine,
  within,
} from "./_helpers.ts";

Deno.test("subprocess() round-trips lines with the CLI", async () => {
  await using transport = await openFake();
  const frames = new FrameReader(transport);
  await transport.write(userLine("hello"));
  await transport.write(userLine("world"));
  assert.equal((await frames.nextOfType("result")).result, "hello");
  assert.equal((await frames.nextOfType("result")).result, "world");
  const exit = await within(10_000, "close", transport.close());
  assert.equal(exit.code, 0);
  assert.equal(exit.signal, null);
  assert.equal(exit.requested, true);
  assert.equal(await frames.next(), undefined);
});

Deno.test("subprocess() serialises concurrent writes in call order", async () => {
  await using transport = await openFake();
  const frames = new FrameReader(transport);
  const count = 200;
  await Promise.all(
    Array.from({ length: count }, (_, i) => transport.write(userLine(`m${i}`))),
  );
  for (let i = 0; i < count; i++) {
    assert.equal((await frames.nextOfType("result")).result, `m${i}`);
  }
  await transport.close();
  await frames.rest();
});

Deno.test("subprocess() describes the process in info", async () => {
  await using transport = await openFake();
  assert.equal(transport.info.kind, "subprocess");
  assert.equal(typeof transport.info.pid, "number");
  assert.ok(transport.info.description?.startsWith(Deno.execPath()));
  assert.ok(transport.info.description?.includes("--input-format stream-json"));
  await transport.close();
  await transport.readable.cancel();
});

Deno.test("subprocess() passes the CLI flags and a cleaned environment", async (t) => {
  const names = ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "NODE_OPTIONS", "DEBUG", "DUPLEX_T"];
  const saved = new Map(names.map((name) => [name, Deno.env.get(name)]));
  Deno.env.set("CLAUDECODE", "1");
  Deno.env.set("CLAUDE_CODE_ENTRYPOINT", "cli");
  Deno.env.set("NODE_OPTIONS", "--inspect");
  Deno.env.set("DUPLEX_T", "inherited");
  try {
    const report = {
      FAKE_CLAUDE_HELLO: "1",
      FAKE_CLAUDE_REPORT_ENV: names.join(","),
    };
    await t.step("inherited variables stripped, others passed", async () => {
      const options = fakeOptions(report, { model: "sonnet", maxTurns: 2 });
      await using transport = await subprocess(options)({ signal: AbortSignal.timeout(60_000) });
      const hello = await new FrameReader(transport).nextOfType("fake_hello");
      assert.deepEqual(hello.args, buildArgs({ model: "sonnet", maxTurns: 2 }));
      assert.deepEqual(hello.env, {
        CLAUDECODE: null,
        CLAUDE_CODE_ENTRYPOINT: null,
        NODE_OPTIONS: null,
        DEBUG: null,
        DUPLEX_T: "inherited",
      });
      await transport.close();
    });
    await t.step("explicit variables win, undefined removes", async () => {
      await using transport = await openFake(
        { ...report, DEBUG: "on", CLAUDE_CODE_ENTRYPOINT: "mine", DUPLEX_T: undefined },
      );
      const hello = await new FrameReader(transport).nextOfType("fake_hello");
      assert.deepEqual(hello.env, {
        CLAUDECODE: null,
        CLAUDE_CODE_ENTRYPOINT: "mine",
        NODE_OPTIONS: null,
        DEBUG: "on",
        DUPLEX_T: null,
      });
      await transport.close();
    });
    await t.step("clearEnv passes only env", async () => {
      const home = Deno.env.get("HOME");
      await using transport = await openFake(
        { ...report, ...(home !== undefined && { HOME: home }) },
        { clearEnv: true },
      );
      const hello = await new FrameReader(transport).nextOfType("fake_hello");
      assert.deepEqual(hello.env, {
        CLAUDECODE: null,
        CLAUDE_CODE_ENTRYPOINT: null,
        NODE_OPTIONS: null,
        DEBUG: null,
        DUPLEX_T: null,
      });
      await transport.close();
    });
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
});

Deno.test("subprocess() drains more than 1 MB of stderr without stalling", async (t) => {
  await t.step("nobody reads transport.stderr", async () => {
    await using transport = await openFake({ FAKE_CLAUDE_STDERR_BYTES: String(1_200_000) });
    const frames = new FrameReader(transport);
    // The stand-in writes its stderr before it reads stdin: an undrained pipe would block it.
    await transport.write(userLine("after the flood"));
    const result = await within(20_000, "result", frames.nextOfType("result"));
    assert.equal(result.result, "after the flood");
    const exit = await transport.close();
    assert.equal(exit.code, 0);
    assert.ok(exit.stderrTail.length <= 64 * 1024, `tail is ${exit.stderrTail.length} bytes`);
    assert.ok(exit.stderrTail.length > 60 * 1024);
    assert.ok(exit.stderrTail.endsWith("c".repeat(99)));
  });
  await t.step("transport.stderr yields the lines", async () => {
    await using transport = await openFake({ FAKE_CLAUDE_STDERR_BYTES: String(1_200_000) });
    assert.ok(transport.stderr);
    let lines = 0;
    for await (const line of transport.stderr) {
      assert.equal(line, "c".repeat(99));
      if (++lines === 12_000) break;
    }
    await transport.write(userLine("x"));
    await new FrameReader(transport).nextOfType("result");
    await transport.close();
  });
});

Deno.test("subprocess() offers stderr lines and a bounded tail", async (t) => {
  await t.step("lines on transport.stderr, in order", async () => {
    await using transport = await openFake({
      FAKE_CLAUDE_STDERR_LINES: "5",
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
    });
    assert.ok(transport.stderr);
    const lines = await Array.fromAsync(transport.stderr);
    assert.deepEqual(lines, [0, 1, 2, 3, 4].map((i) => `stderr line ${i}`));
    const exit = await transport.closed;
    assert.equal(exit.stderrTail, lines.join("\n"));
    await transport.readable.cancel();
  });
  await t.step("stderrTailBytes bounds the tail", async () => {
    await using transport = await openFake(
      { FAKE_CLAUDE_STDERR_LINES: "100", FAKE_CLAUDE_EXIT_IMMEDIATELY: "1" },
      { stderrTailBytes: 44 },
    );
    const exit = await transport.closed;
    assert.equal(exit.stderrTail, "stderr line 98\nstderr line 99");
    await transport.readable.cancel();
  });
  await t.step("a partial last line and CRLF", async () => {
    await using transport = await openFake({
      FAKE_CLAUDE_STDERR_TEXT: "one\r\ntwo\nthree",
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
    });
    assert.ok(transport.stderr);
    assert.deepEqual(await Array.fromAsync(transport.stderr), ["one", "two", "three"]);
    assert.equal((await transport.closed).stderrTail, "one\ntwo\nthree");
    await transport.readable.cancel();
  });
});

Deno.test("subprocess() reports the exit code and stderr of a CLI that exits by itself", async (t) => {
  await t.step("exit code 1 with an error on stderr", async () => {
    await using transport = await openFake({
      FAKE_CLAUDE_STDERR_TEXT: "error: unknown option '--bogus'\n",
      FAKE_CLAUDE_EXIT_CODE: "1",
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
    });
    const exit = await within(20_000, "closed", transport.closed);
    assert.deepEqual(exit, {
      code: 1,
      signal: null,
      stderrTail: "error: unknown option '--bogus'",
      requested: false,
    });
    assert.equal(await new FrameReader(transport).next(), undefined);
    assert.deepEqual(await transport.close(), exit);
  });
  await t.step("exit code 0 after stdin EOF", async () => {
    await using transport = await openFake();
    await transport.endInput();
    await transport.endInput();
    const exit = await within(20_000, "closed", transport.closed);
    assert.equal(exit.code, 0);
    assert.equal(exit.requested, false);
    await transport.readable.cancel();
  });
  await t.step("exit code chosen by a command", async () => {
    await using transport = await openFake();
    await transport.write(JSON.stringify({ type: "fake", action: "exit", code: 42 }));
    const exit = await within(20_000, "closed", transport.closed);
    assert.equal(exit.code, 42);
    assert.equal(exit.signal, null);
    await transport.readable.cancel();
  });
});

Deno.test("subprocess() delivers the last stdout bytes even when the exit is seen first", async (t) => {
  await t.step("bytes left in the pipe", async () => {
    await using transport = await openFake({
      FAKE_CLAUDE_FINAL_STDOUT_BYTES: "50000",
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
    });
    const exit = await within(20_000, "closed", transport.closed);
    assert.equal(exit.code, 0);
    const frames = await new FrameReader(transport).rest();
    assert.equal(frames.length, 1);
    assert.equal(frames[0]?.type, "fake_final");
    assert.equal((frames[0]?.data as string).length, 50000);
  });
  await t.step("more than a pipe holds, read concurrently", async () => {
    await using transport = await openFake({
      FAKE_CLAUDE_FINAL_STDOUT_BYTES: "3000000",
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
    });
    const frames = new FrameReader(transport).rest();
    await within(20_000, "closed", transport.closed);
    const all = await frames;
    assert.equal((all[0]?.data as string).length, 3_000_000);
  });
});

Deno.test("Transport.write() rejects with process_exited after the CLI exited", async (t) => {
  await t.step("after closed resolved", async () => {
    await using transport = await openFake({ FAKE_CLAUDE_EXIT_IMMEDIATELY: "1" });
    const exit = await transport.closed;
    await assert.rejects(transport.write(userLine("late")), (error: unknown) => {
      assert.ok(isDuplexError(error, "process_exited"), String(error));
      assert.deepEqual(error.exit, exit);
      assert.match(
        error.message,
        /^Cannot write to claude: the process has exited \(exit code 0\)/,
      );
      return true;
    });
    await transport.readable.cancel();
  });
  await t.step("writes racing the exit all reject the same way", async () => {
    await using transport = await openFake({ FAKE_CLAUDE_IGNORE_SIGTERM: "1" });
    await transport.write(JSON.stringify({ type: "fake", action: "exit", code: 3 }));
    const big = userLine("y".repeat(100_000));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, () => transport.write(big)),
    );
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") {
        assert.ok(isDuplexError(outcome.reason, "process_exited"), String(outcome.reason));
      }
    }
    await transport.closed;
    await assert.rejects(transport.write("{}"), (error: unknown) => {
      assert.ok(isDuplexError(error, "process_exited"));
      assert.equal(error.exit?.code, 3);
      return true;
    });
    await transport.readable.cancel();
  });
  await t.step("a CLI that closed its stdin: the first failure is kept", async () => {
    // A shell that closes its stdin, then lives on: writes fail with a broken pipe.
    await using transport = await subprocess({
      binary: "sh",
      binaryArgs: ["-c", "exec 0<&-; echo ready; exec sleep 30", "sh"],
      closeGraceMs: 100,
      terminateGraceMs: 2000,
    })({ signal: AbortSignal.timeout(30_000) });
    const reader = transport.readable.getReader();
    await reader.read(); // "ready": stdin is closed by now
    const error = await transport.write("{}").then(() => undefined, (error: unknown) => error);
    assert.ok(isDuplexError(error, "process_exited"), String(error));
    assert.ok(error.cause instanceof Error, String(error.cause));
    assert.equal(error.exit, undefined);
    assert.match(error.message, /^Cannot write to claude: its input is closed \(/);
    await assert.rejects(transport.write("{}"), (later: unknown) => {
      assert.ok(isDuplexError(later, "process_exited"));
      assert.equal(later.cause, error.cause);
      return true;
    });
    const exit = await transport.close();
    assert.equal(exit.signal, "SIGTERM");
    await reader.cancel();
  });
});

Deno.test("Transport.write() checks its input and the input state", async () => {
  await using transport = await openFake();
  await assert.rejects(transport.write("{}\n{}"), (error: unknown) => {
    assert.ok(isDuplexError(error, "invalid_argument"));
    return true;
  });
  await assert.rejects(transport.write(42 as unknown as string), TypeError);
  await transport.endInput();
  for (const when of ["after endInput()", "after the exit"]) {
    await assert.rejects(transport.write("{}"), (error: unknown) => {
      assert.ok(isDuplexError(error, "closed"), `${when}: ${error}`);
      assert.match(error.message, /^Cannot write to claude: its input was ended/);
      return true;
    });
    await transport.closed;
  }
  await transport.readable.cancel();
});

Deno.test("subprocess() rejects with the caller's reason when aborted", async (t) => {
  await t.step("before the spawn", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    await assert.rejects(subprocess(fakeOptions())({ signal: controller.signal }), (error) => {
      assert.equal(error, reason);
      return true;
    });
  });
  await t.step("while the binary is looked up", async () => {
    const controller = new AbortController();
    const opening = subprocess(fakeOptions())({ signal: controller.signal });
    controller.abort("changed my mind");
    await assert.rejects(opening, (error) => {
      assert.equal(error, "changed my mind");
      return true;
    });
  });
});

Deno.test("subprocess() registers open transports for host exit, and only while open", async () => {
  assert.deepEqual(hostExitState(), { members: 0, listening: false });
  const a = await openFake();
  const b = await openFake({}, { hostSignal: "ignore" });
  assert.deepEqual(hostExitState(), { members: 2, listening: true });
  await a.close();
  assert.deepEqual(hostExitState(), { members: 1, listening: true });
  await b.close();
  assert.deepEqual(hostExitState(), { members: 0, listening: false });
  await a.readable.cancel();
  await b.readable.cancel();
});

Deno.test("subprocess() rejects a missing working directory before spawning", async () => {
  await assert.rejects(
    openFake({}, { cwd: `${TEST_TMP}/nonexistent/duplex-claude-test` }),
    (error: unknown) => {
      assert.ok(isDuplexError(error, "invalid_argument"));
      assert.ok(error.message.includes("/nonexistent/duplex-claude-test"), error.message);
      return true;
    },
  );
});

Deno.test("subprocess() runs the CLI in cwd", async () => {
  const dir = await makeTestDir();
  try {
    await using transport = await openFake({ FAKE_CLAUDE_HELLO: "1" }, { cwd: dir });
    const frames = new FrameReader(transport);
    assert.equal((await frames.nextOfType("fake_hello")).cwd, dir);
    await transport.close();
    await frames.rest();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const REAL_CLAUDE = decodeURIComponent(
  new URL(
    "../../../.cache/claude-cli/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
    import.meta.url,
  ).pathname,
);

function realClaudeInstalled(): boolean {
  try {
    return Deno.statSync(REAL_CLAUDE).isFile;
  } catch {
    return false;
  }
}

Deno.test({
  name: "subprocess() reports the real CLI's refusal of an unknown flag",
  ignore: !realClaudeInstalled(),
  fn: async () => {
    const home = await makeTestDir();
    try {
      await using transport = await subprocess({
        binary: REAL_CLAUDE,
        extraArgs: ["--no-such-flag-duplex"],
        env: { HOME: home, DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1" },
      })({ signal: AbortSignal.timeout(30_000) });
      // A write right after the spawn still succeeds: the failure comes with the exit.
      await transport.write(userLine("hi")).catch(() => {});
      const exit = await within(20_000, "closed", transport.closed);
      assert.equal(exit.code, 1);
      assert.match(exit.stderrTail, /error: unknown option '--no-such-flag-duplex'/);
      assert.deepEqual(await new FrameReader(transport).rest(), []);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("subprocess() hands over fresh stdout chunks: a session drops an over-long line and frees it", async (t) => {
  await t.step("info declares freshChunks", async () => {
    await using transport = await openFake();
    assert.equal(transport.info.freshChunks, true);
  });
  await t.step(
    "a 3 MB line over a 1 MiB limit is reported after the frame before it, then the exit",
    async () => {
      // The held pieces of the dropped line are detached (freed) as the session skips it;
      // the line's size is still counted, and the frames after it are intact.
      const { DuplexSession } = await import("../../../src/session/duplex_session.ts");
      await using session = await DuplexSession.start({
        transport: subprocess(fakeOptions({
          FAKE_CLAUDE_FINAL_STDOUT_BYTES: "3000000",
          FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
          FAKE_CLAUDE_HELLO: "1",
        })),
        maxLineBytes: 1_048_576,
      });
      const seen: string[] = [];
      for await (const event of session.subscribe()) {
        if (event.type === "diagnostic") seen.push(`${event.kind} ${event.bytes}`);
        else seen.push(event.type === "unknown" ? event.frameType : event.type);
        if (event.type === "exit") break;
      }
      assert.equal(seen[0], "fake_hello");
      const tooLong = seen.find((entry) => entry.startsWith("line_too_long"));
      assert.ok(tooLong, `no line_too_long in ${seen.join(", ")}`);
      assert.ok(Number(tooLong.split(" ")[1]) > 3_000_000, tooLong);
      assert.equal(seen.at(-1), "exit");
    },
  );
});
