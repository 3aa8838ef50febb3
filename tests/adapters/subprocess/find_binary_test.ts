import assert from "node:assert/strict";
import { resolveBinary, subprocess } from "../../../adapters/subprocess/mod.ts";
import { explainSpawnError } from "../../../adapters/subprocess/find_binary.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { makeTestDir, TEST_TMP } from "./_helpers.ts";

const INSTALL = "npm install -g @anthropic-ai/claude-code";

async function withBinDir(
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await makeTestDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function script(path: string, mode: number): Promise<void> {
  await Deno.writeTextFile(path, "#!/bin/sh\nexit 0\n");
  await Deno.chmod(path, mode);
}

Deno.test("resolveBinary() takes the binary option, then CLAUDE_CLI, then PATH", async (t) => {
  await withBinDir(async (dir) => {
    const claude = `${dir}/claude`;
    await script(claude, 0o755);
    await t.step("binary option", async () => {
      assert.equal(await resolveBinary({ binary: claude, env: { CLAUDE_CLI: "/x" } }), claude);
    });
    await t.step("CLAUDE_CLI", async () => {
      assert.equal(await resolveBinary({ env: { CLAUDE_CLI: claude, PATH: "/nope" } }), claude);
    });
    await t.step("PATH, first executable wins", async () => {
      const other = await Deno.makeTempDir({ dir });
      await script(`${other}/claude`, 0o644); // not executable: skipped
      assert.equal(
        await resolveBinary({
          env: { CLAUDE_CLI: undefined, PATH: `${dir}/nope:${other}:${dir}` },
        }),
        claude,
      );
    });
    await t.step("a command name of the binary option is searched on PATH", async () => {
      await script(`${dir}/my-claude`, 0o755);
      assert.equal(
        await resolveBinary({ binary: "my-claude", env: { PATH: dir } }),
        `${dir}/my-claude`,
      );
    });
    await t.step("a relative path is taken from the current directory", async () => {
      const relative = `./${claude.slice(Deno.cwd().length + 1)}`;
      if (claude.startsWith(Deno.cwd() + "/")) {
        assert.equal(await resolveBinary({ binary: relative }), claude);
      }
    });
  });
});

Deno.test("resolveBinary() says in two lines where it looked and how to get claude", async (t) => {
  await t.step("on PATH", async () => {
    await withBinDir(async (dir) => {
      await script(`${dir}/claude`, 0o600);
      const [a, b] = [`${dir}/nonexistent-a`, `${dir}/nonexistent-b`];
      await assert.rejects(
        resolveBinary({ env: { CLAUDE_CLI: undefined, PATH: `${a}:${dir}::${b}` } }),
        (error: unknown) => {
          assert.ok(isDuplexError(error, "cli_not_found"));
          const lines = error.message.split("\n");
          assert.equal(lines.length, 2, error.message);
          assert.equal(
            lines[0],
            `Cannot find claude: no executable "claude" on PATH (searched ${a}, ${dir}, ${b}; ` +
              `${dir}/claude is not executable)`,
          );
          assert.ok(lines[1]!.includes(INSTALL), error.message);
          assert.ok(lines[1]!.includes("CLAUDE_CLI"), error.message);
          assert.ok(lines[1]!.includes("pathToClaudeCodeExecutable"), error.message);
          assert.doesNotMatch(error.message, /\bbinary\b/, "not the deprecated option's name");
          assert.ok(error.cause instanceof Error);
          assert.equal(
            error.cause.message,
            `Looked for claude at ${a}/claude, ${dir}/claude, ${b}/claude`,
          );
          return true;
        },
      );
    });
  });
  await t.step("a long PATH: three folders named, the rest counted", async () => {
    const dirs = Array.from({ length: 16 }, (_, i) => `${TEST_TMP}/nonexistent-${i}`);
    await assert.rejects(
      resolveBinary({ env: { CLAUDE_CLI: undefined, PATH: dirs.join(":") } }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "cli_not_found"));
        const [first, second, ...rest] = error.message.split("\n");
        assert.deepEqual(rest, []);
        assert.equal(
          first,
          `Cannot find claude: no executable "claude" on PATH ` +
            `(searched ${dirs[0]}, ${dirs[1]}, ${dirs[2]} and 13 more folders)`,
        );
        assert.ok(second!.startsWith(`Install it with \`${INSTALL}\``), second);
        assert.ok(String((error.cause as Error).message).includes(`${dirs[15]}/claude`));
        return true;
      },
    );
  });
  await t.step("an empty PATH", async () => {
    await assert.rejects(
      resolveBinary({ env: { CLAUDE_CLI: undefined, PATH: "" } }),
      (error: unknown) =>
        isDuplexError(error, "cli_not_found") && error.message.includes("PATH is empty"),
    );
  });
  await t.step("CLAUDE_CLI pointing nowhere", async () => {
    await assert.rejects(
      resolveBinary({ env: { CLAUDE_CLI: `${TEST_TMP}/nonexistent/claude` } }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "cli_not_found"));
        const what = `${TEST_TMP}/nonexistent/claude (from CLAUDE_CLI) is missing`;
        assert.ok(error.message.includes(what), error.message);
        return true;
      },
    );
  });
  await t.step("a directory as the binary", async () => {
    await Deno.mkdir(TEST_TMP, { recursive: true });
    await assert.rejects(
      resolveBinary({ binary: TEST_TMP }),
      (error: unknown) =>
        isDuplexError(error, "cli_not_found") && error.message.includes("not a file"),
    );
  });
  await t.step("through the factory", async () => {
    await assert.rejects(
      subprocess({ binary: `${TEST_TMP}/nonexistent/dir/claude` })({
        signal: new AbortController().signal,
      }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "cli_not_found"));
        assert.ok(error.message.includes(`${TEST_TMP}/nonexistent/dir/claude`), error.message);
        assert.ok(error.message.includes(INSTALL));
        return true;
      },
    );
  });
});

Deno.test({
  name: "explainSpawnError() maps Deno's errors to what to do",
  permissions: "none",
  fn: () => {
    const notCapable = explainSpawnError(new Deno.errors.NotCapable("no"), "/bin/claude");
    assert.ok(isDuplexError(notCapable, "not_permitted"));
    assert.ok(notCapable.message.includes("--allow-run=/bin/claude"));
    const denied = explainSpawnError(new Deno.errors.PermissionDenied("no"), "/bin/claude");
    assert.ok(isDuplexError(denied, "not_permitted"));
    assert.ok(denied.message.includes("chmod +x /bin/claude"));
    const missing = explainSpawnError(new Deno.errors.NotFound("no"), "claude", "/work");
    assert.ok(isDuplexError(missing, "cli_not_found"));
    assert.ok(missing.message.includes("/work"));
    const other = new Error("other");
    assert.equal(explainSpawnError(other, "claude"), other);
  },
});

Deno.test("subprocess() reports a binary that is not executable", async () => {
  await withBinDir(async (dir) => {
    await script(`${dir}/claude`, 0o644);
    await assert.rejects(
      subprocess({ binary: `${dir}/claude` })({ signal: new AbortController().signal }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "not_permitted"), String(error));
        assert.ok(error.message.includes(`chmod +x ${dir}/claude`), error.message);
        return true;
      },
    );
  });
});
