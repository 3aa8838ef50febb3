/**
 * Which `claude` the end-to-end tests run, and its version: the pinned CLI
 * that `.ci/install_claude.ts` installs, or `CLAUDE_E2E_BIN` (an older
 * version of the support window, see `.ci/cli_window.ts`). A scenario that
 * needs a newer CLI than the one under test says so with
 * {@linkcode stepSince}, and is IGNORED with the reason instead of failing.
 *
 * `_harness.ts` re-exports everything here.
 *
 * @module
 */

import { compareCliVersions, parseCliVersion } from "../../src/compat/cli_versions.ts";

/**
 * What older CLIs of the window say differently, and the first version that
 * says it as the pinned one does (measured offline on each release: see
 * `docs/development.md`, "The CLI window"). The library does not depend on
 * these; the scenarios that assert them do. The features the library needs
 * are in `src/compat/cli_features.ts`.
 */
export const CLI_CHANGES = Object.freeze({
  /** The `initialize` reply names its `claude_code_version` (so `session.info.version`). */
  initializeVersion: "2.1.296",
  /** The `set_model` reply names the model it resolved (so `session.setModel` returns it). */
  setModelReply: "2.1.307",
  /** A refused control request carries `error_code` (`unsupported_request`). */
  controlErrorCode: "2.1.323",
  /** `/cost` prints `Estimated cost:` (before: `Total cost:`). */
  estimatedCost: "2.1.326",
});

/**
 * Where the installer puts the CLI: `.cache/claude-cli/` of the project, or
 * `CLAUDE_E2E_PREFIX` (as for `.ci/install_claude.ts`).
 */
function prefix(): URL {
  const custom = Deno.env.get("CLAUDE_E2E_PREFIX");
  if (!custom) return new URL("../../.cache/claude-cli/", import.meta.url);
  const absolute = custom.startsWith("/") ? custom : `${Deno.cwd()}/${custom}`;
  return new URL(`file://${absolute.endsWith("/") ? absolute : `${absolute}/`}`);
}

/** Whether the real CLI can be run, and where it is. */
export type CliStatus =
  | { readonly available: true; readonly path: string }
  | { readonly available: false; readonly reason: string };

function readText(url: URL): string | undefined {
  try {
    return Deno.readTextFileSync(url).trim();
  } catch {
    return undefined;
  }
}

function isFile(path: string | URL): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Finds the real CLI: `CLAUDE_E2E_BIN` if set, else the path recorded by
 * `.ci/install_claude.ts` (`claude-path.txt` in the install folder), else the
 * package's `bin/claude.exe` there. Reports the
 * installer's `UNAVAILABLE` marker as the reason when there is one.
 *
 * @returns The path, or why there is none.
 */
export function cliPath(): CliStatus {
  const override = Deno.env.get("CLAUDE_E2E_BIN");
  if (override) {
    return isFile(override)
      ? { available: true, path: override }
      : { available: false, reason: `CLAUDE_E2E_BIN=${override} is not a file` };
  }
  const root = prefix();
  const marker = readText(new URL("UNAVAILABLE", root));
  if (marker !== undefined) return { available: false, reason: marker || "no reason recorded" };
  const recorded = readText(new URL("claude-path.txt", root));
  if (recorded && isFile(recorded)) return { available: true, path: recorded };
  const fallback = new URL("node_modules/@anthropic-ai/claude-code/bin/claude.exe", root);
  if (isFile(fallback)) return { available: true, path: decodeURIComponent(fallback.pathname) };
  return {
    available: false,
    reason: "the claude CLI is not installed; run `deno task test:e2e` (it installs it first)",
  };
}

const versions = new Map<string, string | undefined>();

/**
 * The version a binary reports (`claude --version` prints `2.1.332 (Claude
 * Code)`), read once per path.
 *
 * @param path The binary (default: the CLI under test, {@linkcode cliPath}).
 * @returns `2.1.332`, or `undefined` when there is no CLI or it printed no version.
 */
export function cliVersion(path?: string): string | undefined {
  const binary = path ?? (() => {
    const cli = cliPath();
    return cli.available ? cli.path : undefined;
  })();
  if (binary === undefined) return undefined;
  if (versions.has(binary)) return versions.get(binary);
  let version: string | undefined;
  try {
    const output = new Deno.Command(binary, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      env: { DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1" },
    }).outputSync();
    version = parseCliVersion(new TextDecoder().decode(output.stdout))?.text;
  } catch {
    version = undefined;
  }
  versions.set(binary, version);
  return version;
}

/**
 * Tells whether the CLI under test is `minimum` or newer. A version that
 * cannot be read counts as new enough (the scenario then runs and says what
 * fails), as the library itself gives an unknown version the benefit of the
 * doubt.
 *
 * @param minimum The version a scenario needs, such as `2.1.300`.
 * @returns False only when the CLI's version is known and older.
 */
export function cliAtLeast(minimum: string): boolean {
  const found = cliVersion();
  return found === undefined || compareCliVersions(found, minimum) >= 0;
}

/**
 * Runs a step when the CLI under test is `minimum` or newer; otherwise
 * reports it IGNORED, its name saying why (the feature it needs, the version
 * that has it, the version found). A version skip is not a missing
 * component: it is ignored under `CI=true` too.
 *
 * @param t The test.
 * @param minimum The first CLI version that has what the step needs.
 * @param needs What the step needs, for the reason (`--await-claim`).
 * @param name The step's name.
 * @param fn The step.
 * @returns Whether the step ran and passed (as `t.step`); false when ignored.
 */
export async function stepSince(
  t: Deno.TestContext,
  minimum: string,
  needs: string,
  name: string,
  fn: (t: Deno.TestContext) => void | Promise<void>,
): Promise<boolean> {
  if (cliAtLeast(minimum)) return await t.step(name, fn);
  const reason = `needs ${needs}, claude ${minimum} or newer; this claude is ${cliVersion()}`;
  await t.step({ name: `${name}: IGNORED (${reason})`, ignore: true, fn() {} });
  return false;
}
