/**
 * The files the drift watch (`.ci/test_latest.ts`) reads: this library's
 * sources that say what it knows, and an SDK install's `sdk.d.ts` and
 * `sdk.mjs`. Also used by `tests/compat/sdk_drift_test.ts`.
 *
 * @module
 */

import { HOOK_EVENTS } from "../src/hooks/hooks.ts";
import { type Catalogue, libraryCatalogue } from "./_latest_catalogue.ts";

/** The project root. */
export const ROOT: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

const SDK_PACKAGE = "node_modules/@anthropic-ai/claude-agent-sdk";

/**
 * Reads a file of the project.
 *
 * @param path The path from the project root.
 * @returns Its text.
 */
export function readProject(path: string): string {
  return Deno.readTextFileSync(`${ROOT}/${path}`);
}

/**
 * Reads every `.ts` file of a project folder (not its subfolders), by name.
 *
 * @param folder The folder from the project root.
 * @returns The texts, concatenated.
 */
export function readFolder(folder: string): string {
  return [...Deno.readDirSync(`${ROOT}/${folder}`)]
    .filter((entry) => entry.isFile && entry.name.endsWith(".ts"))
    .map((entry) => entry.name)
    .sort()
    .map((name) => readProject(`${folder}/${name}`))
    .join("\n");
}

/**
 * What this library knows, read from its sources.
 *
 * @returns The library's catalogue.
 */
export function readLibrary(): Catalogue {
  return libraryCatalogue({
    protocol: readFolder("src/protocol"),
    options: [
      "adapters/subprocess/cli_options.ts",
      "adapters/subprocess/subprocess_options.ts",
      "src/session/session_options.ts",
    ].map(readProject).join("\n"),
    router: readProject("src/session/_control_router.ts"),
    comparison: readProject("docs/comparison.md"),
    hookEvents: HOOK_EVENTS,
  });
}

/**
 * Reads an SDK install's public types and bundle.
 *
 * @param prefix The npm prefix it was installed into.
 * @returns The texts of `sdk.d.ts` and `sdk.mjs`.
 */
export function readSdk(prefix: string): { readonly dts: string; readonly mjs: string } {
  const dir = `${prefix}/${SDK_PACKAGE}`;
  return {
    dts: Deno.readTextFileSync(`${dir}/sdk.d.ts`),
    mjs: Deno.readTextFileSync(`${dir}/sdk.mjs`),
  };
}
