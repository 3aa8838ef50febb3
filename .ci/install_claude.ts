// deno-lint-ignore-file no-console
/**
 * Installs the real Claude Code CLI for the end-to-end tests, once: the pinned
 * version into `.cache/claude-cli/`, or, with `--version=<v>`, another
 * release (an older one of the support window, `.ci/cli_window.ts`) into
 * `.cache/claude-cli-versions/<v>/`.
 *
 * Run by `deno task test:e2e` before the tests (the pinned one) and by
 * `.ci/test_window.ts` (each older version of the window). Idempotent: when
 * the cached binary already reports the version it does nothing. Otherwise it
 * runs `npm install --prefix <prefix> @anthropic-ai/claude-code@<version>`
 * and finds the working native binary: `bin/claude.exe` of the package when
 * its postinstall linked it, else the binary of the platform package
 * (`@anthropic-ai/claude-code-<platform>/claude`).
 *
 * On success it writes the binary's absolute path to `claude-path.txt` in the
 * prefix. When the CLI cannot be installed (registry unreachable, npm
 * missing, no working binary) it prints a loud message, writes the reason to
 * `UNAVAILABLE` in the prefix and exits 0: the e2e tests then report
 * themselves ignored with that reason, or fail when `CI=true`.
 *
 * Permissions: the `install` set of `deno.json` may run the pinned binary
 * only; another version's binary needs `--allow-run` for it (the window
 * runner runs with `-P=e2e`): `deno run -P=e2e .ci/install_claude.ts
 * --version=2.1.300`.
 *
 * Environment: `CLAUDE_E2E_PREFIX` overrides the install folder (to test the
 * slow path into a temporary folder).
 *
 * @module
 */

/** The pinned CLI version. */
export const CLAUDE_VERSION = "2.1.332";
/** The install folder, relative to the project root. */
export const DEFAULT_PREFIX = ".cache/claude-cli";
/** The folder holding one install folder per other version (`<folder>/<version>`). */
export const VERSIONS_DIR = ".cache/claude-cli-versions";
/** File holding the resolved binary path, inside the prefix. */
export const PATH_FILE = "claude-path.txt";
/** Marker file holding why the CLI is unavailable, inside the prefix. */
export const UNAVAILABLE_FILE = "UNAVAILABLE";

const PACKAGE = "@anthropic-ai/claude-code";
const VERSION_TIMEOUT_MS = 30_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** What a binary check found. */
type Probe = { ok: true; path: string } | { ok: false; path: string; why: string };

/**
 * The install folder of a version: the pinned one's {@linkcode DEFAULT_PREFIX},
 * any other's `.cache/claude-cli-versions/<version>`.
 *
 * @param version A version such as `2.1.300`.
 * @returns The folder, relative to the project root.
 * @throws {TypeError} For a text that is not a version (`2.1.300`).
 */
export function versionPrefix(version: string): string {
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new TypeError(`Cannot install claude: ${JSON.stringify(version)} is not a version`);
  }
  return version === CLAUDE_VERSION ? DEFAULT_PREFIX : `${VERSIONS_DIR}/${version}`;
}

/**
 * Runs `<path> --version` and checks it reports `version`.
 *
 * @param path The binary to try.
 * @param version The version it must report.
 * @returns Whether it works, and why not.
 */
async function probe(path: string, version: string): Promise<Probe> {
  try {
    const stat = await Deno.stat(path);
    if (!stat.isFile) return { ok: false, path, why: "not a file" };
  } catch {
    return { ok: false, path, why: "missing" };
  }
  try {
    const output = await new Deno.Command(path, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1" },
      signal: AbortSignal.timeout(VERSION_TIMEOUT_MS),
    }).output();
    const stdout = new TextDecoder().decode(output.stdout).trim();
    if (stdout === `${version} (Claude Code)`) return { ok: true, path };
    const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1) ?? "";
    return {
      ok: false,
      path,
      why: `--version printed ${JSON.stringify(stdout)} (exit ${output.code}) ${stderr}`.trim(),
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw error;
    return { ok: false, path, why: String(error) };
  }
}

/**
 * The binaries that may be the CLI: the package's `bin/claude.exe`, then each
 * installed platform package's `claude` (or `claude.exe`).
 *
 * @param prefix The npm prefix.
 * @returns Candidate paths, most likely first.
 */
async function candidates(prefix: string): Promise<string[]> {
  const scope = `${prefix}/node_modules/@anthropic-ai`;
  const paths = [`${scope}/claude-code/bin/claude.exe`];
  try {
    for await (const entry of Deno.readDir(scope)) {
      if (!entry.isDirectory || !entry.name.startsWith("claude-code-")) continue;
      paths.push(`${scope}/${entry.name}/claude`, `${scope}/${entry.name}/claude.exe`);
    }
  } catch {
    // No scope folder yet.
  }
  return paths;
}

/**
 * Finds the first working binary under the prefix.
 *
 * @param prefix The npm prefix.
 * @param version The version it must report.
 * @returns The working binary, or what each candidate did.
 */
async function findWorking(
  prefix: string,
  version: string,
): Promise<{ path?: string; tried: string[] }> {
  const tried: string[] = [];
  for (const [index, path] of (await candidates(prefix)).entries()) {
    let result: Probe;
    try {
      result = await probe(path, version);
    } catch (error) {
      // The package's own binary must be runnable; a platform package's may be not permitted.
      if (index === 0 || !(error instanceof Deno.errors.NotCapable)) throw error;
      result = { ok: false, path, why: `not permitted to run (${error.message})` };
    }
    if (result.ok) return { path, tried };
    if (result.why !== "missing") tried.push(`${path}: ${result.why}`);
  }
  return { tried };
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

async function recordAvailable(prefix: string, path: string, version: string): Promise<void> {
  const absolute = await Deno.realPath(path);
  await removeIfPresent(`${prefix}/${UNAVAILABLE_FILE}`);
  let previous = "";
  try {
    previous = (await Deno.readTextFile(`${prefix}/${PATH_FILE}`)).trim();
  } catch {
    // First run.
  }
  if (previous !== absolute) await Deno.writeTextFile(`${prefix}/${PATH_FILE}`, `${absolute}\n`);
  console.log(`claude ${version} ready: ${absolute}`);
}

async function recordUnavailable(prefix: string, reason: string, version: string): Promise<void> {
  await Deno.mkdir(prefix, { recursive: true });
  await removeIfPresent(`${prefix}/${PATH_FILE}`);
  await Deno.writeTextFile(`${prefix}/${UNAVAILABLE_FILE}`, `${reason}\n`);
  const bar = "!".repeat(78);
  console.error(
    [
      bar,
      `!! The real claude CLI ${version} is UNAVAILABLE: the e2e tests will NOT run.`,
      `!! Reason: ${reason}`,
      `!! Marker written: ${prefix}/${UNAVAILABLE_FILE} (each run of the installer retries).`,
      `!! Locally the e2e suite reports itself IGNORED; with CI=true it FAILS.`,
      bar,
    ].join("\n"),
  );
}

/**
 * Runs npm install into the prefix.
 *
 * @param prefix The npm prefix.
 * @param version The version to install.
 * @returns `undefined` on success, else why it failed.
 */
async function npmInstall(prefix: string, version: string): Promise<string | undefined> {
  await Deno.mkdir(prefix, { recursive: true });
  const spec = `${PACKAGE}@${version}`;
  console.log(`Installing ${spec} into ${prefix} (a download of about 400 MB)…`);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("npm", {
      args: ["install", "--prefix", prefix, "--no-audit", "--no-fund", spec],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(INSTALL_TIMEOUT_MS),
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw error;
    return error instanceof Deno.errors.NotFound
      ? "npm is not installed (not found on PATH)"
      : `npm could not run: ${error}`;
  }
  const stdout = new TextDecoder().decode(output.stdout).trim();
  if (stdout) console.log(stdout);
  const stderr = new TextDecoder().decode(output.stderr).trim();
  if (output.success) {
    if (stderr) console.error(stderr);
    return undefined;
  }
  // npm's first error lines say what failed (code, then the message); the rest is a stack.
  const errors = stderr.split("\n").filter((line) => /^npm (error|ERR!) \S/.test(line));
  const tail = (errors.length > 0 ? errors : stderr.split("\n"))
    .filter((line) => !/^npm (error|ERR!)\s+at /.test(line))
    .slice(0, 4)
    .join(" | ");
  return output.signal !== null
    ? `npm install was stopped (signal ${output.signal}, limit ${INSTALL_TIMEOUT_MS} ms): ${tail}`
    : `npm install exited with code ${output.code}: ${tail}`;
}

/**
 * Makes sure a CLI version (the pinned one unless told) is installed and
 * records where it is.
 *
 * @param prefix The npm prefix.
 * @param version The version (default {@linkcode CLAUDE_VERSION}).
 * @returns Nothing; never throws for an unavailable CLI (it writes the marker).
 */
export async function installClaude(
  prefix: string = DEFAULT_PREFIX,
  version: string = CLAUDE_VERSION,
): Promise<void> {
  try {
    const cached = await findWorking(prefix, version);
    if (cached.path !== undefined) return await recordAvailable(prefix, cached.path, version);
    const failure = await npmInstall(prefix, version);
    if (failure !== undefined) return await recordUnavailable(prefix, failure, version);
    const installed = await findWorking(prefix, version);
    if (installed.path !== undefined) {
      return await recordAvailable(prefix, installed.path, version);
    }
    await recordUnavailable(
      prefix,
      `npm installed ${PACKAGE}@${version} but no working binary was found (${
        installed.tried.join("; ") || "no candidate binary"
      })`,
      version,
    );
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) {
      // A permission problem is ours to fix, not an unavailable CLI: fail loudly.
      console.error(
        `Cannot install the claude CLI: ${error.message}; ` +
          `the "install" permission set in deno.json must allow it`,
      );
      Deno.exit(1);
    }
    throw error;
  }
}

/**
 * Reads the command line: no argument for the pinned version, `--version=<v>`
 * (or `--version <v>`) for another.
 *
 * @param args The arguments.
 * @returns The version asked for.
 * @throws {TypeError} For another argument, or a version that is not one.
 */
export function versionArg(args: readonly string[]): string {
  let version = CLAUDE_VERSION;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.startsWith("--version=")) version = arg.slice("--version=".length);
    else if (arg === "--version" && i + 1 < args.length) version = args[++i] as string;
    else throw new TypeError(`Cannot install claude: unknown argument ${JSON.stringify(arg)}`);
  }
  versionPrefix(version);
  return version;
}

if (import.meta.main) {
  const version = versionArg(Deno.args);
  await installClaude(Deno.env.get("CLAUDE_E2E_PREFIX") || versionPrefix(version), version);
}
