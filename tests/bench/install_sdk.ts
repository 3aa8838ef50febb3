// deno-lint-ignore-file no-console
/**
 * Installs the official TypeScript SDK, pinned, for the side-by-side
 * benchmarks: `npm install --prefix .cache/bench-sdk
 * @anthropic-ai/claude-agent-sdk@0.3.332 --omit=optional`. Idempotent: does
 * nothing when that version is already there.
 *
 * `--omit=optional` skips the SDK's bundled native CLI (a few hundred MB):
 * the benchmarks point `pathToClaudeCodeExecutable` at the fake CLI, or at
 * the real CLI that `.ci/install_claude.ts` installs.
 *
 * When the install fails (no npm, registry unreachable) it says why and
 * exits 0: the runner then reports the SDK's columns as skipped.
 *
 * Run: `deno run -P=install tests/bench/install_sdk.ts`.
 *
 * @module
 */

/** The pinned SDK version. */
export const SDK_VERSION = "0.3.332";
/** The install folder, relative to the project root. */
export const SDK_PREFIX = ".cache/bench-sdk";

const PACKAGE = "@anthropic-ai/claude-agent-sdk";
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * The SDK's entry module, as an absolute path (present or not).
 *
 * @returns The path of `sdk.mjs` in the install folder.
 */
export function sdkEntry(): string {
  return new URL(`../../${SDK_PREFIX}/node_modules/${PACKAGE}/sdk.mjs`, import.meta.url).pathname;
}

async function installedVersion(): Promise<string | undefined> {
  const manifest = new URL(
    `../../${SDK_PREFIX}/node_modules/${PACKAGE}/package.json`,
    import.meta.url,
  );
  try {
    const text = await Deno.readTextFile(manifest);
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure the pinned SDK is installed.
 *
 * @returns Whether it is available afterwards.
 */
export async function installSdk(): Promise<boolean> {
  if ((await installedVersion()) === SDK_VERSION) {
    console.log(`${PACKAGE}@${SDK_VERSION} ready: ${sdkEntry()}`);
    return true;
  }
  const prefix = new URL(`../../${SDK_PREFIX}`, import.meta.url).pathname;
  await Deno.mkdir(prefix, { recursive: true });
  const spec = `${PACKAGE}@${SDK_VERSION}`;
  console.log(`Installing ${spec} into ${prefix}…`);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("npm", {
      args: ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--omit=optional", spec],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(INSTALL_TIMEOUT_MS),
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) throw error;
    console.error(`!! Cannot install ${spec}: npm could not run (${error}); SDK columns skipped`);
    return false;
  }
  if (!output.success || (await installedVersion()) !== SDK_VERSION) {
    const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").slice(-4).join(" | ");
    console.error(`!! Cannot install ${spec}: npm exited ${output.code}: ${stderr}`);
    return false;
  }
  console.log(`${spec} ready: ${sdkEntry()}`);
  return true;
}

if (import.meta.main) {
  await installSdk();
}
