/** Helpers of the doctor's tests: stand-in programs, a child Deno running the doctor, lookups. */

import assert from "node:assert/strict";
import type {
  DoctorCheck,
  DoctorCheckName,
  DoctorReport,
} from "../../../adapters/subprocess/doctor.ts";
import { makeTestDir } from "./_helpers.ts";

export { makeTestDir };

/** The doctor's program (`deno task doctor`). */
export const DOCTOR_MAIN: string = decodeURIComponent(
  new URL("../../../adapters/subprocess/doctor_main.ts", import.meta.url).pathname,
);

/** The real CLI the project installs, or undefined when it is not installed. */
export const REAL_CLAUDE: string | undefined = installedClaude();

function installedClaude(): string | undefined {
  try {
    const path = Deno.readTextFileSync(
      new URL("../../../.cache/claude-cli/claude-path.txt", import.meta.url),
    ).trim();
    Deno.statSync(path);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * Writes an executable shell script standing in for a program.
 *
 * @param dir The folder.
 * @param name Its file name.
 * @param body The script after `#!/bin/sh`.
 * @returns Its path.
 */
export async function standIn(dir: string, name: string, body: string): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  await Deno.chmod(path, 0o755);
  return path;
}

/**
 * A stand-in `claude` that prints a version for `--version`.
 *
 * @param dir The folder.
 * @param version What it prints before ` (Claude Code)`.
 * @returns Its path.
 */
export function claudeOfVersion(dir: string, version: string): Promise<string> {
  return standIn(dir, "claude", `echo "${version} (Claude Code)"`);
}

/**
 * The line of one check.
 *
 * @param report The report.
 * @param name The check.
 * @returns Its line (the test fails without one).
 */
export function lineOf(report: DoctorReport, name: DoctorCheckName): DoctorCheck {
  const found = report.checks.find((check) => check.check === name);
  assert.ok(found, `no ${name} line in ${JSON.stringify(report.checks)}`);
  return found;
}

/**
 * Asserts one check's status, and that its finding (and fix) say something.
 *
 * @param report The report.
 * @param name The check.
 * @param status The status it must have.
 * @param finding A pattern its finding matches.
 * @param fix A pattern its fix matches (warn and fail).
 * @returns The line.
 */
export function assertLine(
  report: DoctorReport,
  name: DoctorCheckName,
  status: DoctorCheck["status"],
  finding: RegExp,
  fix?: RegExp,
): DoctorCheck {
  const line = lineOf(report, name);
  assert.equal(line.status, status, JSON.stringify(line));
  assert.match(line.finding, finding);
  if (line.status !== "ok") {
    assert.ok(line.fix.length > 0, "a warn or fail says what to do");
    if (fix !== undefined) assert.match(line.fix, fix);
  }
  return line;
}

/** What a child Deno running `doctor_main.ts` printed and how it ended. */
export interface DoctorRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The report, when it ran with `--json`. */
  readonly report: DoctorReport | undefined;
}

/**
 * Runs `doctor_main.ts` in a child Deno with the given permissions and environment.
 *
 * @param permissions Deno's permission flags for it.
 * @param args The doctor's arguments (with `--json`, its report is parsed).
 * @param env Its whole environment.
 * @returns How it ended, and its report.
 */
export async function runDoctorMain(
  permissions: readonly string[],
  args: readonly string[],
  env: Record<string, string>,
): Promise<DoctorRun> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "--quiet", ...permissions, DOCTOR_MAIN, ...args],
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  let report: DoctorReport | undefined;
  try {
    report = JSON.parse(stdout);
  } catch {
    report = undefined;
  }
  return { code: output.code, stdout, stderr, report };
}
