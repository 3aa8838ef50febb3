// deno-lint-ignore-file no-console
/**
 * Installs the official TypeScript SDK, pinned, for the side-by-side
 * benchmarks: `npm install --prefix .cache/bench-sdk
 * @anthropic-ai/claude-agent-sdk@0.3.333 --omit=optional`. Idempotent: does
 * nothing when that version is already there.
 *
 * `--omit=optional` skips the SDK's bundled native CLI (a few hundred MB):
 * the benchmarks point `pathToClaudeCodeExecutable` at the fake CLI, or at
 * the real CLI that `.ci/install_claude.ts` installs.
 *
 * When the install fails (no npm, registry unreachable) it says why and
 * exits 0: the runner then reports the SDK's columns as skipped.
 *
 * Run: `deno run -P=install tests/bench/install_sdk.ts`. Another version or
 * folder: `--version=<v>` and `--prefix=<folder>` (the drift watch,
 * `.ci/test_latest.ts`, installs the newest SDK into `.cache/latest/` so).
 * The tests and benchmarks that load the SDK find it through
 * {@linkcode sdkPrefix}: the `CLAUDE_SDK_PREFIX` folder when it is set,
 * else `.cache/bench-sdk`.
 *
 * @module
 */

import { npmInstall } from "../../.ci/_capture.ts";

/** The pinned SDK version. */
export const SDK_VERSION = "0.3.333";
/** The install folder, relative to the project root. */
export const SDK_PREFIX = ".cache/bench-sdk";

const PACKAGE = "@anthropic-ai/claude-agent-sdk";
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The variable that points the SDK's users at another install folder (an npm prefix). */
export const SDK_PREFIX_ENV = "CLAUDE_SDK_PREFIX";

/**
 * The SDK's install folder, as an absolute path: `CLAUDE_SDK_PREFIX` when it
 * is set (relative to the working directory), else the pinned one.
 *
 * @returns The npm prefix.
 */
export function sdkPrefix(): string {
  const custom = Deno.env.get(SDK_PREFIX_ENV);
  if (!custom) return new URL(`../../${SDK_PREFIX}`, import.meta.url).pathname;
  return custom.startsWith("/") ? custom : `${Deno.cwd()}/${custom}`;
}

/**
 * The SDK's package folder under a prefix (present or not).
 *
 * @param prefix The npm prefix; the {@linkcode sdkPrefix} by default.
 * @returns The path of `node_modules/@anthropic-ai/claude-agent-sdk`.
 */
export function sdkPackageDir(prefix: string = sdkPrefix()): string {
  return `${prefix.replace(/\/$/, "")}/node_modules/${PACKAGE}`;
}

/**
 * The SDK's entry module, as an absolute path (present or not).
 *
 * @param prefix The npm prefix; the {@linkcode sdkPrefix} by default.
 * @returns The path of `sdk.mjs` in the install folder.
 */
export function sdkEntry(prefix: string = sdkPrefix()): string {
  return `${sdkPackageDir(prefix)}/sdk.mjs`;
}

/**
 * The version of the SDK installed under a prefix.
 *
 * @param prefix The npm prefix.
 * @returns Its `package.json` version, or `undefined` when there is none.
 */
export async function installedVersion(prefix: string): Promise<string | undefined> {
  try {
    const text = await Deno.readTextFile(`${sdkPackageDir(prefix)}/package.json`);
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** Where and what {@linkcode installSdk} installs. */
export interface InstallSdkOptions {
  /** The npm prefix; default the pinned `.cache/bench-sdk` of the project. */
  readonly prefix?: string;
  /** The version; default {@linkcode SDK_VERSION}. */
  readonly version?: string;
}

/**
 * Makes sure the SDK (the pinned one by default) is installed.
 *
 * @param options Another prefix or version.
 * @returns Whether it is available afterwards.
 */
export async function installSdk(options: InstallSdkOptions = {}): Promise<boolean> {
  const version = options.version ?? SDK_VERSION;
  const prefix = options.prefix ?? new URL(`../../${SDK_PREFIX}`, import.meta.url).pathname;
  if ((await installedVersion(prefix)) === version) {
    console.log(`${PACKAGE}@${version} ready: ${sdkEntry(prefix)}`);
    return true;
  }
  const spec = `${PACKAGE}@${version}`;
  console.log(`Installing ${spec} into ${prefix}…`);
  const outcome = await npmInstall(prefix, [spec], INSTALL_TIMEOUT_MS);
  if (!outcome.ok || (await installedVersion(prefix)) !== version) {
    const why = outcome.ok ? "npm succeeded, it is not there" : outcome.why;
    console.error(`!! Cannot install ${spec}: ${why}; SDK columns skipped`);
    return false;
  }
  console.log(`${spec} ready: ${sdkEntry(prefix)}`);
  return true;
}

/**
 * Reads `--prefix=<folder>` and `--version=<v>` from the arguments.
 *
 * @param args The command-line arguments.
 * @returns The options they give.
 */
export function parseInstallArgs(args: readonly string[]): InstallSdkOptions {
  let options: InstallSdkOptions = {};
  for (const arg of args) {
    const match = arg.match(/^--(prefix|version)=(.+)$/);
    if (match === null) {
      throw new TypeError(`unknown argument ${arg}: use --prefix=<folder> or --version=<v>`);
    }
    options = { ...options, [match[1]!]: match[2]! };
  }
  return options;
}

if (import.meta.main) {
  await installSdk(parseInstallArgs(Deno.args));
}
