/*
 * The subprocess adapter asks a binary its version (`--version`) once,
 * cached by path, size and modification time, with PATH alone in its
 * environment; a binary below the supported window never runs as a CLI, and
 * a wrapper (`executableArgs`) is not asked.
 */
import assert from "node:assert/strict";
import { cliVersion, subprocess } from "../../../adapters/subprocess/mod.ts";
import { CLI_WINDOW, parseCliVersion } from "../../../src/compat/cli_versions.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { makeTestDir } from "./_helpers.ts";

/**
 * A stand-in `claude`: `--version` prints `version` and logs one line (with
 * the variable SECRET, if it got it); any other run logs `ran` and exits.
 */
async function fakeClaude(dir: string, version: string): Promise<{ path: string; log: string }> {
  const path = `${dir}/claude`;
  const log = `${dir}/log`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "asked secret=$SECRET" >> '${log}'; ` +
      `echo '${version}'; exit 0; fi\necho ran >> '${log}'\nexit 0\n`,
  );
  await Deno.chmod(path, 0o755);
  return { path, log };
}

async function lines(log: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(log)).split("\n").filter((line) => line !== "");
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

Deno.test("cliVersion() asks once per binary, again when the binary changes, with PATH alone", async () => {
  const dir = await makeTestDir();
  try {
    const { path, log } = await fakeClaude(dir, "2.1.321 (Claude Code)");
    const first = await cliVersion({ binary: path });
    assert.equal(first.path, path);
    assert.equal(first.version?.text, "2.1.321");
    assert.equal(first.output, "2.1.321 (Claude Code)");
    assert.equal((await cliVersion({ binary: path })).version?.text, "2.1.321");
    assert.deepEqual(
      await lines(log),
      ["asked secret="],
      "asked once, without the host's variables",
    );
    await fakeClaude(dir, "2.1.332 (Claude Code) "); // another size: an upgraded binary
    assert.equal((await cliVersion({ binary: path })).version?.text, "2.1.332");
    assert.equal((await lines(log)).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cliVersion() of a binary that prints no version: undefined, and the output kept", async () => {
  const dir = await makeTestDir();
  try {
    const { path } = await fakeClaude(dir, "hello");
    const identity = await cliVersion({ binary: path });
    assert.equal(identity.version, undefined);
    assert.equal(identity.output, "hello");
    await assert.rejects(
      cliVersion({ binary: `${dir}/missing` }),
      (error: unknown) => isDuplexError(error, "cli_not_found"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("subprocess() refuses a claude below the window before it runs", async () => {
  const dir = await makeTestDir();
  try {
    const floor = parseCliVersion(CLI_WINDOW.floor)!;
    const older = `${floor.major}.${floor.minor}.${floor.patch - 1}`;
    const { path, log } = await fakeClaude(dir, `${older} (Claude Code)`);
    await assert.rejects(
      subprocess({ binary: path, extraEnv: { SECRET: "s3cret" } })({
        signal: new AbortController().signal,
      }),
      (error: unknown) => {
        assert.ok(isDuplexError(error, "unsupported"), String(error));
        assert.match(
          error.message,
          new RegExp(`claude ${older} is older than ${CLI_WINDOW.floor}, the oldest version`),
        );
        return true;
      },
    );
    assert.deepEqual(await lines(log), ["asked secret="], "it never ran as a CLI");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("subprocess() runs a claude in the window, and does not ask a wrapper", async () => {
  const dir = await makeTestDir();
  try {
    const { path, log } = await fakeClaude(dir, `${CLI_WINDOW.floor} (Claude Code)`);
    await using transport = await subprocess({ binary: path })({
      signal: new AbortController().signal,
    });
    assert.deepEqual(
      (transport.info as { cli?: unknown }).cli,
      { permissionMode: "default", version: CLI_WINDOW.floor },
    );
    await transport.closed;
    assert.deepEqual(await lines(log), ["asked secret=", "ran"]);
    await using wrapped = await subprocess({ binary: "/bin/sh", binaryArgs: [path] })({
      signal: new AbortController().signal,
    });
    assert.deepEqual((wrapped.info as { cli?: unknown }).cli, { permissionMode: "default" });
    await wrapped.closed;
    assert.deepEqual(
      await lines(log),
      ["asked secret=", "ran", "ran"],
      "the wrapper was not asked",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
