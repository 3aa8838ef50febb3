// This module is browser compatible.
/*
 * The versions of `claude` this library supports, and how to compare them.
 *
 * - `CLI_WINDOW`: the floor (below it `DuplexSession.start` refuses) and the
 *   newest release the project tests (the pinned one of `.ci/install_claude.ts`).
 * - `parseCliVersion` reads `2.1.332` out of what a CLI says about itself
 *   (`claude --version` prints `2.1.332 (Claude Code)`; the initialize reply
 *   and `system/init` carry `claude_code_version`).
 * - `compareCliVersions` orders two versions numerically, part by part.
 *
 * Which feature needs which version lives in `cli_features.ts`.
 */

/** A CLI version, as three numbers (`2.1.332`). */
export interface CliVersion {
  /** The first number (`2`). */
  readonly major: number;
  /** The second number (`1`). */
  readonly minor: number;
  /** The third number (`332`). */
  readonly patch: number;
  /** As written: `2.1.332`. */
  readonly text: string;
}

/**
 * The versions the library supports: `floor` to `newest`, both tested in CI.
 * The floor is the oldest release of the last 60 days before the newest
 * (2.1.289, published 2026-10-03); every feature the library uses is in it
 * but those `cli_features.ts` names with a later version.
 */
export const CLI_WINDOW: { readonly floor: string; readonly newest: string } = Object.freeze({
  floor: "2.1.289",
  newest: "2.1.332",
});

/**
 * Reads a version out of what a CLI printed or reported.
 *
 * @param text `2.1.332`, `2.1.332 (Claude Code)`, `v2.1.332`.
 * @returns The version, or `undefined` when the text holds none.
 */
export function parseCliVersion(text: unknown): CliVersion | undefined {
  if (typeof text !== "string") return undefined;
  const match = /(?:^|[^\d.])v?(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?![\d])/.exec(` ${text.trim()}`);
  if (match === null) return undefined;
  const [, major, minor, patch] = match as unknown as [string, string, string, string];
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    text: `${Number(major)}.${Number(minor)}.${Number(patch)}`,
  };
}

/**
 * Orders two versions.
 *
 * @param a One version (parsed, or text such as `2.1.300`).
 * @param b The other.
 * @returns Negative when `a` is older, 0 when equal, positive when newer.
 * @throws {TypeError} For a text that holds no version.
 */
export function compareCliVersions(a: CliVersion | string, b: CliVersion | string): number {
  const x = typeof a === "string" ? parseCliVersion(a) : a;
  const y = typeof b === "string" ? parseCliVersion(b) : b;
  if (x === undefined || y === undefined) {
    throw new TypeError(`Cannot compare CLI versions: ${String(x === undefined ? a : b)}`);
  }
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}
