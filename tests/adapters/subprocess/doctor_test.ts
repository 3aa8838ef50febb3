/**
 * `doctor()` on this host, in-process: the troubleshooting page against the
 * checks, then each line of `binary`, `version`, `credentials`, `cwd`,
 * `config` and `permissions`, ok and failing, each made to happen (a
 * missing binary, stand-in binaries of other versions, the real CLI, an
 * environment without credentials). The lines that need fewer permissions
 * or another PATH are in `_doctor_main_test.ts` (a child Deno); the relay's
 * in `_doctor_relay_test.ts`.
 */

import assert from "node:assert/strict";
import {
  doctor,
  DOCTOR_CHECKS,
  type DoctorCheckName,
  type DoctorOptions,
  type DoctorReport,
  formatDoctorReport,
} from "../../../adapters/subprocess/doctor.ts";
import {
  CLI_WINDOW,
  compareCliVersions,
  parseCliVersion,
} from "../../../src/compat/cli_versions.ts";
import { CLI_FEATURES } from "../../../src/compat/cli_features.ts";
import { unavailableTest } from "../../_unavailable.ts";
import { lackedFeatures } from "../../../adapters/subprocess/_doctor_local.ts";
import {
  assertLine,
  claudeOfVersion,
  lineOf,
  makeTestDir,
  REAL_CLAUDE,
  standIn,
} from "./_doctor_fixtures.ts";

const PAGE = new URL("../../../docs/troubleshooting.md", import.meta.url);

/** The bullets of the page's troubleshooting list (up to "Not about a session's start"). */
async function troubleshootingBullets(): Promise<string[]> {
  const text = await Deno.readTextFile(PAGE);
  const start = text.indexOf("## Troubleshooting");
  assert.ok(start >= 0, "the page has a Troubleshooting section");
  const end = text.indexOf("Not about a session's start", start);
  const section = text.slice(start, end < 0 ? undefined : end);
  return section.split(/\n(?=- \*\*)/).filter((part) => part.startsWith("- **"));
}

Deno.test("docs/troubleshooting.md: every failure mode of the list is a doctor line, and every line is listed", async () => {
  const bullets = await troubleshootingBullets();
  assert.ok(bullets.length >= 10, `the list has its failure modes (${bullets.length})`);
  const named = new Set<string>();
  for (const bullet of bullets) {
    const title = bullet.slice(0, bullet.indexOf("**", 4) + 2);
    const doctor = /Doctor:((?:\s*`[a-z-]+`,?)+)/.exec(bullet);
    assert.ok(doctor, `${title} names its doctor line ("Doctor: \`…\`")`);
    for (const [, name] of doctor[1]!.matchAll(/`([a-z-]+)`/g)) {
      assert.ok(DOCTOR_CHECKS.includes(name as DoctorCheckName), `${title}: ${name} is a check`);
      named.add(name!);
    }
  }
  for (const check of DOCTOR_CHECKS) assert.ok(named.has(check), `${check} is in the list`);
});

/** An environment of its own: a HOME in the test folder, no credentials, temp files there. */
function envIn(dir: string, more: Record<string, string> = {}): Record<string, string> {
  return { HOME: `${dir}/home`, TMPDIR: dir, PATH: `${dir}:/usr/bin:/bin`, ...more };
}

Deno.test("doctor() binary: fails for a missing binary with how to install it, is ok for one found", async () => {
  const dir = await makeTestDir();
  try {
    const empty = await doctor({ binary: "", cwd: dir, env: envIn(dir) });
    assertLine(empty, "binary", "fail", /is empty/, /pass a path or a command name/);
    const missing = await doctor({ binary: `${dir}/nowhere/claude`, cwd: dir, env: envIn(dir) });
    assertLine(missing, "binary", "fail", /nowhere\/claude.* is missing/, /npm install -g/);
    assert.equal(missing.ok, false);
    assert.ok(!missing.checks.some((check) => check.check === "version"), "no version to ask");
    const onPath = await doctor({ cwd: dir, env: envIn(dir, { PATH: dir }) });
    assertLine(onPath, "binary", "fail", /no executable "claude" on PATH/, /CLAUDE_CLI/);
    const claude = await claudeOfVersion(dir, CLI_WINDOW.newest);
    const found = await doctor({ cwd: dir, env: envIn(dir, { PATH: dir }) });
    assertLine(found, "binary", "ok", /\/claude \(on PATH\)/);
    const fromEnv = await doctor({ cwd: dir, env: envIn(dir, { CLAUDE_CLI: claude, PATH: "" }) });
    assertLine(fromEnv, "binary", "ok", /\(from CLAUDE_CLI\)/);
    assertLine(await doctor({ binary: claude, env: envIn(dir) }), "binary", "ok", /\(as given\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const REAL_OK = "doctor() version: the real CLI is in the window";
if (REAL_CLAUDE === undefined) {
  unavailableTest(
    REAL_OK,
    "the real CLI is not installed: deno run -P=install .ci/install_claude.ts",
  );
} else {
  const claude = REAL_CLAUDE;
  Deno.test(REAL_OK, async () => {
    const dir = await makeTestDir();
    try {
      const report = await doctor({ binary: claude, cwd: dir, env: envIn(dir) });
      assertLine(report, "version", "ok", /^claude \d+\.\d+\.\d+, in the supported window/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("doctor() version: below the floor fails, above the newest warns, a broken binary fails", async (t) => {
  const dir = await makeTestDir();
  const env = envIn(dir);
  try {
    await t.step("below the floor", async () => {
      const binary = await claudeOfVersion(dir, "2.0.1");
      const report = await doctor({ binary, cwd: dir, env });
      const line = assertLine(report, "version", "fail", /2\.0\.1 is older than/, /npm install/);
      assert.ok(line.finding.includes(CLI_WINDOW.floor));
      assert.equal(report.ok, false);
    });
    await t.step("above the newest tested", async () => {
      const binary = await claudeOfVersion(dir, "9.9.999");
      const report = await doctor({ binary, cwd: dir, env });
      assertLine(report, "version", "warn", /9\.9\.999 is newer than/, /install the tested one/);
    });
    await t.step("in the window, with every feature", async () => {
      const binary = await claudeOfVersion(dir, CLI_WINDOW.newest);
      assertLine(
        await doctor({ binary, cwd: dir, env }),
        "version",
        "ok",
        /in the supported window/,
      );
    });
    await t.step("exits with an error", async () => {
      const binary = await standIn(dir, "broken", 'echo "error: no such option" >&2; exit 3');
      const report = await doctor({ binary, cwd: dir, env });
      assertLine(
        report,
        "version",
        "fail",
        /exited with code 3: error: no such option/,
        /Claude Code/,
      );
    });
    await t.step("prints no version", async () => {
      const binary = await standIn(dir, "other", 'echo "hello"');
      const report = await doctor({ binary, cwd: dir, env });
      assertLine(report, "version", "fail", /printed no version \(hello\)/, /Claude Code/);
    });
    await t.step("cannot be started (not executable)", async () => {
      const binary = `${dir}/plain`;
      await Deno.writeTextFile(binary, "#!/bin/sh\necho 2.1.332\n", { mode: 0o644 });
      await Deno.chmod(binary, 0o644);
      const report = await doctor({ binary, cwd: dir, env });
      assertLine(report, "version", "fail", /running .*plain was refused/, /chmod \+x/);
    });
    await t.step("does not answer within the bound (killed and reaped)", async () => {
      const binary = await standIn(dir, "stuck", "exec sleep 30");
      const started = Date.now();
      const report = await doctor({ binary, cwd: dir, env, timeoutMs: 300 });
      assertLine(report, "version", "fail", /did not answer within 300 ms/);
      assert.ok(Date.now() - started < 10_000, "bounded");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor() credentials: none fails; a key, a helper, a login or a provider is ok; no secret printed", async (t) => {
  const dir = await makeTestDir();
  const secret = "sk-ant-very-secret-value-0123456789";
  try {
    const binary = await claudeOfVersion(dir, CLI_WINDOW.newest);
    await Deno.mkdir(`${dir}/home/.claude`, { recursive: true });
    const credentials = async (env: Record<string, string>) => {
      const report = await doctor({ binary, cwd: dir, env });
      const text = formatDoctorReport(report) + JSON.stringify(report);
      assert.ok(!text.includes(secret) && !text.includes(secret.slice(0, 10)), "no secret shown");
      return report;
    };
    await t.step("none", async () => {
      const report = await credentials(envIn(dir));
      assertLine(
        report,
        "credentials",
        "fail",
        /no API key or login/,
        /ANTHROPIC_API_KEY.*\/login/,
      );
      assert.equal(report.ok, false);
    });
    for (const name of ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"]) {
      await t.step(name, async () => {
        const report = await credentials(envIn(dir, { [name]: secret }));
        assertLine(report, "credentials", "ok", new RegExp(`^${name} is set \\(not shown\\)$`));
      });
    }
    await t.step("files Deno may not read: a warning, not a verdict", async () => {
      const report = await credentials(envIn(dir, { HOME: "/nonexistent-doctor-home" }));
      const file = /may not read \/nonexistent-doctor-home\/\.claude\/settings\.json/;
      assertLine(report, "credentials", "warn", file, /--allow-read/);
    });
    await t.step("a cloud provider", async () => {
      const report = await credentials(envIn(dir, { CLAUDE_CODE_USE_BEDROCK: "1" }));
      assertLine(report, "credentials", "ok", /CLAUDE_CODE_USE_BEDROCK is set/);
    });
    await t.step("an apiKeyHelper in the project's settings", async () => {
      await Deno.mkdir(`${dir}/.claude`, { recursive: true });
      await Deno.writeTextFile(`${dir}/.claude/settings.json`, '{"apiKeyHelper":"./key.sh"}');
      const report = await credentials(envIn(dir));
      assertLine(report, "credentials", "ok", /an apiKeyHelper in .*\/\.claude\/settings\.json/);
      await Deno.remove(`${dir}/.claude`, { recursive: true });
    });
    await t.step("a login in the config folder's .credentials.json", async () => {
      const file = `${dir}/home/.claude/.credentials.json`;
      await Deno.writeTextFile(file, JSON.stringify({ claudeAiOauth: { accessToken: secret } }));
      const report = await credentials(envIn(dir));
      assertLine(report, "credentials", "ok", /a login in .*home\/\.claude\/\.credentials\.json/);
      await Deno.remove(file);
    });
    await t.step("a key saved by /login in CLAUDE_CONFIG_DIR's .claude.json", async () => {
      await Deno.mkdir(`${dir}/config`, { recursive: true });
      await Deno.writeTextFile(
        `${dir}/config/.claude.json`,
        JSON.stringify({ primaryApiKey: secret }),
      );
      const report = await credentials(envIn(dir, { CLAUDE_CONFIG_DIR: `${dir}/config` }));
      assertLine(report, "credentials", "ok", /saved by \/login in .*config\/\.claude\.json/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs `fn` with a test folder, a stand-in claude of the newest version in it, and a doctor there. */
async function withStandIn(
  fn: (dir: string, ask: (more?: DoctorOptions) => Promise<DoctorReport>) => Promise<void>,
): Promise<void> {
  const dir = await makeTestDir();
  try {
    const binary = await claudeOfVersion(dir, CLI_WINDOW.newest);
    await fn(dir, (more = {}) => doctor({ binary, cwd: dir, env: envIn(dir), ...more }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("doctor() cwd: a missing folder or a file fails, a folder is ok", async () => {
  await withStandIn(async (dir, ask) => {
    assertLine(await ask({ cwd: `${dir}/gone` }), "cwd", "fail", /does not exist/, /create it/);
    await Deno.writeTextFile(`${dir}/file`, "");
    assertLine(await ask({ cwd: `${dir}/file` }), "cwd", "fail", /is not a directory/);
    assertLine(await ask(), "cwd", "ok", /is a directory/);
  });
});

Deno.test("doctor() config: no HOME fails, a file fails, a folder or none yet is ok", async () => {
  await withStandIn(async (dir, ask) => {
    const bare = await ask({ env: { PATH: dir, TMPDIR: dir } });
    assertLine(bare, "config", "fail", /neither CLAUDE_CONFIG_DIR nor HOME/, /set HOME/);
    assertLine(await ask(), "config", "ok", /made at the first run/);
    await Deno.writeTextFile(`${dir}/file`, "");
    const file = await ask({ env: envIn(dir, { CLAUDE_CONFIG_DIR: `${dir}/file` }) });
    assertLine(file, "config", "fail", /from CLAUDE_CONFIG_DIR\) is not a folder/);
    await Deno.mkdir(`${dir}/home/.claude`, { recursive: true });
    assertLine(await ask(), "config", "ok", /\(from HOME\) is a folder/);
  });
});

Deno.test("doctor() permissions: ok when granted; a warning for an optional write", async () => {
  await withStandIn(async (dir, ask) => {
    // The tests' permissions (-P): read ".", write ".cache", run, env; the folders are under .cache.
    assertLine(
      await ask(),
      "permissions",
      "ok",
      new RegExp(`^Deno may run ${dir}/claude, .*write ${dir}`),
    );
    const outside = await ask({ env: envIn(dir, { TMPDIR: "/var/tmp" }) });
    const flag = /--allow-write=\/var\/tmp/;
    assertLine(outside, "permissions", "warn", /may not write private files in \/var\/tmp/, flag);
    assert.notEqual(lineOf(outside, "permissions").status, "fail", "a session starts without it");
  });
});

Deno.test("formatDoctorReport() prints one line per check: status, check, finding, and the fix after →", () => {
  const text = formatDoctorReport({
    ok: false,
    checks: [
      { check: "binary", status: "ok", finding: "/usr/bin/claude (on PATH)" },
      { check: "credentials", status: "fail", finding: "no API key", fix: "set ANTHROPIC_API_KEY" },
    ],
  });
  assert.equal(
    text,
    "ok    binary       /usr/bin/claude (on PATH)\n" +
      "fail  credentials  no API key  →  set ANTHROPIC_API_KEY",
  );
});

Deno.test("doctor() rejects with the signal's reason when aborted", async () => {
  const reason = new Error("stop");
  await assert.rejects(doctor({ signal: AbortSignal.abort(reason) }), (error) => error === reason);
});

Deno.test("doctor() version: a CLI in the window that lacks a feature warns, naming it and its version", async () => {
  const sinces = Object.values(CLI_FEATURES).map((feature) => feature.since);
  const above = sinces.filter((since) => compareCliVersions(since, CLI_WINDOW.floor) > 0);
  if (above.length === 0) {
    // Every feature is in the floor: no CLI in the window lacks one, and below it the start fails.
    assert.deepEqual(lackedFeatures(parseCliVersion(CLI_WINDOW.floor)!), []);
    assert.ok(lackedFeatures(parseCliVersion("2.0.0")!).length > 0, "below the floor, all lack");
    return;
  }
  const newest = above.sort(compareCliVersions).at(-1)!;
  const [major, minor, patch] = newest.split(".").map(Number) as [number, number, number];
  const dir = await makeTestDir();
  try {
    const binary = await claudeOfVersion(dir, `${major}.${minor}.${patch - 1}`);
    const report = await doctor({ binary, cwd: dir, env: envIn(dir) });
    assertLine(report, "version", "warn", new RegExp(`lacks .* from ${newest}`), /install a newer/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
