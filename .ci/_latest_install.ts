// deno-lint-ignore-file no-console
/**
 * The drift watch's installs (`.ci/test_latest.ts`): the newest version the
 * npm registry has of a package (`npm view <package> version`), the newest
 * Claude Code CLI into `.cache/latest/cli/<version>/` (or the pinned install
 * when the newest is the pinned version), and the newest official SDK into
 * `.cache/latest/sdk/<version>/` (through `tests/bench/install_sdk.ts`).
 *
 * The SDK ships a CLI of its own (its platform package,
 * `@anthropic-ai/claude-agent-sdk-<os>-<arch>`; `manifest.json` names the
 * version), which can be newer than `@anthropic-ai/claude-code`'s latest:
 * 0.3.333 bundles 2.1.333 while the CLI package's latest is 2.1.332. Then
 * that binary is the newest CLI users run, and it is installed instead.
 * The pinned installs (`.cache/claude-cli`, `.cache/bench-sdk`) are read,
 * never written.
 *
 * @module
 */

import { installSdk } from "../tests/bench/install_sdk.ts";

/** The folder the drift watch installs into, relative to the project root. */
export const LATEST_DIR = ".cache/latest";

const CLI_PACKAGE = "@anthropic-ai/claude-code";
const VIEW_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;
const VERSION_TIMEOUT_MS = 30_000;

export { capture, type Outcome } from "./_capture.ts";
import { capture, type Outcome } from "./_capture.ts";

/**
 * The newest version of a package on the registry.
 *
 * @param pkg The package name.
 * @returns The version, or why it is not known.
 */
export async function registryVersion(pkg: string): Promise<Outcome> {
  const result = await capture("npm", ["view", pkg, "version"], VIEW_TIMEOUT_MS);
  if (!result.ok) return result;
  const version = result.text.trim();
  return /^\d+\.\d+\.\d+/.test(version)
    ? { ok: true, text: version }
    : { ok: false, why: `npm view ${pkg} version printed ${JSON.stringify(version)}` };
}

/** The binaries under an npm prefix that may be the CLI, most likely first. */
async function candidates(prefix: string): Promise<string[]> {
  const scope = `${prefix}/node_modules/@anthropic-ai`;
  const paths = [`${scope}/claude-code/bin/claude.exe`];
  try {
    for await (const entry of Deno.readDir(scope)) {
      if (entry.isDirectory && /^claude-(code|agent-sdk)-/.test(entry.name)) {
        paths.push(`${scope}/${entry.name}/claude`);
      }
    }
  } catch {
    // Nothing installed there yet.
  }
  return paths;
}

/**
 * The first binary under a prefix whose `--version` is `version`.
 *
 * @param prefix The npm prefix.
 * @param version The version it must report.
 * @returns Its path, or `undefined`.
 */
async function working(prefix: string, version: string): Promise<string | undefined> {
  for (const path of await candidates(prefix)) {
    const result = await capture(path, ["--version"], VERSION_TIMEOUT_MS);
    if (result.ok && result.text.trim().startsWith(`${version} `)) return path;
  }
  return undefined;
}

/**
 * Makes sure a CLI version is installed: the pinned install when it is that
 * version, else `.cache/latest/cli/<version>/`.
 *
 * @param root The project root.
 * @param version The version.
 * @param pinned The pinned install's prefix (read only).
 * @returns The binary's path, or why there is none.
 */
export async function installCli(root: string, version: string, pinned: string): Promise<Outcome> {
  const reused = await working(pinned, version);
  if (reused !== undefined) return { ok: true, text: reused };
  const prefix = `${root}/${LATEST_DIR}/cli/${version}`;
  const cached = await working(prefix, version);
  if (cached !== undefined) return { ok: true, text: cached };
  await Deno.mkdir(prefix, { recursive: true });
  const spec = `${CLI_PACKAGE}@${version}`;
  console.error(`Installing ${spec} into ${prefix} (about 400 MB)…`);
  const args = ["install", "--prefix", prefix, "--no-audit", "--no-fund", spec];
  const installed = await capture("npm", args, INSTALL_TIMEOUT_MS);
  if (!installed.ok) return installed;
  const path = await working(prefix, version);
  return path === undefined
    ? { ok: false, why: `npm installed ${spec} but no binary under ${prefix} reports ${version}` }
    : { ok: true, text: path };
}

/**
 * Which of some flags a binary's text holds (`grep -a -o -F`): a flag the
 * `--help` hides is still in the binary that parses it.
 *
 * @param path The binary.
 * @param flags The flags, with their dashes.
 * @returns The flags found, sorted, or why the search failed.
 */
export async function flagsInBinary(path: string, flags: readonly string[]): Promise<Outcome> {
  if (flags.length === 0) return { ok: true, text: "" };
  const args = ["-a", "-o", "-F", ...flags.flatMap((flag) => ["-e", flag]), path];
  const result = await capture("grep", args, INSTALL_TIMEOUT_MS);
  // grep exits 1 when nothing matched: no flag is there.
  if (!result.ok && !/exited 1:/.test(result.why)) return result;
  const found = new Set(
    (result.ok ? result.text : "").split("\n").filter((l) => flags.includes(l)),
  );
  return { ok: true, text: [...found].sort().join("\n") };
}

/**
 * The schema literals of a CLI binary, as `grep -a -o -E` prints them.
 *
 * @param path The binary.
 * @param pattern The extended regular expression (`SCHEMA_PATTERN` of `_latest_catalogue.ts`).
 * @returns The matches, one a line, or why the search failed.
 */
export async function grepBinary(path: string, pattern: string): Promise<Outcome> {
  const result = await capture("grep", ["-a", "-o", "-E", pattern, path], INSTALL_TIMEOUT_MS);
  // grep exits 1 when nothing matched.
  return result.ok || !/exited 1:/.test(result.why) ? result : { ok: true, text: "" };
}

/**
 * The CLI version an SDK install bundles, from its `manifest.json`.
 *
 * @param sdkPrefix The SDK's npm prefix.
 * @returns The version, or `undefined` when the manifest does not say.
 */
export async function bundledCliVersion(sdkPrefix: string): Promise<string | undefined> {
  try {
    const path = `${sdkPrefix}/node_modules/@anthropic-ai/claude-agent-sdk/manifest.json`;
    const version = (JSON.parse(await Deno.readTextFile(path)) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure the CLI an SDK version bundles is installed, from the SDK's
 * platform package for this machine, in `.cache/latest/cli/<version>/`.
 *
 * @param root The project root.
 * @param sdkVersion The SDK version (the platform package's version).
 * @param cliVersion The CLI version it bundles.
 * @returns The binary's path, or why there is none.
 */
export async function installBundledCli(
  root: string,
  sdkVersion: string,
  cliVersion: string,
): Promise<Outcome> {
  const prefix = `${root}/${LATEST_DIR}/cli/${cliVersion}`;
  const cached = await working(prefix, cliVersion);
  if (cached !== undefined) return { ok: true, text: cached };
  const os = Deno.build.os === "windows" ? "win32" : Deno.build.os;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const spec = `@anthropic-ai/claude-agent-sdk-${os}-${arch}@${sdkVersion}`;
  await Deno.mkdir(prefix, { recursive: true });
  console.error(`Installing ${spec} (Claude Code ${cliVersion}) into ${prefix} (about 400 MB)…`);
  const args = ["install", "--prefix", prefix, "--no-audit", "--no-fund", spec];
  const installed = await capture("npm", args, INSTALL_TIMEOUT_MS);
  if (!installed.ok) return installed;
  const path = await working(prefix, cliVersion);
  return path === undefined
    ? {
      ok: false,
      why: `npm installed ${spec} but no binary under ${prefix} reports ${cliVersion}`,
    }
    : { ok: true, text: path };
}

/**
 * Makes sure an SDK version is installed in `.cache/latest/sdk/<version>/`.
 *
 * @param root The project root.
 * @param version The version.
 * @returns The npm prefix, or why it could not be installed.
 */
export async function installLatestSdk(root: string, version: string): Promise<Outcome> {
  const prefix = `${root}/${LATEST_DIR}/sdk/${version}`;
  return await installSdk({ prefix, version })
    ? { ok: true, text: prefix }
    : { ok: false, why: `@anthropic-ai/claude-agent-sdk@${version} could not be installed` };
}
