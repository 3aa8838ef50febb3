/**
 * Bundles `page.tsx` for the browser with esbuild, resolving its npm
 * packages (`@ai-sdk/react`, `react`, `react-dom`, `ai`) from the folder
 * `.ci/install_ai_sdk.ts` installs them into.
 *
 * @module
 */

import { DuplexError } from "@duplex/claude";

/** Where the bundler and the packages are. */
export interface BundleOptions {
  /** The esbuild binary. @default {the one `.ci/install_runtimes.ts` installs} */
  readonly esbuild?: string;
  /** The `node_modules` folder holding the page's packages. @default {`.cache/ai-sdk/node_modules`} */
  readonly nodeModules?: string;
  /** A bound on the build. @default {60000} */
  readonly timeoutMs?: number;
}

const ROOT = new URL("../../", import.meta.url);

/** The esbuild `.ci/install_runtimes.ts` installs. */
export const ESBUILD = new URL(
  ".cache/runtimes/esbuild/node_modules/@esbuild/linux-x64/bin/esbuild",
  ROOT,
).pathname;
/** The packages `.ci/install_ai_sdk.ts` installs. */
export const NODE_MODULES = new URL(".cache/ai-sdk/node_modules", ROOT).pathname;

/**
 * Bundles the page (minified, production React).
 *
 * @param options Where esbuild and the packages are.
 * @returns The bundle's text.
 * @throws {DuplexError} `unsupported` when esbuild cannot run or the build fails.
 */
export async function bundlePage(options: BundleOptions = {}): Promise<string> {
  const esbuild = options.esbuild ?? ESBUILD;
  const entry = new URL("./page.tsx", import.meta.url).pathname;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(esbuild, {
      args: [
        entry,
        "--bundle",
        "--format=esm",
        "--jsx=automatic",
        "--minify",
        '--define:process.env.NODE_ENV="production"',
        "--log-level=error",
      ],
      env: { NODE_PATH: options.nodeModules ?? NODE_MODULES },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    }).output();
  } catch (error) {
    throw new DuplexError(
      "unsupported",
      `Cannot bundle the page: esbuild (${esbuild}) did not run (${error}); ` +
        "run deno run -P=runtimes .ci/install_runtimes.ts",
      { cause: error },
    );
  }
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    throw new DuplexError(
      "unsupported",
      `Cannot bundle the page: esbuild exited ${output.code}: ${stderr}; ` +
        "are the packages installed? deno run -P=install .ci/install_ai_sdk.ts",
    );
  }
  return new TextDecoder().decode(output.stdout);
}
