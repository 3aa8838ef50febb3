// deno-lint-ignore-file no-console
/**
 * Installs, pinned, into `.cache/ai-sdk/` what the AI SDK's browser test
 * (`tests/e2e/ai_chat_e2e_test.ts`, the page of `examples/ai_chat/`) and
 * its benchmark (`tests/bench/ai_sdk_bench.ts`) load from npm:
 *
 * | package                       | why                                                             |
 * | ----------------------------- | --------------------------------------------------------------- |
 * | `@ai-sdk/react` 4.0.177       | `useChat` (the version that depends on `ai` 7.0.173)            |
 * | `react`, `react-dom` 19.3.1   | the page                                                        |
 * | `ai` 7.0.173                  | the same `ai` as deno.json's, for the bundle                    |
 * | `ai-sdk-provider-claude-code` | 4.1.0, the anchor of the benchmark (on the official SDK 0.3.226) |
 * | `zod` 4.6.7                   | the peer both of them need                                      |
 *
 * `--omit=optional` leaves out the official SDK's bundled native CLI (a few
 * hundred MB): the benchmark points the anchor at our real CLI. The page is
 * bundled with the esbuild that `.ci/install_runtimes.ts` installs
 * (`.cache/runtimes/esbuild/`), not a second one.
 *
 * Idempotent: does nothing when every pinned version is there. Exits 0 and
 * says why when npm cannot install (the tests then skip loudly, or fail
 * with `CI=true`).
 *
 * Run: `deno run -P=install .ci/install_ai_sdk.ts`.
 *
 * @module
 */

import { npmInstall } from "./_capture.ts";

/** The install folder, relative to the project root. */
export const AI_SDK_PREFIX = ".cache/ai-sdk";

/** The pinned packages, name to version. */
export const AI_SDK_PACKAGES: Readonly<Record<string, string>> = {
  "@ai-sdk/react": "4.0.177",
  "react": "19.3.1",
  "react-dom": "19.3.1",
  "ai": "7.0.173",
  "ai-sdk-provider-claude-code": "4.1.0",
  "zod": "4.6.7",
};

const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * The install folder, as an absolute path.
 *
 * @returns `<project>/.cache/ai-sdk`.
 */
export function aiSdkPrefix(): string {
  return new URL(`../${AI_SDK_PREFIX}`, import.meta.url).pathname.replace(/\/$/, "");
}

/**
 * The esbuild binary `.ci/install_runtimes.ts` installs (present or not).
 *
 * @returns Its absolute path.
 */
export function esbuildBinary(): string {
  return new URL(
    "../.cache/runtimes/esbuild/node_modules/@esbuild/linux-x64/bin/esbuild",
    import.meta.url,
  ).pathname;
}

/**
 * The version of one package installed under the prefix.
 *
 * @param prefix The npm prefix.
 * @param name The package.
 * @returns Its version, or `undefined` when it is not there.
 */
export async function installedVersion(prefix: string, name: string): Promise<string | undefined> {
  try {
    const text = await Deno.readTextFile(`${prefix}/node_modules/${name}/package.json`);
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pinned packages missing or at another version under the prefix.
 *
 * @param prefix The npm prefix; the project's by default.
 * @returns `name@version` of each, empty when all are there.
 */
export async function missingPackages(prefix: string = aiSdkPrefix()): Promise<string[]> {
  const missing: string[] = [];
  for (const [name, version] of Object.entries(AI_SDK_PACKAGES)) {
    if ((await installedVersion(prefix, name)) !== version) missing.push(`${name}@${version}`);
  }
  return missing;
}

/**
 * Makes sure every pinned package is installed.
 *
 * @param prefix The npm prefix; the project's by default.
 * @returns Whether they all are afterwards.
 */
export async function installAiSdk(prefix: string = aiSdkPrefix()): Promise<boolean> {
  const missing = await missingPackages(prefix);
  if (missing.length === 0) {
    console.log(`AI SDK packages ready in ${prefix}`);
    return true;
  }
  const specs = Object.entries(AI_SDK_PACKAGES).map(([name, version]) => `${name}@${version}`);
  console.log(`Installing ${missing.join(", ")} into ${prefix}…`);
  const outcome = await npmInstall(prefix, specs, INSTALL_TIMEOUT_MS);
  const still = await missingPackages(prefix);
  if (!outcome.ok || still.length > 0) {
    const why = outcome.ok ? "npm succeeded but they are not there" : outcome.why;
    console.error(`!! Cannot install ${still.join(", ")}: ${why}`);
    return false;
  }
  console.log(`AI SDK packages ready in ${prefix}`);
  return true;
}

if (import.meta.main) {
  await installAiSdk();
}
