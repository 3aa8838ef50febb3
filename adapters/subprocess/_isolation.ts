/**
 * The host side of `isolation: "bubblewrap"`: finding `bwrap`, resolving
 * the CLI's program and working directory, making the folders its
 * environment names, checking the others exist, and the wrapped command
 * line (`_bubblewrap.ts` builds it).
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";
import { bubblewrapArgs, ENV_FOLDERS, sandboxBinds, type SandboxPlan } from "./_bubblewrap.ts";
import type { SubprocessOptions } from "./subprocess_options.ts";

/** The command that runs the CLI in the sandbox. */
export interface Wrapped {
  /** `bwrap`'s path (or its name, when PATH's folders could not be looked at). */
  readonly program: string;
  /** `bwrap`'s arguments, the CLI's command line last. */
  readonly args: string[];
}

/** What the launch is, before it is wrapped. */
export interface Unwrapped {
  /** The CLI's program, as found. */
  readonly program: string;
  /** Its arguments (`executableArgs`, then the flags). */
  readonly args: readonly string[];
  /** The working directory given, if any. */
  readonly cwd: string | undefined;
  /** The CLI's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** The private folder of the launch's files, if any. */
  readonly privateDir: string | undefined;
}

const WHAT = 'Cannot start claude with isolation "bubblewrap"';

function denied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

/**
 * The error for a host without `bwrap`: the sandbox was asked for, so the
 * CLI does not start (it never runs unsandboxed instead).
 *
 * @param where Where it was looked for.
 * @returns A `DuplexError` of kind `unsupported` naming the package.
 */
export function bubblewrapMissing(where: string): DuplexError {
  return new DuplexError(
    "unsupported",
    `${WHAT}: bwrap (bubblewrap) is not on PATH (${where}); install it (Debian, Ubuntu: ` +
      `apt-get install bubblewrap; Fedora: dnf install bubblewrap), or pass isolation: "none" ` +
      `to run claude unsandboxed`,
  );
}

/**
 * Finds `bwrap` on the host's `PATH`.
 *
 * @returns Its path; its name when Deno may not look at PATH's folders (the spawn searches).
 * @throws {DuplexError} `unsupported` when it is on none of them (or not on Linux);
 * `not_permitted` when PATH cannot be read.
 */
export async function findBubblewrap(): Promise<string> {
  if (Deno.build.os !== "linux") {
    throw new DuplexError(
      "unsupported",
      `${WHAT}: bubblewrap runs on Linux only (this is ${Deno.build.os}); pass isolation: "none"`,
    );
  }
  let variable: string | undefined;
  try {
    variable = Deno.env.get("PATH");
  } catch (error) {
    if (!denied(error)) throw error;
    throw new DuplexError(
      "not_permitted",
      `${WHAT}: finding bwrap needs --allow-env=PATH; run again with it (or --allow-env)`,
      { cause: error },
    );
  }
  const dirs = (variable ?? "").split(":").filter((dir) => dir !== "");
  for (const dir of dirs) {
    const path = `${dir.replace(/\/+$/, "")}/bwrap`;
    try {
      const info = await Deno.stat(path);
      if (info.isFile && (info.mode === null || (info.mode & 0o111) !== 0)) return path;
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) return "bwrap";
    }
  }
  throw bubblewrapMissing(dirs.length === 0 ? "PATH is empty" : `searched ${dirs.join(":")}`);
}

async function realPathOf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path; // not permitted to look, or missing: the path as given
  }
}

/**
 * Wraps a launch in `bwrap`: makes the folders `HOME`, `CLAUDE_CONFIG_DIR`,
 * `TMPDIR` and `CLAUDE_CODE_TMPDIR` name when they are missing (0700, as
 * the CLI would), checks that every other folder shown exists.
 *
 * @param launch The launch as it would run unsandboxed.
 * @param options The options (`isolationBinds`, `additionalDirectories`).
 * @returns The command to spawn instead.
 * @throws {DuplexError} `unsupported` without `bwrap`; `invalid_argument`
 * for a folder that cannot be shown (see `sandboxBinds`) or is missing.
 */
export async function wrapInBubblewrap(
  launch: Unwrapped,
  options: SubprocessOptions,
): Promise<Wrapped> {
  const bwrap = await findBubblewrap();
  if (!launch.program.startsWith("/")) {
    throw new DuplexError(
      "not_permitted",
      `${WHAT}: the folder of ${launch.program} must be known to show it in the sandbox, and ` +
        `Deno may not look for it on PATH; pass its absolute path as pathToClaudeCodeExecutable ` +
        `(or allow reading PATH's folders)`,
    );
  }
  const plan: SandboxPlan = {
    program: await realPathOf(launch.program),
    args: launch.args,
    // The CLI's cwd is the resolved folder, as it is outside the sandbox.
    cwd: await realPathOf(launch.cwd ?? Deno.cwd()),
    env: launch.env,
    privateDir: launch.privateDir,
    additionalDirectories: options.additionalDirectories ?? options.addDirs,
    readOnly: options.isolationBinds?.readOnly,
    readWrite: options.isolationBinds?.readWrite,
  };
  const args = bubblewrapArgs(plan);
  const binds = sandboxBinds(plan);
  const made = binds.filter((bind) => ENV_FOLDERS.includes(bind.role));
  for (const bind of binds) {
    if (bind.optional || made.includes(bind)) continue;
    try {
      await Deno.stat(bind.path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) continue; // not permitted to look: bwrap tells
      throw new DuplexError(
        "invalid_argument",
        `${WHAT}: ${bind.role} ${bind.path} does not exist; create it or pass another`,
        { cause: error },
      );
    }
  }
  // Only once nothing refuses the start: what the CLI would make itself.
  for (const bind of made) {
    await Deno.mkdir(bind.path, { recursive: true, mode: 0o700 }).catch(() => {});
  }
  return { program: bwrap, args };
}
