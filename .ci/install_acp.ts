// deno-lint-ignore-file no-console
/**
 * Installs Zed's ACP adapter of the official SDK, pinned, as the anchor the
 * ACP e2e test and benchmark compare `@duplex/claude/acp` with: `npm install
 * --prefix .cache/acp @zed-industries/claude-agent-acp@0.23.1
 * --omit=optional`. Idempotent: does nothing when that version is already
 * there.
 *
 * `--omit=optional` skips the official SDK's bundled native CLI (a few
 * hundred MB): the tests point the adapter at the real CLI that
 * `.ci/install_claude.ts` installs (`CLAUDE_CODE_EXECUTABLE`).
 *
 * When the install fails (no npm, registry unreachable) it says why and
 * exits 0: the tests that need it then report themselves ignored with the
 * reason, or fail when `CI=true`.
 *
 * Run: `deno run -P=install .ci/install_acp.ts`.
 *
 * @module
 */

import { npmInstall } from "./_capture.ts";

/** The pinned adapter version. */
export const ACP_ADAPTER_VERSION = "0.23.1";
/** The adapter's npm package. */
export const ACP_ADAPTER_PACKAGE = "@zed-industries/claude-agent-acp";

const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The install folder (an npm prefix), as an absolute path. */
export const ACP_PREFIX: string = new URL("../.cache/acp", import.meta.url).pathname;

/** The adapter's package folder (present or not). */
export const ACP_PACKAGE_DIR = `${ACP_PREFIX}/node_modules/${ACP_ADAPTER_PACKAGE}`;

/**
 * The version of the adapter installed in {@linkcode ACP_PREFIX}.
 *
 * @returns Its `package.json` version, or `undefined` when there is none.
 */
export async function installedAcpVersion(): Promise<string | undefined> {
  try {
    const text = await Deno.readTextFile(`${ACP_PACKAGE_DIR}/package.json`);
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure the pinned adapter is installed.
 *
 * @returns Whether it is available afterwards.
 */
export async function installAcp(): Promise<boolean> {
  const spec = `${ACP_ADAPTER_PACKAGE}@${ACP_ADAPTER_VERSION}`;
  if ((await installedAcpVersion()) === ACP_ADAPTER_VERSION) {
    console.log(`${spec} ready: ${ACP_PACKAGE_DIR}`);
    return true;
  }
  console.log(`Installing ${spec} into ${ACP_PREFIX}…`);
  const outcome = await npmInstall(ACP_PREFIX, [spec], INSTALL_TIMEOUT_MS);
  if (!outcome.ok || (await installedAcpVersion()) !== ACP_ADAPTER_VERSION) {
    console.error(
      `!! Cannot install ${spec}: ${outcome.ok ? "npm succeeded, it is not there" : outcome.why}`,
    );
    return false;
  }
  console.log(`${spec} ready: ${ACP_PACKAGE_DIR}`);
  return true;
}

if (import.meta.main) await installAcp();
