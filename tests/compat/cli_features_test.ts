/*
 * The feature table and its errors: which version each feature needs, what a
 * CLI below it gets, and how a version, a flag and a mode are read.
 */
import assert from "node:assert/strict";
import { floorRefusal, modeRefusal, sameMode } from "../../src/compat/cli_check.ts";
import {
  CLI_FEATURES,
  type CliFeatureName,
  featureOfFlag,
  featureOfHookEvent,
  featureOfSubtype,
  hasFeature,
  missingFeature,
  rejectedFlag,
  requireFeature,
} from "../../src/compat/cli_features.ts";
import { CLI_WINDOW, compareCliVersions, parseCliVersion } from "../../src/compat/cli_versions.ts";
import { isDuplexError } from "../../src/errors.ts";

const NAMES = Object.keys(CLI_FEATURES) as CliFeatureName[];

Deno.test("each feature names a version of the window or older, and is found by what it uses", () => {
  for (const name of NAMES) {
    const feature = CLI_FEATURES[name];
    assert.ok(parseCliVersion(feature.since), `${name}: ${feature.since}`);
    assert.ok(compareCliVersions(feature.since, CLI_WINDOW.newest) <= 0, name);
    const uses = feature.uses;
    if ("flag" in uses) assert.equal(featureOfFlag(uses.flag), name);
    if ("subtype" in uses) assert.equal(featureOfSubtype(uses.subtype), name);
    if ("hookEvent" in uses) assert.equal(featureOfHookEvent(uses.hookEvent), name);
  }
  assert.equal(featureOfFlag("--model"), undefined);
  assert.equal(featureOfSubtype("interrupt"), undefined);
  assert.equal(featureOfHookEvent("PreToolUse"), undefined);
});

Deno.test("hasFeature() compares versions; an unknown version is undefined", () => {
  const name = NAMES[0] as CliFeatureName;
  const since = CLI_FEATURES[name].since;
  const v = parseCliVersion(since)!;
  assert.equal(hasFeature(name, since), true);
  assert.equal(hasFeature(name, `${v.major}.${v.minor}.${v.patch + 1} (Claude Code)`), true);
  assert.equal(hasFeature(name, `${v.major}.${v.minor - 1}.999`), false);
  assert.equal(hasFeature(name, undefined), undefined);
  assert.equal(hasFeature(name, "not a version"), undefined);
});

Deno.test("missingFeature() names the feature, how it is used, the version it needs and the one found", () => {
  for (const name of NAMES) {
    const feature = CLI_FEATURES[name];
    const error = missingFeature(name, "2.0.1");
    assert.ok(isDuplexError(error, "unsupported"));
    assert.match(
      error.message,
      /^Cannot use (.+) \((.+)\): it needs claude (\S+) or newer, and this claude is (\S+);/,
    );
    assert.ok(error.message.includes(feature.title), error.message);
    assert.ok(error.message.includes(`claude ${feature.since} or newer`), error.message);
    assert.ok(error.message.includes("this claude is 2.0.1"), error.message);
    assert.throws(
      () => requireFeature(name, "2.0.1"),
      (e: unknown) => isDuplexError(e, "unsupported"),
    );
    requireFeature(name, feature.since);
    requireFeature(name, undefined); // unknown: the benefit of the doubt
  }
});

Deno.test("rejectedFlag(): a flag of the table the CLI does not know is unsupported, with the stderr", () => {
  const flag = NAMES.map((n) => CLI_FEATURES[n].uses).find((u) => "flag" in u) as { flag: string };
  const exit = {
    code: 1,
    signal: null,
    stderrTail: `error: unknown option '${flag.flag}'\n(Did you mean --help?)`,
    requested: false,
  };
  const error = rejectedFlag(exit);
  assert.ok(isDuplexError(error, "unsupported"), String(error));
  assert.match(
    error.message,
    new RegExp(`claude rejected the flag ${flag.flag} \\(stderr: .*unknown option`),
  );
  assert.equal(error.exit, exit);
  assert.equal(rejectedFlag({ ...exit, stderrTail: "error: unknown option '--bogus'" }), undefined);
  assert.equal(rejectedFlag({ ...exit, requested: true }), undefined);
  assert.equal(rejectedFlag({ ...exit, code: 0 }), undefined);
});

Deno.test("floorRefusal() refuses a version below the window, naming both", () => {
  const floor = parseCliVersion(CLI_WINDOW.floor)!;
  const older = `${floor.major}.${floor.minor}.${floor.patch - 1}`;
  const error = floorRefusal(`${older} (Claude Code)`);
  assert.ok(isDuplexError(error, "unsupported"));
  assert.match(
    error.message,
    /claude (\d+\.\d+\.\d+) is older than (\d+\.\d+\.\d+), the oldest version/,
  );
  assert.ok(error.message.includes(`claude ${older} is older than ${CLI_WINDOW.floor}`));
  assert.equal(floorRefusal(CLI_WINDOW.floor), undefined);
  assert.equal(floorRefusal(CLI_WINDOW.newest), undefined);
  assert.equal(floorRefusal(undefined), undefined);
});

Deno.test("modes: manual is default's newer name; a refusal names the modes, the version, the report", () => {
  assert.ok(sameMode("manual", "default"));
  assert.ok(sameMode("default", "manual"));
  assert.ok(sameMode("plan", "plan"));
  assert.ok(!sameMode("default", "auto"));
  const error = modeRefusal(["default", "plan"], "auto", "2.1.300", "initialize");
  assert.ok(isDuplexError(error, "unsupported"));
  assert.equal(error.subtype, "initialize");
  assert.match(
    error.message,
    /permission mode "default" \(--permission-mode=default\) \(then "plan"/,
  );
  assert.match(error.message, /claude 2\.1\.300 reports "auto" in its initialize reply/);
  assert.match(
    modeRefusal(["default"], "auto", undefined, "system/init").message,
    /version unknown/,
  );
});
