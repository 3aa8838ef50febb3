/**
 * `deno task doctor` (`doctor_main.ts`) in a child Deno with fewer
 * permissions or another PATH: its exit code, the permissions lines (run,
 * env, read, net missing), `bubblewrap` (missing, unable to make a
 * namespace, not permitted, ok), `config` not writable, and its command
 * line (a token never on it).
 */

import assert from "node:assert/strict";
import { parseDoctorArgs } from "../../../adapters/subprocess/doctor_main.ts";
import { doctor } from "../../../adapters/subprocess/doctor.ts";
import { CLI_WINDOW } from "../../../src/compat/cli_versions.ts";
import { unavailableTest } from "../../_unavailable.ts";
import {
  assertLine,
  claudeOfVersion,
  type DoctorRun,
  makeTestDir,
  runDoctorMain,
  standIn,
} from "./_doctor_fixtures.ts";

const ALL = ["--allow-run", "--allow-env", "--allow-read", "--allow-write"];

/** A folder with a stand-in claude of the newest version, and an environment naming it. */
async function withHost(
  fn: (dir: string, claude: string, env: Record<string, string>) => Promise<void>,
): Promise<void> {
  const dir = await makeTestDir();
  try {
    const claude = await claudeOfVersion(dir, CLI_WINDOW.newest);
    await fn(dir, claude, { HOME: `${dir}/home`, TMPDIR: dir, PATH: dir, ANTHROPIC_API_KEY: "k" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs the doctor in a child Deno, `--json`, in `dir`, and returns how it ended and its report. */
async function jsonRun(
  permissions: readonly string[],
  dir: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<DoctorRun & { report: NonNullable<DoctorRun["report"]> }> {
  const run = await runDoctorMain(permissions, ["--json", `--cwd=${dir}`, ...args], env);
  return { ...run, report: reportOf(run) };
}

function reportOf(run: DoctorRun) {
  assert.ok(run.report, `a JSON report (stdout ${run.stdout}, stderr ${run.stderr})`);
  return run.report;
}

Deno.test("deno task doctor exits 0 with every line ok, and prints one line per check", async () => {
  await withHost(async (dir, _claude, env) => {
    const { code, stdout, report } = await jsonRun(ALL, dir, env);
    assert.equal(code, 0, stdout);
    assert.ok(report.ok);
    for (const check of report.checks) assert.equal(check.status, "ok", JSON.stringify(check));
    const text = await runDoctorMain(ALL, [`--cwd=${dir}`], env);
    const lines = text.stdout.trim().split("\n").map((line) => line.split(/\s+/).slice(0, 2));
    const checks = ["binary", "version", "credentials", "permissions", "cwd", "config"];
    assert.deepEqual(lines, checks.map((check) => ["ok", check]));
  });
});

const NO_RUN = ["--allow-env", "--allow-read", "--allow-write"];
const NO_ENV = ["--allow-run", "--allow-read", "--allow-write"];
const NO_READ = ["--allow-run", "--allow-env", "--allow-write"];

Deno.test("deno task doctor without --allow-run: permissions fail naming the flag, version not asked, exit 1", async () => {
  await withHost(async (dir, claude, env) => {
    const { code, report } = await jsonRun(NO_RUN, dir, env);
    assert.equal(code, 1);
    const flag = new RegExp(`--allow-run=${claude}`);
    assertLine(report, "permissions", "fail", new RegExp(`may not run ${claude}`), flag);
    assertLine(report, "version", "warn", /not asked: Deno may not run/, flag);
  });
});

Deno.test("deno task doctor without --allow-env: the binary cannot be looked up, permissions fail naming --allow-env", async () => {
  await withHost(async (dir, claude, env) => {
    const { code, report } = await jsonRun(NO_ENV, dir, env);
    assert.equal(code, 1);
    assertLine(report, "binary", "fail", /needs --allow-env=CLAUDE_CLI/, /--allow-env/);
    assertLine(report, "credentials", "warn", /may not read the environment/, /--allow-env/);
    assertLine(report, "config", "warn", /may not read the environment/);
    assertLine(report, "permissions", "fail", /pass the environment on/, /--allow-env/);
    const given = await jsonRun(NO_ENV, dir, env, `--binary=${claude}`);
    assertLine(given.report, "binary", "ok", /\(as given\)/);
  });
});

Deno.test("deno task doctor without --allow-read: warnings, not failures (the spawn would search and tell), exit 0", async () => {
  await withHost(async (dir, _claude, env) => {
    const { code, stdout, report } = await jsonRun(NO_READ, dir, env);
    assert.equal(code, 0, stdout);
    assertLine(report, "binary", "warn", /not looked for/, /--allow-read/);
    assertLine(report, "cwd", "warn", /not checked/, /--allow-read=/);
    assertLine(report, "config", "warn", /not checked/, /--allow-read=/);
    assertLine(report, "permissions", "warn", /may not check/, /--allow-read=/);
    assertLine(report, "version", "ok", /in the supported window/);
  });
});

Deno.test("deno task doctor with a relay and no --allow-net: the relay fails naming the host; the token is not shown", async () => {
  await withHost(async (dir, _claude, env) => {
    const secret = "relay-token-that-must-not-show";
    const relay = ["--relay=ws://127.0.0.1:9/v1", "--token-env=RELAY_TOKEN"];
    const run = await jsonRun(ALL, dir, { ...env, RELAY_TOKEN: secret }, ...relay);
    assert.equal(run.code, 1);
    const flag = /--allow-net=127\.0\.0\.1:9/;
    assertLine(run.report, "relay", "fail", /may not connect to 127\.0\.0\.1:9/, flag);
    assertLine(run.report, "permissions", "fail", /connect to the relay/, flag);
    assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret));
  });
});

Deno.test("deno task doctor --isolation=bubblewrap: bwrap missing, unable to make a namespace, not permitted", async (t) => {
  await withHost(async (dir, claude, env) => {
    const sandbox = "--isolation=bubblewrap";
    await t.step("not on PATH", async () => {
      const { report } = await jsonRun(ALL, dir, env, sandbox);
      const install = /apt-get install bubblewrap/;
      assertLine(report, "bubblewrap", "fail", /bwrap \(bubblewrap\) is not on PATH/, install);
    });
    const tools = `${dir}/tools`;
    await Deno.mkdir(tools);
    const refusal = 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1';
    const bwrap = await standIn(tools, "bwrap", refusal);
    const withBwrap = { ...env, PATH: `${dir}:${tools}` };
    await t.step("no user namespace", async () => {
      const { code, report } = await jsonRun(ALL, dir, withBwrap, sandbox);
      assert.equal(code, 1);
      const why = /cannot make a sandbox here \(exit code 1: bwrap: setting up uid map/;
      assertLine(report, "bubblewrap", "fail", why, /user namespaces/);
    });
    await t.step("Deno may not run it", async () => {
      const permissions = [`--allow-run=${claude}`, "--allow-env", "--allow-read", "--allow-write"];
      const { report } = await jsonRun(permissions, dir, withBwrap, sandbox);
      const flag = new RegExp(`--allow-run=${bwrap}`);
      assertLine(report, "bubblewrap", "fail", new RegExp(`may not run ${bwrap}`), flag);
    });
  });
});

/** Whether bwrap is on the tests' PATH (asked of the shell: -P may not read PATH's folders). */
function bwrapOnPath(): boolean {
  try {
    return new Deno.Command("sh", {
      args: ["-c", "command -v bwrap"],
      stdout: "null",
      stderr: "null",
    })
      .outputSync().success;
  } catch {
    return false;
  }
}

const BWRAP_OK = "doctor() bubblewrap: ok where bwrap can make a user namespace";
if (Deno.build.os !== "linux" || !bwrapOnPath()) {
  unavailableTest(BWRAP_OK, "bwrap (bubblewrap) is not on PATH; apt-get install bubblewrap");
} else {
  Deno.test(BWRAP_OK, async () => {
    await withHost(async (dir, claude, env) => {
      // findBubblewrap looks on the tests' own PATH, where bwrap is.
      const report = await doctor({ binary: claude, cwd: dir, env, isolation: "bubblewrap" });
      assertLine(report, "bubblewrap", "ok", /makes a sandbox/);
    });
  });
}

Deno.test("deno task doctor: a config folder this user may not write fails (root may write it)", async () => {
  const id = await new Deno.Command("id", { args: ["-u"], stdout: "piped" }).output();
  const root = new TextDecoder().decode(id.stdout).trim() === "0";
  await withHost(async (dir, _claude, env) => {
    await Deno.mkdir(`${dir}/config`, { mode: 0o500 });
    await Deno.chmod(`${dir}/config`, 0o500);
    try {
      const config = { ...env, CLAUDE_CONFIG_DIR: `${dir}/config` };
      const { report } = await jsonRun([...ALL, "--allow-sys=uid"], dir, config);
      if (root) assertLine(report, "config", "ok", /is a folder/);
      else assertLine(report, "config", "fail", /is not writable by this user/, /chmod u\+w/);
    } finally {
      await Deno.chmod(`${dir}/config`, 0o700);
    }
  });
});

Deno.test("parseDoctorArgs() takes the token from a variable only, and refuses what it does not know", () => {
  const env = (name: string) => (name === "T" ? "secret" : undefined);
  const wrong = (args: string[], pattern: RegExp) => {
    const command = parseDoctorArgs(args, env);
    assert.equal(command.kind, "wrong", JSON.stringify(command));
    if (command.kind === "wrong") assert.match(command.message, pattern);
  };
  wrong(["--token=secret"], /--token-env=<VAR>.*ps/);
  wrong(["--relay=ws://h/v1"], /needs --token-env/);
  wrong(["--relay=ws://h/v1", "--token-env=NOPE"], /NOPE, which is not set/);
  wrong(["--token-env=T"], /go with --relay/);
  wrong(["--isolation=docker"], /none or bubblewrap/);
  wrong(["--timeout-ms=soon"], /positive whole number/);
  wrong(["--colour=yes"], /Unknown option --colour/);
  wrong(["stray"], /Unknown argument stray/);
  assert.deepEqual(parseDoctorArgs(["--help"], env), { kind: "help" });
  assert.deepEqual(
    parseDoctorArgs(
      [
        "--binary=/b",
        "--cwd=/c",
        "--isolation=bubblewrap",
        "--relay=ws://h/v1",
        "--token-env=T",
        "--origin=https://o",
        "--timeout-ms=500",
        "--json",
      ],
      env,
    ),
    {
      kind: "run",
      json: true,
      options: {
        binary: "/b",
        cwd: "/c",
        isolation: "bubblewrap",
        relay: { url: "ws://h/v1", token: "secret", origin: "https://o" },
        timeoutMs: 500,
      },
    },
  );
});
