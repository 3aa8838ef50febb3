/**
 * What `subprocess()` hands the spawned CLI besides its flags: the
 * environment (`env` replaces the host's, `extraEnv` goes over it, the
 * options' own variables), and the private files that carry settings,
 * agents and MCP configs (0700 folder, 0600 files, gone once the CLI has
 * exited). Against the stand-in CLI, which reports its arguments and the
 * variables it was asked about.
 */

import assert from "node:assert/strict";
import { subprocess, type SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { denoRunArgs, FAKE_CLAUDE, fakeOptions, FrameReader, makeTestDir } from "./_helpers.ts";
import { HostScript } from "./_run_host.ts";

const REPORTED = [
  "DUPLEX_HOST",
  "DUPLEX_A",
  "DUPLEX_B",
  "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
];
function opening(): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(60_000) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** The stand-in, run with exactly the options given (no helper defaults for the environment). */
function stand(options: SubprocessOptions): SubprocessOptions {
  return {
    pathToClaudeCodeExecutable: Deno.execPath(),
    executableArgs: denoRunArgs(FAKE_CLAUDE),
    closeGraceMs: 2000,
    terminateGraceMs: 2000,
    ...options,
  };
}

/** What Deno itself needs to run the stand-in, when the environment is replaced. */
function denoEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

async function hello(options: SubprocessOptions): Promise<Record<string, unknown>> {
  await using transport = await subprocess(options)(opening());
  const frame = await new FrameReader(transport).nextOfType("fake_hello");
  await transport.close();
  return frame;
}

const HELLO = { FAKE_CLAUDE_HELLO: "1", FAKE_CLAUDE_REPORT_ENV: REPORTED.join(",") };

Deno.test("subprocess() gives the CLI env in place of the host's, and extraEnv over it", async (t) => {
  Deno.env.set("DUPLEX_HOST", "inherited");
  try {
    await t.step("env replaces the host's environment (the official SDK's meaning)", async () => {
      const frame = await hello(stand({ env: { ...denoEnv(), ...HELLO, DUPLEX_A: "a" } }));
      assert.deepEqual(frame.env, {
        DUPLEX_HOST: null,
        DUPLEX_A: "a",
        DUPLEX_B: null,
        CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: null,
      });
    });
    await t.step("extraEnv goes over the host's", async () => {
      const frame = await hello(stand({ extraEnv: { ...HELLO, DUPLEX_B: "b" } }));
      assert.equal((frame.env as Record<string, unknown>).DUPLEX_HOST, "inherited");
      assert.equal((frame.env as Record<string, unknown>).DUPLEX_B, "b");
    });
    await t.step("extraEnv goes over env, and undefined removes", async () => {
      const env = { ...denoEnv(), ...HELLO, DUPLEX_A: "a", DUPLEX_B: "env" };
      const frame = await hello(stand({ env, extraEnv: { DUPLEX_A: undefined, DUPLEX_B: "x" } }));
      assert.deepEqual(frame.env, {
        DUPLEX_HOST: null,
        DUPLEX_A: null,
        DUPLEX_B: "x",
        CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: null,
      });
    });
    await t.step("the options' variables win over the caller's", async () => {
      const frame = await hello(stand({
        extraEnv: { ...HELLO, CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: "false" },
        enableFileCheckpointing: true,
      }));
      assert.equal(
        (frame.env as Record<string, unknown>).CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING,
        "true",
      );
    });
    await t.step("the binary is found with env's CLAUDE_CLI", async () => {
      const frame = await hello({
        env: { ...denoEnv(), ...HELLO, CLAUDE_CLI: Deno.execPath() },
        executableArgs: denoRunArgs(FAKE_CLAUDE),
      });
      assert.equal(frame.type, "fake_hello");
    });
    await t.step("clearEnv (deprecated) still passes only extraEnv", async () => {
      const frame = await hello(stand({ clearEnv: true, extraEnv: { ...denoEnv(), ...HELLO } }));
      assert.equal((frame.env as Record<string, unknown>).DUPLEX_HOST, null);
    });
  } finally {
    Deno.env.delete("DUPLEX_HOST");
  }
});

/** The private folder named by a `--flag=<dir>/<file>` argument. */
function privateDirOf(args: unknown, flag: string): string {
  const arg = (args as string[]).find((a) => a.startsWith(`--${flag}=`));
  assert.ok(arg, `no --${flag} in ${JSON.stringify(args)}`);
  const path = arg.slice(flag.length + 3);
  return path.slice(0, path.lastIndexOf("/"));
}

Deno.test("subprocess() writes settings, agents and MCP configs to private files it removes", async (t) => {
  const tempDir = await makeTestDir();
  const secret = `planted-${crypto.randomUUID()}`;
  const options = fakeOptions(HELLO, {
    tempDir,
    settings: { env: { TOKEN: secret } },
    agents: { a: { description: "d", prompt: secret } },
    mcpConfig: { mcpServers: { s: { command: "srv", env: { TOKEN: secret } } } },
  });
  try {
    await t.step(
      "while the CLI runs: 0700 folder, 0600 files, nothing secret in argv",
      async () => {
        await using transport = await subprocess(options)(opening());
        const frame = await new FrameReader(transport).nextOfType("fake_hello");
        assert.ok(!JSON.stringify(frame.args).includes(secret), JSON.stringify(frame.args));
        assert.ok(!(transport.info.description ?? "").includes(secret));
        const dir = privateDirOf(frame.args, "settings");
        assert.ok(dir.startsWith(`${tempDir}/duplex-claude-`), dir);
        assert.equal(privateDirOf(frame.args, "agents"), dir);
        assert.equal(privateDirOf(frame.args, "mcp-config"), dir);
        assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
        for (const name of ["settings.json", "agents.json", "mcp.json"]) {
          assert.equal((await Deno.stat(`${dir}/${name}`)).mode! & 0o777, 0o600, name);
          assert.ok((await Deno.readTextFile(`${dir}/${name}`)).includes(secret), name);
        }
        assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/settings.json`)), {
          env: { TOKEN: secret },
        });
        await transport.close();
        assert.equal(await exists(dir), false, "removed by the time close() resolved");
      },
    );
    await t.step("a CLI that exits by itself: gone by the time closed resolves", async () => {
      const transport = await subprocess({
        ...options,
        extraEnv: { ...options.extraEnv, FAKE_CLAUDE_EXIT_IMMEDIATELY: "1" },
      })(opening());
      const frame = await new FrameReader(transport).nextOfType("fake_hello").catch(() =>
        undefined
      );
      await transport.closed;
      assert.deepEqual(
        await Array.fromAsync(Deno.readDir(tempDir)),
        [],
        `left: ${JSON.stringify(frame)}`,
      );
      await transport.close();
    });
    await t.step("each CLI of a factory gets its own folder", async () => {
      const open = subprocess(options);
      await using a = await open(opening());
      await using b = await open(opening());
      const [ha, hb] = await Promise.all([
        new FrameReader(a).nextOfType("fake_hello"),
        new FrameReader(b).nextOfType("fake_hello"),
      ]);
      assert.notEqual(privateDirOf(ha.args, "settings"), privateDirOf(hb.args, "settings"));
      await Promise.all([a.close(), b.close()]);
      assert.deepEqual(await Array.fromAsync(Deno.readDir(tempDir)), []);
    });
    await t.step("a missing tempDir: invalid_argument before anything runs", async () => {
      await assert.rejects(
        subprocess({ ...options, tempDir: `${tempDir}/missing` })(opening()),
        (error) => isDuplexError(error, "invalid_argument") && /tempDir/.test(error.message),
      );
    });
  } finally {
    await Deno.remove(tempDir, { recursive: true });
  }
});

Deno.test("subprocess() names --allow-write when the private files cannot be written", async () => {
  const options = fakeOptions({}, { settings: { model: "m" }, tempDir: "/tmp" });
  const permissions = [`--allow-run=${Deno.execPath()}`, "--allow-env", "--allow-read"];
  await using host = new HostScript("open", options, permissions);
  const report = await host.next();
  const error = report?.error as { kind: string; message: string };
  assert.equal(error.kind, "not_permitted", JSON.stringify(report));
  assert.ok(error.message.includes("--allow-write=/tmp"), error.message);
  assert.match(error.message, /^Cannot start claude: /);
});
