// deno-lint-ignore-file no-console
/**
 * Orphan-free shutdown (issue 6), against the real `claude` CLI and the fake
 * Messages API. In each scenario an allowed Bash tool starts long-running
 * processes of every shape a tool can leave behind, the test records their
 * pids, shuts the session down one way, and then asserts (polling up to 5 s)
 * that none of the recorded pids and no process carrying the session's marker
 * variable (`DUPLEX_CLAUDE_SESSION=<uuid>`, read from the CLI's environment
 * with `ps e`) is left.
 *
 * The shapes ({@linkcode BACKGROUND}), as observed with 2.1.332: the CLI runs
 * each Bash command in a `bash -c` of its own session and process group, so
 * none of these is in the CLI's group, and once the tool's shell has exited
 * the first five are orphans reparented to init:
 * - `plain`: `sleep 300 &`;
 * - `nohup`: `nohup sleep 301 &`;
 * - `double`: double-forked (`sh -c 'sleep 302 &'`, the middle shell exits);
 * - `setsid`: `setsid -f`, in a session of its own;
 * - `stubborn`: ignores SIGTERM (`trap "" TERM` is inherited), so only SIGKILL ends it;
 * - `keeper` and `kept`: a shell that still waits for its `sleep 305` child (a
 *   parent-child pair alive at close, outside the CLI's tree);
 * - and, where said, a tool command STILL RUNNING at the close
 *   (`echo started; sleep 200`: the CLI blocks a standalone `sleep 200`).
 *
 * Scenarios: `session.close()`; SIGTERM and SIGINT to a host program
 * (`_orphan_host.ts`, run with the same permissions as this test: `-A`, or
 * the e2e set without `/proc`) whose registered cleanup
 * (`hostSignal: "close-and-exit"`) ends the CLI and everything marked as its
 * own, synchronously (SIGTERM, a bounded wait, SIGKILL), and exits 143 or
 * 130; the owner `signal` of `DuplexSession.start` aborted; a close while a
 * tool is still running; and the host killed with SIGKILL (below).
 *
 * Two more host shutdowns: a host that awaits its running turn when SIGTERM
 * arrives (its turn would reject as the CLI ends: that rejection must not end
 * the host before the sweep; the synchronous cleanup leaves it no moment to
 * run), and `Deno.exit()` in the host (the `unload` path: nothing
 * asynchronous runs, so the sweep is synchronous, through `ps` when `/proc`
 * is not readable, SIGTERM then SIGKILL). Both left every orphan alive when
 * this suite was written; they are regression tests now.
 *
 * ## When the host is killed with SIGKILL
 *
 * A SIGKILLed host runs no cleanup at all. What happens then is up to the CLI:
 * its stdin pipe closes (end of input). Measured with 2.1.332, 2 shared cores:
 * - an idle CLI exits by itself, 10-120 ms after the kill (8 runs); every
 *   process its tools left (all seven above) survives, reparented to init,
 *   for as long as it would have run (minutes here), since nothing is left to
 *   end it; the test's own marker sweep ends them;
 * - a CLI with a tool still running does NOT exit: it finishes the turn
 *   before it acts on the end of its input, so it stays alive (reparented to
 *   init; seen alive 5 s after the kill) together with the running tool, until
 *   the tool ends (`sleep 200`: 200 s); the orphans survive too.
 * The last test asserts both (and cleans up with the marker sweep). A killed
 * host cannot act; a supervisor that must be orphan-free after a SIGKILL can
 * sweep by the marker variable, which every process the CLI started inherits.
 *
 * @module
 */

import assert from "node:assert/strict";
import { allow, DuplexSession, isDuplexError } from "../../mod.ts";
import { collectText, e2eTest, reap, sandboxedCli, waitUntil, withSandbox } from "./_harness.ts";
import {
  assertNoneLeft,
  isZombie,
  living,
  marked,
  markerOf,
  ps,
  PS_COLUMNS,
  type PsRow,
  psRows,
  show,
} from "./_ps.ts";

/** Bound on every awaited turn. */
const TURN = { timeoutMs: 20_000 } as const;
/** How long the processes may take to be gone after a shutdown. */
const GONE_MS = 5_000;

/** The names the background command prints, one `name=pid` line each. */
const NAMES = ["plain", "nohup", "double", "setsid", "stubborn", "keeper", "kept"] as const;
type Name = typeof NAMES[number];
type Spawned = Record<Name, number>;

/**
 * Starts the background processes and prints their pids. The first command is
 * an `echo`: the CLI blocks a command that starts with a long `sleep`.
 */
const BACKGROUND = [
  "echo start; rm -f kept.pid; sleep 300 >/dev/null 2>&1 & echo plain=$!",
  "nohup sleep 301 >/dev/null 2>&1 & echo nohup=$!",
  "echo double=$(sh -c 'sleep 302 >/dev/null 2>&1 & echo $!')",
  "echo setsid=$(setsid -f sh -c 'echo $$; exec sleep 303 >/dev/null 2>&1')",
  `echo stubborn=$(sh -c 'trap "" TERM; sleep 304 >/dev/null 2>&1 & echo $!')`,
  "sh -c 'sleep 305 >/dev/null 2>&1 & echo $! >kept.pid; wait' >/dev/null 2>&1 & echo keeper=$!",
  "until [ -s kept.pid ]; do :; done; echo kept=$(cat kept.pid)",
].join("; ");

/** A tool command that is still running when the session is shut down. */
const RUNNING = "echo started; sleep 200";
/** How the running command's process shows in `ps`. */
const RUNNING_ARGS = "sleep 200";

/** The host's permissions: the same as this test's (`-A`, or the e2e set, which has no /proc). */
const HOST_PERMISSIONS = Deno.permissions.querySync({ name: "ffi" }).state === "granted"
  ? ["--allow-all"]
  : ["--allow-read", "--allow-write", "--allow-run", "--allow-env", "--allow-net=127.0.0.1"];
const HOST_SCRIPT = decodeURIComponent(new URL("./_orphan_host.ts", import.meta.url).pathname);

// ---------------------------------------------------------------------------
// Processes, seen through `ps` (`_ps.ts`)

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asserts that within {@linkcode GONE_MS} none of `pids` and no process with the marker is alive. */
function assertAllGone(pids: readonly number[], marker: string, what: string): Promise<void> {
  return assertNoneLeft(pids, [marker], what, GONE_MS);
}

/**
 * Kills (SIGKILL) whatever is left: every process with the marker and every
 * recorded pid that still carries a duplex marker (so a reused pid is never
 * hit), then waits (bounded) for them to be gone.
 */
async function cleanUp(marker: string | undefined, pids: readonly number[]): Promise<number> {
  const recorded = new Set(pids);
  const targets = (await marked(undefined)).filter((row) =>
    recorded.has(row.pid) || (marker !== undefined && row.args.includes(`=${marker}`))
  );
  for (const row of targets) {
    try {
      Deno.kill(row.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  const deadline = Date.now() + 2_000;
  while (
    targets.length > 0 && (await living(targets.map((row) => row.pid))).length > 0 &&
    Date.now() < deadline
  ) {
    await delay(25);
  }
  return targets.length;
}

/** Parses the `name=pid` lines of the background command's output. */
function parseSpawned(text: string): Spawned {
  const found = new Map<string, number>();
  for (const match of text.matchAll(/^(\w+)=(\d+)$/gm)) found.set(match[1]!, Number(match[2]));
  const spawned = {} as Spawned;
  for (const name of NAMES) {
    const pid = found.get(name);
    assert.ok(pid !== undefined && pid > 1, `no pid for ${name} in ${JSON.stringify(text)}`);
    spawned[name] = pid;
  }
  return spawned;
}

/**
 * Asserts that every spawned process runs, in the shape described in the
 * module doc: outside the CLI's process group, `setsid` leading its own
 * session, `stubborn` ignoring SIGTERM, `kept` a child of `keeper`.
 */
async function assertShapes(spawned: Spawned, cliPid: number): Promise<void> {
  const columns = PS_COLUMNS.replace("args=", "ignored=");
  const text = await ps(["-o", columns, "-p", Object.values(spawned).join(",")]);
  const rows = new Map<number, PsRow>();
  for (const row of psRows(text)) if (!isZombie(row)) rows.set(row.pid, row);
  for (const name of NAMES) {
    const row = rows.get(spawned[name]);
    assert.ok(row, `${name} (${spawned[name]}) does not run`);
    assert.notEqual(row.pgid, cliPid, `${name} is in the CLI's process group`);
    assert.notEqual(row.ppid, cliPid, `${name} is a direct child of the CLI`);
  }
  const setsid = rows.get(spawned.setsid)!;
  assert.equal(setsid.sid, setsid.pid, "setsid leads its own session");
  // The ignored-signals mask (hex): SIGTERM is signal 15, bit 14.
  const ignored = BigInt(`0x${rows.get(spawned.stubborn)!.args.trim()}`);
  assert.notEqual(ignored & 0x4000n, 0n, "stubborn ignores SIGTERM");
  assert.equal(rows.get(spawned.kept)!.ppid, spawned.keeper, "kept is keeper's child");
}

/** Waits until the running tool command shows in `ps` with the marker. */
async function runningTool(marker: string): Promise<PsRow> {
  let found: PsRow | undefined;
  await waitUntil(
    async () => {
      found = (await marked(marker)).find((row) => row.args.startsWith(`${RUNNING_ARGS} `));
      return found !== undefined;
    },
    `the running tool (${RUNNING_ARGS})`,
    15_000,
  );
  return found!;
}

/** Asserts that the running tool's shell is in a session and group of its own, not the CLI's. */
async function assertOwnSession(tool: PsRow, cliPid: number): Promise<void> {
  const [shell] = await living([tool.ppid]);
  assert.ok(shell, `the tool's shell ${tool.ppid} runs`);
  assert.equal(shell.ppid, cliPid, "the tool's shell is the CLI's child");
  assert.equal(shell.sid, shell.pid, "the tool's shell leads its own session");
  assert.equal(tool.pgid, shell.pid, "the tool runs in its shell's process group");
}

// ---------------------------------------------------------------------------
// Sessions in this process

interface Opened {
  readonly session: DuplexSession;
  readonly cliPid: number;
  readonly marker: string;
  readonly asked: string[];
}

async function open(
  cli: string,
  sandbox: { work: string; env: Record<string, string> },
  recorded: number[],
  signal?: AbortSignal,
): Promise<Opened> {
  const asked: string[] = [];
  const session = await DuplexSession.start({
    transport: sandboxedCli(cli, sandbox),
    onPermission: (request) => {
      asked.push(String(request.input.command));
      return allow();
    },
    ...(signal !== undefined && { signal }),
  });
  try {
    const cliPid = session.pid;
    assert.ok(cliPid !== undefined);
    recorded.push(cliPid);
    return { session, cliPid, marker: await markerOf(cliPid), asked };
  } catch (error) {
    await session.close();
    throw error;
  }
}

/** Runs the background command in an allowed tool call; records and returns the pids. */
async function spawnBackground(opened: Opened, recorded: number[]): Promise<Spawned> {
  const turn = await opened.session.send(`[[tool:bash:${BACKGROUND}]]`, TURN);
  assert.match(turn.result.text, /^Tool said: /, turn.result.text);
  const spawned = parseSpawned(turn.result.text);
  recorded.push(...Object.values(spawned));
  assert.ok(opened.asked.length > 0, "the tool call went through onPermission");
  await assertShapes(spawned, opened.cliPid);
  return spawned;
}

// ---------------------------------------------------------------------------
// Host programs

interface Host {
  readonly child: Deno.ChildProcess;
  /** The next report line (bounded). */
  next(): Promise<Record<string, unknown>>;
  stderr(): string;
  /** Kills the host if it still runs and reaps it; ends the readers. */
  dispose(): Promise<void>;
}

interface HostOrder {
  readonly cli: string;
  readonly work: string;
  readonly env: Record<string, string>;
  readonly command: string;
  readonly running?: string;
  readonly awaitRunning?: boolean;
  readonly exitOnUsr1?: boolean;
}

function startHost(order: HostOrder): Host {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...HOST_PERMISSIONS,
      "--no-config",
      "--quiet",
      HOST_SCRIPT,
      JSON.stringify(order),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  child.status.then(() => exited = true, () => exited = true);
  const errors = collectText(child.stderr);
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    child,
    async next(): Promise<Record<string, unknown>> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Cannot read the host's report within 30 s: ${errors.text()}`)),
          30_000,
        );
      });
      try {
        for (;;) {
          const newline = buffer.indexOf("\n");
          if (newline >= 0) {
            const line = buffer.slice(0, newline);
            buffer = buffer.slice(newline + 1);
            return JSON.parse(line);
          }
          const { done, value } = await Promise.race([reader.read(), expired]);
          if (done) throw new Error(`Cannot read the host's report: it ended; ${errors.text()}`);
          buffer += value;
        }
      } finally {
        clearTimeout(timer);
      }
    },
    stderr: () => errors.text(),
    async dispose(): Promise<void> {
      // A host still running gets the chance to clean up (SIGTERM), then SIGKILL.
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch {
          // Ended meanwhile.
        }
      }
      await reap(child, 10_000);
      await reader.cancel().catch(() => {});
      await errors.done;
    },
  };
}

/** Starts a host, reads its pids; the processes are recorded as soon as they are known. */
async function hostWithProcesses(
  order: HostOrder,
  recorded: number[],
  found: { marker?: string },
): Promise<{ host: Host; cliPid: number; spawned: Spawned; tool: PsRow | undefined }> {
  const host = startHost(order);
  try {
    const first = await host.next();
    const cliPid = first.cli;
    assert.ok(typeof cliPid === "number", JSON.stringify(first));
    recorded.push(cliPid);
    found.marker = await markerOf(cliPid);
    const spawned = parseSpawned(String(first.text));
    recorded.push(...Object.values(spawned));
    await assertShapes(spawned, cliPid);
    let tool: PsRow | undefined;
    assert.deepEqual(await host.next(), { waiting: true });
    if (order.running !== undefined) {
      tool = await runningTool(found.marker);
      recorded.push(tool.pid, tool.ppid);
    }
    return { host, cliPid, spawned, tool };
  } catch (error) {
    await host.dispose();
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Scenarios

e2eTest("orphans: session.close() leaves no process behind", async (_t, cli) => {
  await withSandbox(async (sandbox) => {
    const recorded: number[] = [];
    let opened: Opened | undefined;
    try {
      opened = await open(cli, sandbox, recorded);
      await spawnBackground(opened, recorded);
      const status = await opened.session.close();
      assert.equal(status.state, "completed", JSON.stringify(status));
      await assertAllGone(recorded, opened.marker, "after session.close()");
    } finally {
      await opened?.session.close();
      await cleanUp(opened?.marker, recorded);
    }
  });
});

e2eTest("orphans: a close while a tool command is still running", async (_t, cli) => {
  await withSandbox(async (sandbox) => {
    const recorded: number[] = [];
    let opened: Opened | undefined;
    try {
      opened = await open(cli, sandbox, recorded);
      const running = opened.session.send(`[[tool:bash:${RUNNING}]]`, TURN);
      const settled = running.then(() => undefined, (error: unknown) => error);
      const tool = await runningTool(opened.marker);
      recorded.push(tool.pid, tool.ppid);
      // Why a signal to the CLI's group cannot reach it: its own session and group.
      await assertOwnSession(tool, opened.cliPid);
      const status = await opened.session.close();
      assert.notEqual(status.state, "running");
      await assertAllGone(recorded, opened.marker, "after a close during a running tool");
      const error = await settled;
      assert.ok(isDuplexError(error), `the running turn rejects with a DuplexError, got ${error}`);
    } finally {
      await opened?.session.close();
      await cleanUp(opened?.marker, recorded);
    }
  });
});

e2eTest("orphans: aborting the owner signal of DuplexSession.start", async (_t, cli) => {
  await withSandbox(async (sandbox) => {
    const recorded: number[] = [];
    const owner = new AbortController();
    let opened: Opened | undefined;
    try {
      opened = await open(cli, sandbox, recorded, owner.signal);
      await spawnBackground(opened, recorded);
      const running = opened.session.send(`[[tool:bash:${RUNNING}]]`, TURN);
      const settled = running.then(() => undefined, (error: unknown) => error);
      const tool = await runningTool(opened.marker);
      recorded.push(tool.pid, tool.ppid);
      owner.abort(new Error("The e2e owner is done"));
      const status = await opened.session.waitForExit({ timeoutMs: 15_000 });
      assert.notEqual(status.state, "running");
      assert.equal(opened.session.alive, false);
      await assertAllGone(recorded, opened.marker, "after the owner signal aborted");
      assert.ok(isDuplexError(await settled), "the running turn rejects");
    } finally {
      // The same close the abort started: waits for the whole ladder (sanitizers).
      await opened?.session.close();
      await cleanUp(opened?.marker, recorded);
    }
  });
});

e2eTest("orphans: the host program receives SIGTERM or SIGINT", async (t, cli) => {
  await withSandbox(async ({ work, env }) => {
    const base = { cli, work, env, command: BACKGROUND, running: RUNNING };

    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      await t.step(
        `${signal}: its cleanup ends the CLI's processes and exits ${code}`,
        async () => {
          const recorded: number[] = [];
          const found: { marker?: string } = {};
          let host: Host | undefined;
          try {
            const started = await hostWithProcesses(base, recorded, found);
            host = started.host;
            await assertOwnSession(started.tool!, started.cliPid);
            host.child.kill(signal);
            const { status, killed } = await reap(host.child, 20_000);
            assert.equal(killed, false, `the host did not exit: ${host.stderr()}`);
            assert.equal(status.code, code, host.stderr());
            await assertAllGone(recorded, found.marker!, `after ${signal} to the host`);
          } finally {
            await host?.dispose();
            await cleanUp(found.marker, recorded);
          }
        },
      );
    }

    await t.step({
      name: "a host that awaits its running turn (uncaught rejection)",
      fn: async () => {
        const recorded: number[] = [];
        const found: { marker?: string } = {};
        let host: Host | undefined;
        try {
          const started = await hostWithProcesses(
            { ...base, awaitRunning: true },
            recorded,
            found,
          );
          host = started.host;
          host.child.kill("SIGTERM");
          const { status, killed } = await reap(host.child, 20_000);
          assert.equal(killed, false, `the host did not exit: ${host.stderr()}`);
          await assertAllGone(recorded, found.marker!, "after SIGTERM to an awaiting host");
          assert.equal(status.code, 143, host.stderr());
        } finally {
          await host?.dispose();
          await cleanUp(found.marker, recorded);
        }
      },
    });

    await t.step({
      name: "Deno.exit() in the host (unload)",
      fn: async () => {
        const recorded: number[] = [];
        const found: { marker?: string } = {};
        let host: Host | undefined;
        try {
          const started = await hostWithProcesses(
            { cli, work, env, command: BACKGROUND, exitOnUsr1: true },
            recorded,
            found,
          );
          host = started.host;
          host.child.kill("SIGUSR1");
          const { status, killed } = await reap(host.child, 20_000);
          assert.equal(killed, false, `the host did not exit: ${host.stderr()}`);
          assert.equal(status.code, 0, host.stderr());
          await assertAllGone(recorded, found.marker!, "after Deno.exit() in the host");
        } finally {
          await host?.dispose();
          await cleanUp(found.marker, recorded);
        }
      },
    });
  });
});

e2eTest("orphans: the host killed with SIGKILL (documented: no cleanup)", async (t, cli) => {
  await withSandbox(async ({ work, env }) => {
    await t.step("an idle CLI exits by itself; the orphans survive until swept", async () => {
      const recorded: number[] = [];
      const found: { marker?: string } = {};
      let host: Host | undefined;
      try {
        const started = await hostWithProcesses(
          { cli, work, env, command: BACKGROUND },
          recorded,
          found,
        );
        host = started.host;
        const killedAt = performance.now();
        host.child.kill("SIGKILL");
        const { status } = await reap(host.child, 5_000);
        assert.equal(status.signal, "SIGKILL");
        // The CLI sees its stdin close and, being idle, exits by itself.
        let cliExitMs = 0;
        await waitUntil(
          async () => {
            cliExitMs = Math.round(performance.now() - killedAt);
            return (await living([started.cliPid])).length === 0;
          },
          "the CLI exit after its host was SIGKILLed",
          GONE_MS,
        );
        // Its tools' processes do not: nothing is left to end them.
        await delay(1_000);
        const survivors = await marked(found.marker!);
        const spawnedPids = Object.values(started.spawned);
        assert.deepEqual(
          survivors.map((row) => row.pid).sort((a, b) => a - b),
          [...spawnedPids].sort((a, b) => a - b),
          `survivors:\n  ${survivors.map(show).join("\n  ")}`,
        );
        const aliveMs = Math.round(performance.now() - killedAt);
        console.error(
          `  measured: host SIGKILLed; the CLI exited by itself after ~${cliExitMs} ms; ` +
            `${survivors.length} processes survived (${NAMES.join(", ")}), still alive after ` +
            `${aliveMs} ms, until the test's marker sweep`,
        );
        assert.equal(await cleanUp(found.marker, recorded), spawnedPids.length);
        await assertAllGone(recorded, found.marker!, "after the test's marker sweep");
      } finally {
        await host?.dispose();
        await cleanUp(found.marker, recorded);
      }
    });

    await t.step("a CLI with a running tool stays alive with it", async () => {
      const recorded: number[] = [];
      const found: { marker?: string } = {};
      let host: Host | undefined;
      try {
        const started = await hostWithProcesses(
          { cli, work, env, command: BACKGROUND, running: RUNNING },
          recorded,
          found,
        );
        host = started.host;
        host.child.kill("SIGKILL");
        const { status } = await reap(host.child, 5_000);
        assert.equal(status.signal, "SIGKILL");
        await delay(1_500);
        // The CLI finishes the turn before it acts on the end of its input: the tool runs on.
        const [cliRow] = await living([started.cliPid]);
        assert.ok(cliRow, "the CLI is still alive 1.5 s after its host was SIGKILLed");
        assert.notEqual(cliRow.ppid, host.child.pid, "the CLI was reparented");
        assert.equal((await living([started.tool!.pid])).length, 1, "the running tool runs on");
        assert.equal((await living(Object.values(started.spawned))).length, NAMES.length);
        await cleanUp(found.marker, recorded);
        await assertAllGone(recorded, found.marker!, "after the test's marker sweep");
      } finally {
        await host?.dispose();
        await cleanUp(found.marker, recorded);
      }
    });
  });
});
