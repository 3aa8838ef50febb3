import assert from "node:assert/strict";
import { subprocess } from "../../../adapters/subprocess/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { fakeOptions } from "./_helpers.ts";
import { HostScript } from "./_run_host.ts";

const DENO = Deno.execPath();

Deno.test("subprocess() names --allow-run when Deno may not run the CLI", async () => {
  await using host = new HostScript("open", fakeOptions(), ["--allow-env", "--allow-read"]);
  const report = await host.next();
  assert.equal((report?.error as { kind: string }).kind, "not_permitted", JSON.stringify(report));
  const message = (report?.error as { message: string }).message;
  assert.ok(message.includes(`--allow-run=${DENO}`), message);
  assert.match(message, /^Cannot start claude: /);
  assert.equal((await host.status()).code, 0);
});

Deno.test("subprocess() names --allow-env when the environment cannot be read", async (t) => {
  await t.step("to pass it on", async () => {
    await using host = new HostScript("open", fakeOptions(), [`--allow-run=${DENO}`]);
    const report = await host.next();
    const error = report?.error as { kind: string; message: string };
    assert.equal(error.kind, "not_permitted", JSON.stringify(report));
    assert.ok(error.message.includes("--allow-env"), error.message);
    assert.ok(error.message.includes("pass env"), error.message);
  });
  await t.step("to find the binary", async () => {
    await using host = new HostScript("open", { clearEnv: true }, [`--allow-run=${DENO}`]);
    const report = await host.next();
    const error = report?.error as { kind: string; message: string };
    assert.equal(error.kind, "not_permitted", JSON.stringify(report));
    assert.ok(error.message.includes("--allow-env=CLAUDE_CLI"), error.message);
  });
});

Deno.test("subprocess() works with only --allow-run=<binary> and --allow-env", async () => {
  // Without Deno.kill (needs full --allow-run) and /proc (needs --allow-all), close()
  // still ends the CLI itself, through the child handle.
  await using host = new HostScript(
    "open",
    fakeOptions({ FAKE_CLAUDE_IGNORE_EOF: "1" }, { closeGraceMs: 200, terminateGraceMs: 2000 }),
    ["--allow-env", `--allow-run=${DENO}`],
  );
  const opened = await host.next();
  assert.equal(typeof opened?.opened, "number", JSON.stringify(opened));
  const { exit } = (await host.next()) as { exit: { signal: string; requested: boolean } };
  assert.equal(exit.signal, "SIGTERM");
  assert.equal(exit.requested, true);
  const status = await host.status();
  assert.equal(status.code, 0, status.stderr);
});

Deno.test("subprocess() points to @duplex/claude/remote where Deno.Command does not exist", async () => {
  // A Deploy-like runtime: Deno without Deno.Command (the property is configurable).
  const saved = Object.getOwnPropertyDescriptor(Deno, "Command");
  assert.ok(saved);
  const open = subprocess(fakeOptions());
  delete (Deno as { Command?: unknown }).Command;
  try {
    await assert.rejects(open({ signal: new AbortController().signal }), (error: unknown) => {
      assert.ok(isDuplexError(error, "not_permitted"), String(error));
      assert.match(error.message, /^Cannot start claude: this runtime cannot spawn processes/);
      assert.ok(error.message.includes("@duplex/claude/remote"), error.message);
      return true;
    });
  } finally {
    Object.defineProperty(Deno, "Command", saved);
  }
  assert.equal(typeof Deno.Command, "function");
});
