/**
 * Running a command to its end with its output captured, and `npm install`
 * into a prefix over it: what the installers of `.ci/` and
 * `tests/bench/install_sdk.ts` share.
 *
 * @module
 */

import { messageOf } from "../src/_values.ts";

/** A command's outcome: its text, or why it failed. */
export type Outcome = { ok: true; text: string } | { ok: false; why: string };

/**
 * Runs a command to its end, capturing its output.
 *
 * @param command The program.
 * @param args Its arguments.
 * @param timeoutMs When to stop it.
 * @returns Its stdout, or why it failed (with its stderr's last lines).
 */
export async function capture(
  command: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Outcome> {
  try {
    const output = await new Deno.Command(command, {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", NO_COLOR: "1" },
      signal: AbortSignal.timeout(timeoutMs),
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    if (output.success) return { ok: true, text };
    const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").slice(-3).join(" | ");
    return { ok: false, why: `${command} ${args.join(" ")} exited ${output.code}: ${stderr}` };
  } catch (error) {
    return { ok: false, why: `${command} could not run: ${messageOf(error)}` };
  }
}

/**
 * `npm install` of exact package specs into a prefix (no audit, no fund, no
 * optional dependencies: no bundled CLI binaries), creating the prefix.
 *
 * @param prefix The npm prefix.
 * @param specs `name@version`, each.
 * @param timeoutMs When to stop npm.
 * @returns npm's output, or why it failed.
 */
export async function npmInstall(
  prefix: string,
  specs: readonly string[],
  timeoutMs: number,
): Promise<Outcome> {
  await Deno.mkdir(prefix, { recursive: true });
  const args = ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--omit=optional"];
  return await capture("npm", [...args, "--save-exact", ...specs], timeoutMs);
}
