/**
 * `isolation: "bubblewrap"` on the real CLI 2.1.332, against the fake
 * Messages API:
 *
 * - two tenants under one root, each its own `HOME`, config folder and
 *   workspace, run by a host program that holds a secret in its own
 *   environment (`_isolation_host.ts`, as a relay would): tenant alice
 *   approves `Bash(cat <bob's transcript>)`, `Read(<bob's transcript>)`,
 *   `Bash(env)`, `Bash(cat /proc/[0-9]*\/environ …)`, `Read(<the root>)`,
 *   `Bash(ls -a <the root>)`, `Bash(ls /)` and `Bash(ps)`, and what reached
 *   the model holds nothing of bob's and no secret of the host; the same
 *   calls without the sandbox do leak both (so the checks can fail);
 * - exit status, stderr, close, the process-group cleanup (SIGTERM too),
 *   `--resume`, a resume from a session store (its materialised config
 *   folder) and the private settings file, inside the sandbox;
 * - a host killed with SIGKILL takes the sandbox with it (`--die-with-parent`);
 * - the CLI's own `sandbox` setting on the real binary, on the host and
 *   nested in ours.
 *
 * Where `bwrap` is missing each test is IGNORED (loudly), and FAILS under
 * `CI=true` (`tests/_unavailable.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { allow, DuplexSession, InMemorySessionStore, isDuplexError } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { unavailableStep, unavailableTest } from "../_unavailable.ts";
import { e2eTest, exists, FrameReader, reap, sandboxEnv } from "./_harness.ts";
import { type FakeApi, sentToModel, startFakeApi } from "./fake_api.ts";
import type { Order, StepReport, Tenant } from "./_isolation_host.ts";
import { assertNoneLeft, marked, markerOf } from "./_ps.ts";

const TURN = { timeoutMs: 30_000 } as const;
/** A command line of the CLI itself (bwrap's also names it, after its own flags). */
const IS_CLI = /^\S*claude\.exe --output-format/;
const SECRET = "topsecret";
const HOST_SCRIPT = decodeURIComponent(new URL("./_isolation_host.ts", import.meta.url).pathname);
/** The host's permissions: the same as this test's (`-A`, or the e2e set). */
const HOST_PERMISSIONS = Deno.permissions.querySync({ name: "ffi" }).state === "granted"
  ? ["--allow-all"]
  : ["--allow-read", "--allow-write", "--allow-run", "--allow-env", "--allow-net=127.0.0.1"];

/** Every process's environment and command line the tenant can read, the variables of interest. */
const PROC_ENVIRON =
  "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | " +
  "grep -e SECRETS -e TENANT_TOKEN";
/** The environment of the tool's shell and its nearest ancestors (the CLI, its host above). */
const ANCESTORS = 'p=$$; for i in 1 2 3 4 5; do [ "$p" -gt 0 ] || break; ' +
  "tr '\\0' '\\n' </proc/$p/environ; p=$(grep '^PPid' /proc/$p/status | cut -f2); done";

/** Where a program is on PATH, if it is. */
function onPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":").filter(Boolean)) {
    try {
      if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** An e2e test that needs `bwrap`: IGNORED without it (FAILS under CI=true). */
function isolationTest(name: string, fn: (t: Deno.TestContext, cli: string) => Promise<void>) {
  if (onPath("bwrap") === undefined) {
    unavailableTest(name, "bwrap (bubblewrap) is not on PATH; apt-get install bubblewrap");
    return;
  }
  e2eTest(name, fn);
}

/** A root folder with one folder per tenant (home, config, work), and a fake API each. */
async function withTenants<T>(
  names: readonly string[],
  fn: (root: string, tenants: Record<string, Tenant & { api: FakeApi }>) => Promise<T>,
): Promise<T> {
  const root = await Deno.makeTempDir({ prefix: "duplex-tenants-" });
  const tenants: Record<string, Tenant & { api: FakeApi }> = {};
  try {
    for (const name of names) {
      const dir = `${root}/${name}`;
      const api = await startFakeApi();
      tenants[name] = {
        api,
        home: `${dir}/home`,
        config: `${dir}/config`, // missing: the sandbox makes it
        work: `${dir}/work`,
        env: {
          ...sandboxEnv(api, `${dir}/home`),
          TENANT_TOKEN: `${name}-env-${crypto.randomUUID()}`,
        },
      };
      await Deno.mkdir(`${dir}/home`, { recursive: true });
      await Deno.mkdir(`${dir}/work`, { recursive: true });
    }
    return await fn(root, tenants);
  } finally {
    for (const tenant of Object.values(tenants)) await tenant.api.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

/** Starts the host program with the secret in its environment. */
function startHost(order: Order): Deno.ChildProcess {
  const tenants: Record<string, Tenant> = {};
  for (const [name, { home, config, work, env }] of Object.entries(order.tenants)) {
    tenants[name] = { home, config, work, env };
  }
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...HOST_PERMISSIONS, HOST_SCRIPT, JSON.stringify({ ...order, tenants })],
    env: { DUPLEX_RELAY_SECRETS: SECRET },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs the host to its end; its step reports. */
async function runHost(order: Order): Promise<StepReport[]> {
  const child = startHost(order);
  const [{ status, killed }, stdout, stderr] = await Promise.all([
    reap(child, 150_000),
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  assert.ok(status.success && !killed, `the host failed (${status.code}): ${stderr.slice(-3000)}`);
  const lines = stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines.at(-1), { done: true }, stdout);
  return lines.slice(0, -1) as StepReport[];
}

/** What the model received back from every tool call. */
function toolResults(api: FakeApi): string {
  return api.requests.flatMap((r) => r.toolResults.map((result) => result.content)).join("\n");
}

/** The top-level entries `ls /` shows inside the sandbox. */
function sandboxRoot(cli: string): string[] {
  const names = new Set(["dev", "etc", "proc", "tmp", "usr"]);
  for (const dir of ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]) {
    try {
      Deno.lstatSync(`/${dir}`);
      names.add(dir);
    } catch {
      // Not on this host.
    }
  }
  names.add(cli.split("/")[1]!); // the top of the program's folder
  return [...names].sort();
}

isolationTest(
  "isolation bubblewrap: a tenant approving Bash and Read sees nothing of another tenant nor of the host's secrets",
  async (t, cli) => {
    const bobMark = `BOB-PRIVATE-${crypto.randomUUID()}`;
    const run = (isolation: Order["isolation"]) =>
      withTenants(["alice", "bob"], async (root, tenants) => {
        const alice = (prompt: string) => ({ tenant: "alice", prompt });
        const reports = await runHost({
          cli,
          isolation,
          tenants,
          steps: [
            { tenant: "bob", prompt: `Remember ${bobMark}` },
            alice("[[tool:bash:cat {{bob.transcript}}]]"),
            alice("[[tool:read:{{bob.transcript}}]]"),
            alice("[[tool:bash:env]]"),
            alice(`[[tool:bash:${PROC_ENVIRON}]]`),
            alice(`[[tool:bash:${ANCESTORS}]]`),
            alice(`[[tool:read:${root}]]`),
            alice(`[[tool:bash:ls -1a ${root}]]`),
            alice("[[tool:bash:ls -1 /]]"),
            alice("[[tool:bash:ps -eo pid,args]]"),
          ],
        });
        return {
          reports,
          configMode: (await Deno.stat(tenants.alice!.config)).mode! & 0o777,
          received: toolResults(tenants.alice!.api),
          bobToken: tenants.bob!.env.TENANT_TOKEN!,
          aliceToken: tenants.alice!.env.TENANT_TOKEN!,
          bobTranscript: await Deno.readTextFile(reports[1]!.prompt.split("cat ")[1]!.slice(0, -2)),
        };
      });

    await t.step(
      "in the sandbox, nothing of bob's nor of the host's reaches alice's model",
      async () => {
        const { reports, received, bobToken, aliceToken, bobTranscript, configMode } = await run(
          "bubblewrap",
        );
        assert.equal(configMode, 0o700, "the missing config folder was made, private");
        assert.ok(bobTranscript.includes(bobMark), "bob's transcript holds his mark");
        assert.equal(reports.length, 10);
        assert.ok(received.includes(aliceToken), "alice's commands ran and read her own variables");
        for (const leak of [bobMark, bobToken, SECRET, "DUPLEX_RELAY_SECRETS"]) {
          assert.ok(!received.includes(leak), `${leak} reached alice's model:\n${received}`);
        }
        const text = (i: number): string => reports[i]!.text;
        assert.match(text(1), /No such file or directory/);
        assert.deepEqual(
          text(7).replace(/^Tool said: /, "").trim().split("\n"),
          [".", "..", "alice"],
          "the root shows only alice's own folder",
        );
        assert.deepEqual(
          text(8).replace(/^Tool said: /, "").trim().split("\n").sort(),
          sandboxRoot(cli),
          "ls / shows the sandbox's view",
        );
        const clis = text(9).split("\n").filter((line) =>
          IS_CLI.test(line.replace(/^\s*\d+\s+/, ""))
        );
        assert.equal(clis.length, 1, `ps shows alice's CLI only:\n${text(9)}`);
      },
    );

    await t.step("without the sandbox the same calls leak (the checks can fail)", async () => {
      const { received, bobToken } = await run("none");
      assert.ok(received.includes(bobMark), "bob's transcript was readable");
      assert.ok(received.includes(SECRET), "the host's environment was readable in /proc");
      assert.ok(received.includes(bobToken), "bob's CLI's environment was readable in /proc");
    });
  },
);

/** A tenant-like folder and fake API for one scenario, removed afterwards. */
async function withFolder<T>(
  fn: (box: { root: string; api: FakeApi; env: Record<string, string> }) => Promise<T>,
): Promise<T> {
  const root = await Deno.makeTempDir({ prefix: "duplex-isolated-" });
  await Deno.mkdir(`${root}/home`);
  await Deno.mkdir(`${root}/work`);
  const api = await startFakeApi();
  try {
    return await fn({ root, api, env: sandboxEnv(api, `${root}/home`) });
  } finally {
    await api.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

function sandboxed(
  cli: string,
  box: { root: string; env: Record<string, string> },
  options: SubprocessOptions = {},
): SubprocessOptions {
  return {
    pathToClaudeCodeExecutable: cli,
    cwd: `${box.root}/work`,
    env: box.env,
    isolation: "bubblewrap",
    ...options,
  };
}

isolationTest(
  "isolation bubblewrap: exit status, stderr, cleanup of the process group, --resume and private files",
  async (t, cli) => {
    await withFolder(async (box) => {
      const { api } = box;
      await t.step("a turn, then a close: the CLI exits 0 by itself", async () => {
        await using session = await DuplexSession.start({
          transport: subprocess(sandboxed(cli, box)),
        });
        const turn = await session.send("hello from the sandbox", TURN);
        assert.equal(turn.result.text, "Echo: hello from the sandbox");
        await session.close();
        const status = session.exitStatus;
        assert.deepEqual(status.state === "running" ? undefined : status.exit, {
          code: 0,
          signal: null,
          stderrTail: "",
          requested: true,
        });
      });

      await t.step(
        "the CLI runs as nobody, with no capabilities: the system stays read-only",
        async () => {
          await using session = await DuplexSession.start({
            transport: subprocess(sandboxed(cli, box)),
            onPermission: () => allow(),
          });
          const probe = "echo uid=$(id -u); grep -E '^Cap(Eff|Bnd)' /proc/self/status; " +
            "mount -o remount,rw,bind /usr 2>/dev/null && echo REMOUNTED; " +
            "touch /usr/duplex-probe 2>/dev/null && echo WROTE; echo probed";
          const turn = await session.send(`[[tool:bash:${probe}]]`, TURN);
          const wrote = await exists("/usr/duplex-probe");
          if (wrote) await Deno.remove("/usr/duplex-probe"); // a regression wrote the host's /usr
          const text = turn.result.text;
          assert.match(text, /uid=65534/);
          assert.match(text, /CapEff:\s+0+\n/);
          assert.match(text, /CapBnd:\s+0+\n/);
          assert.match(text, /probed/);
          assert.doesNotMatch(text, /REMOUNTED|WROTE/);
          assert.equal(wrote, false, "the host's /usr was written");
        },
      );

      await t.step(
        "the sandbox outlives 12 s of idle (--die-with-parent follows the spawning thread)",
        async () => {
          await using session = await DuplexSession.start({
            transport: subprocess(sandboxed(cli, box)),
          });
          await session.send("before the idle", TURN);
          await new Promise((resolve) => setTimeout(resolve, 12_000));
          const turn = await session.send("after the idle", TURN);
          assert.equal(turn.result.text, "Echo: after the idle");
          assert.equal(session.exitStatus.state, "running");
        },
      );

      await t.step("a CLI that refuses its flags: exit code 1 and its stderr", async () => {
        await using session = await DuplexSession.start({
          transport: subprocess(sandboxed(cli, box, { extraArgs: ["--no-such-flag"] })),
        });
        await assert.rejects(session.send("hello", TURN), (error: unknown) => {
          assert.ok(isDuplexError(error, "process_exited"), String(error));
          assert.equal(error.exit?.code, 1);
          assert.match(error.exit?.stderrTail ?? "", /unknown option '--no-such-flag'/);
          return true;
        });
      });

      for (const [how, closeGraceMs] of [["stdin EOF", 2000], ["SIGTERM", 0]] as const) {
        await t.step(
          `a close (${how}) ends the CLI and every process its tools started`,
          async () => {
            await using session = await DuplexSession.start({
              transport: subprocess(sandboxed(cli, box, { closeGraceMs })),
              onPermission: () => allow(),
            });
            const background =
              "echo start; sleep 311 >/dev/null 2>&1 & setsid -f sleep 312 >/dev/null 2>&1; " +
              `nohup sh -c 'trap "" TERM; sleep 313' >/dev/null 2>&1 & echo started`;
            const turn = await session.send(`[[tool:bash:${background}]]`, TURN);
            assert.match(turn.result.text, /started/);
            const pid = session.pid!;
            const marker = await markerOf(pid);
            const rows = await marked(marker);
            for (const sleep of ["sleep 311", "sleep 312", "sleep 313"]) {
              assert.ok(rows.some((row) => row.args.startsWith(sleep)), `${sleep} runs`);
            }
            const claude = rows.find((row) => IS_CLI.test(row.args));
            assert.equal(claude?.pgid, pid, "the CLI is in bwrap's process group");
            await session.close();
            const status = session.exitStatus;
            const exit = status.state === "running" ? undefined : status.exit;
            if (closeGraceMs === 0) assert.equal(exit?.signal, "SIGTERM", JSON.stringify(exit));
            else assert.equal(exit?.code, 0, JSON.stringify(exit));
            await assertNoneLeft([pid], [marker], `after a close (${how})`, 5_000);
          },
        );
      }

      let sessionId = "";
      await t.step("--resume: the resumed CLI sends the history", async () => {
        {
          await using session = await DuplexSession.start({
            transport: subprocess(sandboxed(cli, box)),
          });
          await session.send("Remember the word heron.", TURN);
          sessionId = session.sessionId!;
        }
        const from = api.messageRequests.length;
        await using session = await DuplexSession.start({
          transport: subprocess(sandboxed(cli, box, { resume: sessionId })),
        });
        await session.send("Which bird?", TURN);
        assert.equal(session.sessionId, sessionId);
        assert.ok(sentToModel(api, from).includes("heron"), "the model sees the history");
      });

      await t.step("a resume from a session store, into a fresh HOME", async () => {
        const store = new InMemorySessionStore();
        let id = "";
        {
          await using session = await DuplexSession.start({
            transport: subprocess(sandboxed(cli, box, { sessionStore: store })),
          });
          await session.send("Remember the word kestrel.", TURN);
          id = session.sessionId!;
        }
        const other = `${box.root}/other-home`;
        await Deno.mkdir(other);
        const from = api.messageRequests.length;
        await using session = await DuplexSession.start({
          transport: subprocess(sandboxed(cli, { ...box, env: { ...box.env, HOME: other } }, {
            sessionStore: store,
            resume: id,
          })),
        });
        await session.send("Which bird now?", TURN);
        assert.ok(sentToModel(api, from).includes("kestrel"), "the model sees the stored history");
        assert.equal(await exists(`${other}/.claude/projects`), false, "a private copy was used");
      });

      await t.step(
        "settings given as an object reach the CLI through the private file",
        async () => {
          await using session = await DuplexSession.start({
            transport: subprocess(sandboxed(cli, box, {
              settings: { env: { FROM_SETTINGS: "settings-file-read" } },
            })),
            onPermission: () => allow(),
          });
          const turn = await session.send("[[tool:bash:echo value=$FROM_SETTINGS]]", TURN);
          assert.match(turn.result.text, /value=settings-file-read/);
        },
      );
    });
  },
);

isolationTest(
  "isolation bubblewrap: a host killed with SIGKILL takes its sandboxed CLI and the CLI's processes with it",
  async (_t, cli) => {
    await withTenants(["alice"], async (_root, tenants) => {
      const child = startHost({
        cli,
        isolation: "bubblewrap",
        tenants,
        steps: [{
          tenant: "alice",
          prompt: "[[tool:bash:setsid -f sleep 321 >/dev/null 2>&1; echo started]]",
        }],
        hold: "echo running; sleep 322",
      });
      const reader = new FrameReader(child.stdout);
      const stderr = new Response(child.stderr).text();
      let pid = 0;
      let marker = "";
      try {
        const step = await reader.next((frame) => typeof frame.pid === "number", 60_000);
        pid = step.pid as number;
        marker = await markerOf(pid);
        await reader.next((frame) => frame.waiting === true, 30_000);
        const rows = await marked(marker);
        assert.ok(rows.some((row) => row.args.startsWith("sleep 321")), "the tool's process runs");
        child.kill("SIGKILL");
        await reap(child, 5_000);
        await assertNoneLeft([pid], [marker], "after the host was killed", 5_000);
      } finally {
        try {
          child.kill("SIGKILL");
        } catch {
          // Gone.
        }
        await reap(child, 5_000);
        await reader.done;
        await stderr;
      }
    });
  },
);

isolationTest(
  "the CLI's own sandbox setting on the real binary: a sandboxed Bash command cannot write outside its folder",
  async (t, cli) => {
    if (onPath("socat") === undefined) {
      await unavailableStep(t, "the CLI's sandbox", "socat is not on PATH; apt-get install socat");
      return;
    }
    await withFolder(async (box) => {
      const outside = `${box.root}/outside`;
      await Deno.mkdir(outside);
      const inFile = `${box.root}/work/in.txt`;
      const outFile = `${outside}/out.txt`;
      const sandbox = {
        enabled: true,
        autoAllowBashIfSandboxed: true,
        allowUnsandboxedCommands: false,
      };
      /* Runs two touches; tells what each printed and which files exist afterwards. */
      async function touches(
        options: SubprocessOptions,
      ): Promise<{ text: string; files: boolean[] }> {
        await Deno.remove(inFile).catch(() => {});
        await Deno.remove(outFile).catch(() => {});
        const asked: string[] = [];
        await using session = await DuplexSession.start({
          transport: subprocess({
            pathToClaudeCodeExecutable: cli,
            cwd: `${box.root}/work`,
            env: box.env,
            ...options,
          }),
          onPermission: (request) => {
            asked.push(request.toolName);
            return allow();
          },
        });
        let text = "";
        for (const file of [inFile, outFile]) {
          const turn = await session.send(`[[tool:bash:touch ${file} && echo wrote]]`, TURN);
          text += `${turn.result.text}\n`;
        }
        assert.deepEqual(asked, options.sandbox ? [] : ["Bash", "Bash"], "who asked");
        return { text, files: [await exists(inFile), await exists(outFile)] };
      }

      await t.step("without it, the write outside succeeds (the check can fail)", async () => {
        const { files } = await touches({});
        assert.deepEqual(files, [true, true]);
      });
      await t.step("on the host: the folder is writable, outside is not", async () => {
        const { text, files } = await touches({ sandbox });
        assert.deepEqual(files, [true, false], text);
        assert.match(text, /Read-only file system/);
      });
      await t.step(
        "nested in bubblewrap (enableWeakerNestedSandbox): the CLI's sandbox still stops it",
        async () => {
          const { text, files } = await touches({
            sandbox: { ...sandbox, enableWeakerNestedSandbox: true },
            isolation: "bubblewrap",
            isolationBinds: { readWrite: [outside] },
          });
          assert.deepEqual(files, [true, false], text);
          assert.match(text, /Read-only file system/);
        },
      );
      await t.step(
        "nested in bubblewrap without it: the CLI's sandbox cannot start, nothing runs unsandboxed",
        async () => {
          const { text, files } = await touches({
            sandbox,
            isolation: "bubblewrap",
            isolationBinds: { readWrite: [outside] },
          });
          assert.deepEqual(files, [false, false], text);
          assert.match(text, /Can't mount proc on \/newroot\/proc/);
        },
      );
    });
  },
);
