/*
 * Regression tests of issue 20, defect 4: `close()` racing the CLI's own exit
 * with code 1 once gave an exit status of `completed`. The status says what
 * the CLI did, whoever wins the race: an exit of its own (code 1 here) is
 * `failed` with its code; an end the close caused (stdin EOF, then SIGTERM,
 * then SIGKILL) is `completed`, with the code or signal it ended with.
 *
 * The stand-in exits with code 1 on a command; its exit at stdin EOF is 0
 * (or FAKE_CLAUDE_EXIT_CODE), so every exit 1 below is its own unless a
 * step sets FAKE_CLAUDE_EXIT_CODE.
 */
import assert from "node:assert/strict";
import { DuplexSession, type ExitStatus, isDuplexError, type Transport } from "../../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { CliProcess } from "../../../adapters/subprocess/_cli_process.ts";
import { climbCloseLadder } from "../../../adapters/subprocess/_close_ladder.ts";
import { denoRunArgs, FAKE_CLAUDE, fakeOptions, within } from "./_helpers.ts";

/** Rounds of each race (each spawns one stand-in). */
const ROUNDS = 8;
/** The stand-in's command to exit now with code 1. */
const EXIT_1 = JSON.stringify({ type: "fake", action: "exit", code: 1 });
/** Bound on every wait of a round. */
const LIMIT_MS = 20_000;

/** How the test wraps the transport: what happens on the way to the session. */
interface Wrap {
  /** Called when the transport's `closed` resolved, before the session hears of it. */
  onClosed?: (session: DuplexSession) => void;
  /** Called when the session has read the CLI's output to its end. */
  onOutputEnd?: (session: DuplexSession) => void;
  /** Replaces the transport's `close()` (the session's close calls it). */
  close?: (inner: Transport) => Promise<Awaited<Transport["closed"]>>;
}

interface Rig {
  readonly session: DuplexSession;
  readonly transport: Transport;
}

async function startRig(
  env: Record<string, string> = {},
  wrap: Wrap = {},
  extra: SubprocessOptions = {},
): Promise<Rig> {
  const open = subprocess(fakeOptions(env, extra));
  const made: { transport?: Transport; session?: DuplexSession } = {};
  const session = await DuplexSession.start({
    transport: async (context) => {
      const transport = await open(context);
      made.transport = transport;
      const closed = transport.closed.then((exit) => {
        if (made.session) wrap.onClosed?.(made.session);
        return exit;
      });
      const { onOutputEnd } = wrap;
      const readable = onOutputEnd
        ? transport.readable.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            flush: () => {
              if (made.session) onOutputEnd(made.session);
            },
          }),
        )
        : transport.readable;
      return {
        readable,
        ...(transport.stderr ? { stderr: transport.stderr } : {}),
        info: transport.info,
        closed,
        write: (line) => transport.write(line),
        endInput: () => transport.endInput(),
        close: () => wrap.close ? wrap.close(transport) : transport.close(),
        [Symbol.asyncDispose]: async () => void await transport.close(),
      };
    },
  });
  made.session = session;
  assert.ok(made.transport);
  return { session, transport: made.transport };
}

/** Asserts a status of the CLI's own exit with code 1. */
function assertOwnExit1(status: ExitStatus, round: number): void {
  const where = `round ${round}: ${JSON.stringify(status)}`;
  assert.equal(status.state, "failed", where);
  assert.ok(status.state === "failed");
  assert.equal(status.code, 1, where);
  assert.equal(status.signal, null, where);
  assert.equal(status.exit.requested, false, where);
  assert.ok(isDuplexError(status.error, "process_exited"), where);
  assert.match(status.error.message, /exit code 1/, where);
}

Deno.test("DuplexSession.close() racing the CLI's own exit 1 reports failed, code 1", async (t) => {
  await t.step("the exit reached the transport, the session has not handled it yet", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      let closing: Promise<ExitStatus> | undefined;
      const { session, transport } = await startRig({}, {
        onClosed: (s) => closing = s.close(),
      });
      await transport.write(EXIT_1);
      const status = await within(LIMIT_MS, "the exit", session.waitForExit());
      assert.ok(closing, "close() was called before the session saw the exit");
      assert.equal(await within(LIMIT_MS, "close()", closing), status);
      assertOwnExit1(status, round);
      assert.equal(session.state, "failed");
    }
  });

  await t.step("the CLI's output ended (it is gone), its exit not yet reaped", async () => {
    for (let round = 0; round < 3 * ROUNDS; round++) {
      let closing: Promise<ExitStatus> | undefined;
      const { session, transport } = await startRig({}, {
        onOutputEnd: (s) => closing = s.close(),
      });
      await transport.write(EXIT_1);
      const status = await within(LIMIT_MS, "the exit", session.waitForExit());
      assert.ok(closing, "close() was called at the end of the output");
      assert.equal(await within(LIMIT_MS, "close()", closing), status);
      assertOwnExit1(status, round);
    }
  });

  await t.step("close() first, the CLI exits before the close reaches it", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // A transport whose close() is slow to act (a relay's close on its way, say):
      // the CLI's own exit comes first.
      const { session, transport } = await startRig({}, {
        close: (inner) => inner.closed.then(() => inner.close()),
      });
      await transport.write(EXIT_1);
      const status = await within(LIMIT_MS, "close()", session.close());
      assertOwnExit1(status, round);
    }
  });

  await t.step("close() in the same tick as the exit command", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { session, transport } = await startRig();
      await transport.write(EXIT_1);
      const status = await within(LIMIT_MS, "close()", session.close());
      // The CLI read its exit command before the EOF: code 1 whoever won. Its exit is
      // the close's only when it came after the close ended its input (then it may
      // well have been the EOF's doing: the real CLI exits 1 at EOF after an
      // interrupted turn), and the state says so.
      const where = `round ${round}: ${JSON.stringify(status)}`;
      assert.ok(status.state !== "running", where);
      assert.equal(status.code, 1, where);
      assert.equal(status.state, status.exit.requested ? "completed" : "failed", where);
      if (status.state === "failed") assertOwnExit1(status, round);
    }
  });

  await t.step("the CLI exited long before close()", async () => {
    const { session, transport } = await startRig();
    await transport.write(EXIT_1);
    await within(LIMIT_MS, "the exit", session.waitForExit());
    assertOwnExit1(await within(LIMIT_MS, "close()", session.close()), 0);
  });
});

Deno.test("DuplexSession.close() that ends the CLI reports completed", async (t) => {
  const cases: [string, Record<string, string>, { code: number | null; signal: string | null }][] =
    [
      ["stdin EOF, exit 0", {}, { code: 0, signal: null }],
      ["stdin EOF, exit 1 (as the real CLI after an interrupted turn)", {
        FAKE_CLAUDE_EXIT_CODE: "1",
      }, { code: 1, signal: null }],
      ["SIGTERM", { FAKE_CLAUDE_IGNORE_EOF: "1" }, { code: 143, signal: "SIGTERM" }],
      ["SIGKILL", { FAKE_CLAUDE_IGNORE_EOF: "1", FAKE_CLAUDE_IGNORE_SIGTERM: "1" }, {
        code: 137,
        signal: "SIGKILL",
      }],
    ];
  for (const [name, env, expected] of cases) {
    await t.step(name, async () => {
      const { session } = await startRig({ ...env, FAKE_CLAUDE_HELLO: "1" }, {}, {
        closeGraceMs: 300,
        terminateGraceMs: 300,
      });
      const events = session.subscribe();
      for await (const event of events) if (event.type === "unknown") break; // the hello
      const status = await within(LIMIT_MS, "close()", session.close());
      assert.equal(status.state, "completed", JSON.stringify(status));
      assert.ok(status.state === "completed");
      assert.deepEqual({ code: status.code, signal: status.signal }, expected);
      assert.equal(status.exit.requested, true);
      assert.equal(session.state, "closed");
    });
  }
});

Deno.test("CliProcess: an exit Deno reported before the close began is the CLI's own", async () => {
  for (let round = 0; round < 3; round++) {
    const child = new Deno.Command(Deno.execPath(), {
      args: denoRunArgs(FAKE_CLAUDE),
      env: { FAKE_CLAUDE_EXIT_IMMEDIATELY: "1", FAKE_CLAUDE_EXIT_CODE: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const process = new CliProcess(child, crypto.randomUUID());
    const writer = child.stdin.getWriter();
    const drained = Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
    const input = {
      outputEnded: () => false,
      end: () => void writer.close().catch(() => {}),
      tearDown: () => void writer.abort().catch(() => {}),
    };
    // Bounded by a kill (a race of `within` would add reactions before this one).
    const guard = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
    await child.status; // the first reaction after CliProcess's own: the exit has just arrived
    clearTimeout(guard);
    await within(
      LIMIT_MS,
      "the close",
      climbCloseLadder(process, input, {
        closeGraceMs: 1000,
        terminateGraceMs: 1000,
      }),
    );
    await drained;
    assert.deepEqual(process.state.life, { state: "exited", requested: false }, `round ${round}`);
    assert.deepEqual(await process.status, { code: 1, signal: null });
  }
});
