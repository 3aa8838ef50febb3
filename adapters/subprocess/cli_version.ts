/**
 * What the `claude` a subprocess runs says about itself: its version
 * (`claude --version`), asked once per binary and cached for the life of the
 * program, keyed by the binary's path, size and modification time (an
 * upgraded binary is asked again); and, from that version, which of the
 * library's features it has (`src/compat/cli_features.ts`).
 *
 * The spawn asks it before the first CLI of a binary starts (a probe of some
 * 100 ms, never again for that binary, never per turn nor per hand-out of a
 * spare), to refuse a CLI below the supported window and an option it lacks
 * before anything runs. A program given with `executableArgs` (a wrapper
 * such as `node cli.js`) is not asked: `--version` after its arguments may
 * mean something else; the session then checks what the CLI reports in its
 * `initialize` reply and `system/init`.
 *
 * @module
 */

import { floorRefusal } from "../../src/compat/cli_check.ts";
import { featureOfFlag, requireFeature } from "../../src/compat/cli_features.ts";
import { type CliVersion, parseCliVersion } from "../../src/compat/cli_versions.ts";
import { messageOf } from "../../src/_values.ts";
import { resolveBinary, type ResolveBinaryOptions } from "./find_binary.ts";

/** How long `claude --version` may take before the version counts as unknown. */
const PROBE_TIMEOUT_MS = 10_000;
/** Binaries remembered (a program that makes many binaries, a test suite, stays bounded). */
const CACHE_ENTRIES = 32;

/** What a binary said about itself. */
export interface CliIdentity {
  /** The program asked (the resolved path, or the name when it could not be checked). */
  readonly path: string;
  /** Its version, or `undefined` when `--version` printed none, failed, or timed out. */
  readonly version: CliVersion | undefined;
  /** What `--version` printed (stdout, trimmed, at most 200 characters), or why it failed. */
  readonly output: string;
}

const cache = new Map<string, Promise<CliIdentity>>();

/**
 * Asks the CLI its version (`claude --version`), once per binary.
 *
 * @param options Where the CLI is (as for `subprocess()`: `binary`, else
 *   `CLAUDE_CLI`, else `claude` on `PATH`).
 * @returns The path and the version (`undefined` when the binary printed none).
 * @throws {DuplexError} `cli_not_found` when there is no such binary.
 *
 * @example Read the version of the claude on PATH
 * ```ts ignore
 * import { cliVersion } from "@duplex/claude/subprocess";
 *
 * const { path, version } = await cliVersion();
 * console.log(path, version?.text); // "/usr/local/bin/claude 2.1.332"
 * ```
 */
export async function cliVersion(options: ResolveBinaryOptions = {}): Promise<CliIdentity> {
  const path = options.env && "PATH" in options.env ? options.env.PATH : undefined;
  return await probeCli(await resolveBinary(options), path);
}

/**
 * The cached identity of a resolved binary, asked when not yet known. The
 * probe runs with `PATH` alone (a `#!/usr/bin/env node` wrapper needs it):
 * `--version` needs no credentials nor configuration, and gets none.
 *
 * @param program The resolved path.
 * @param path The `PATH` to run it with (`undefined`: the host's).
 * @returns Its identity; never rejects (a failed probe gives no version).
 */
export async function probeCli(program: string, path?: string): Promise<CliIdentity> {
  const key = await keyOf(program);
  let known = cache.get(key);
  if (known === undefined) {
    known = ask(program, path ?? readPath());
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, known);
  }
  return await known;
}

/* The path, size and modification time; the path alone when the binary cannot be looked at. */
async function keyOf(program: string): Promise<string> {
  try {
    const info = await Deno.stat(program);
    return `${program}\0${info.size}\0${info.mtime?.getTime() ?? ""}`;
  } catch {
    return program;
  }
}

function readPath(): string | undefined {
  try {
    return Deno.env.get("PATH");
  } catch {
    return undefined; // not permitted: the probe runs without one
  }
}

async function ask(program: string, path: string | undefined): Promise<CliIdentity> {
  try {
    const { stdout, stderr } = await new Deno.Command(program, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: path === undefined ? {} : { PATH: path },
      clearEnv: true,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).output();
    const text = new TextDecoder().decode(stdout).trim() ||
      new TextDecoder().decode(stderr).trim();
    return { path: program, version: parseCliVersion(text), output: text.slice(0, 200) };
  } catch (error) {
    return { path: program, version: undefined, output: messageOf(error).slice(0, 200) };
  }
}

/**
 * Refuses a launch the CLI's version cannot run: a version below the
 * supported window's floor, or a flag of a feature the version lacks.
 *
 * @param args The launch's arguments.
 * @param version The CLI's version, or `undefined` when not known (nothing is refused).
 * @throws {DuplexError} `unsupported` naming the floor, or the feature, the
 *   version it needs and the version found.
 */
export function checkLaunch(args: readonly string[], version: CliVersion | undefined): void {
  if (version === undefined) return;
  const old = floorRefusal(version.text, "start claude");
  if (old) throw old;
  for (const arg of args) {
    const feature = featureOfFlag(arg.split("=", 1)[0] as string);
    if (feature !== undefined) requireFeature(feature, version);
  }
}

/**
 * Whether a spawn asks the program its version: not a wrapper given with
 * `executableArgs` (`node cli.js`), whose `--version` may mean something else.
 *
 * @param prefix The arguments before the CLI's own (`executableArgs`).
 * @returns True for a program run without them.
 */
export function asksVersion(prefix: readonly string[] | undefined): boolean {
  return prefix === undefined || prefix.length === 0;
}
