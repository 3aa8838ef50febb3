/**
 * The CI window of `.ci/cli_window.ts` agrees with the library's
 * `CLI_WINDOW` (the floor `DuplexSession.start` enforces, the pinned
 * newest), and the installer's and the runner's parsing (no CLI is run).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  CORE_E2E_FILES,
  OLDER_VERSIONS,
  WINDOW_FLOOR,
  WINDOW_VERSIONS,
} from "../../.ci/cli_window.ts";
import {
  CLAUDE_VERSION,
  DEFAULT_PREFIX,
  versionArg,
  versionPrefix,
} from "../../.ci/install_claude.ts";
import { readSummary, report, unavailable, type WindowRun } from "../../.ci/test_window.ts";
import { CLI_WINDOW, compareCliVersions } from "../../src/compat/cli_versions.ts";

Deno.test("the CI window is the library's: its floor, the pinned newest, two between", () => {
  assert.equal(WINDOW_FLOOR, CLI_WINDOW.floor);
  assert.equal(WINDOW_VERSIONS.at(-1), CLAUDE_VERSION);
  assert.equal(CLI_WINDOW.newest, CLAUDE_VERSION);
  assert.ok(WINDOW_VERSIONS.length >= 4, "the floor, two between, the newest");
  for (let i = 1; i < WINDOW_VERSIONS.length; i++) {
    const [older, newer] = [WINDOW_VERSIONS[i - 1] as string, WINDOW_VERSIONS[i] as string];
    assert.ok(compareCliVersions(older, newer) < 0, `${older} before ${newer}`);
  }
  assert.deepEqual(OLDER_VERSIONS, WINDOW_VERSIONS.slice(0, -1));
});

Deno.test("the e2e core names files that exist", async () => {
  const root = new URL("../../", import.meta.url);
  for (const file of CORE_E2E_FILES) {
    assert.ok((await Deno.stat(new URL(file, root))).isFile, file);
  }
});

Deno.test("install_claude.ts: --version=<v> and its install folder", () => {
  assert.equal(versionArg([]), CLAUDE_VERSION);
  assert.equal(versionArg(["--version=2.1.300"]), "2.1.300");
  assert.equal(versionArg(["--version", "2.1.300"]), "2.1.300");
  assert.throws(() => versionArg(["--version=latest"]), TypeError);
  assert.throws(() => versionArg(["--prefix=x"]), TypeError);
  assert.equal(versionPrefix(CLAUDE_VERSION), DEFAULT_PREFIX);
  assert.equal(versionPrefix("2.1.300"), ".cache/claude-cli-versions/2.1.300");
});

Deno.test("test_window.ts: Deno's summary read, one line per version", () => {
  const summary = readSummary(
    "noise\nok | 15 passed (53 steps) | 0 failed | 1 ignored (2 steps) (56s)\n",
  );
  assert.deepEqual(summary, {
    line: "ok | 15 passed (53 steps) | 0 failed | 1 ignored (2 steps) (56s)",
    passed: 15,
    failed: 0,
    ignored: 1,
    ignoredSteps: 2,
  });
  assert.equal(readSummary("FAILED | 3 passed | 1 failed (1 step) (2s)")?.failed, 1);
  assert.equal(readSummary("no summary"), undefined);
  const runs: WindowRun[] = [
    {
      version: "2.1.289",
      outcome: "ran",
      passed: 15,
      failed: 0,
      ignored: 0,
      ignoredSteps: 1,
      exitCode: 0,
      seconds: 56,
      note: "",
    },
    unavailable("2.1.300", "npm failed", 1),
  ];
  assert.equal(
    report(runs),
    [
      "claude 2.1.289: 15 passed, 0 failed, 0 ignored (1 steps ignored), 56 s",
      "claude 2.1.300: UNAVAILABLE (npm failed)",
      "15 passed, 0 failed",
    ].join("\n"),
  );
});
