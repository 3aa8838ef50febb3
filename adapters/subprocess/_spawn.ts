/**
 * Spawning the CLI: the runtime check (`Deno.Command` must exist), the
 * child's environment, the working directory check, the spawn itself, and a
 * readable description of the command line.
 *
 * @module
 */

import { DuplexError, excerptOf } from "../../src/errors.ts";
import { explainSpawnError, resolveBinary, type ResolveBinaryOptions } from "./find_binary.ts";
import { MARKER_VARIABLE } from "./_marked_processes.ts";
import { STRIPPED_ENV, type SubprocessOptions } from "./subprocess_options.ts";

/** A spawned CLI. */
export interface Spawned {
  /** The child process, stdin, stdout and stderr piped. */
  readonly child: Deno.ChildProcess;
  /** The command line, quoted as a shell would need it (long arguments cut). */
  readonly description: string;
}

/**
 * Spawns the CLI: detached (it leads its own process group), all three
 * stdio streams piped, with the child's environment plus the marker.
 *
 * @param options The subprocess options (checked).
 * @param cliArgs The CLI flags.
 * @param marker The value of the marker variable for this CLI.
 * @param signal Aborts the start before the spawn.
 * @returns The child and its description.
 * @throws {DuplexError} `not_permitted`, `cli_not_found` or `invalid_argument`, saying what to do.
 */
export async function spawnCli(
  options: SubprocessOptions,
  cliArgs: readonly string[],
  marker: string,
  signal: AbortSignal | undefined,
): Promise<Spawned> {
  signal?.throwIfAborted();
  requireCommand();
  const env = { ...childEnv(options), [MARKER_VARIABLE]: marker };
  const lookup: ResolveBinaryOptions = {
    ...(options.binary !== undefined && { binary: options.binary }),
    ...(options.env !== undefined && { env: options.env }),
  };
  const program = await resolveBinary(lookup);
  if (options.cwd !== undefined) await checkCwd(options.cwd);
  signal?.throwIfAborted();
  const args = [...(options.binaryArgs ?? []), ...cliArgs];
  try {
    const child = new Deno.Command(program, {
      args,
      ...(options.cwd !== undefined && { cwd: options.cwd }),
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    return { child, description: describeCommand(program, args) };
  } catch (error) {
    throw explainSpawnError(
      error,
      program,
      options.cwd === undefined ? undefined : String(options.cwd),
    );
  }
}

/**
 * Checks that this runtime can spawn processes at all.
 *
 * @throws {DuplexError} `not_permitted` where `Deno.Command` does not exist
 * (Deno Deploy, edge workers, browsers), pointing to the remote adapter.
 */
export function requireCommand(): void {
  const runtime = (globalThis as { Deno?: { Command?: unknown } }).Deno;
  if (typeof runtime?.Command === "function") return;
  throw new DuplexError(
    "not_permitted",
    "Cannot start claude: this runtime cannot spawn processes (Deno.Command does not exist, " +
      "as on Deno Deploy and other edge runtimes); run claude behind a relay " +
      "(@duplex/claude/relay) on a host that can, and connect to it with remote() from " +
      "@duplex/claude/remote",
  );
}

/**
 * The child's environment: the host's (without {@linkcode STRIPPED_ENV}),
 * unless `clearEnv`, then `env` over it.
 *
 * @param options The subprocess options.
 * @returns The variables.
 * @throws {DuplexError} `not_permitted` without `--allow-env` to pass the host's on.
 */
export function childEnv(options: SubprocessOptions): Record<string, string> {
  let env: Record<string, string> = {};
  if (options.clearEnv !== true) {
    try {
      env = Deno.env.toObject();
    } catch (error) {
      if (
        error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
      ) {
        throw new DuplexError(
          "not_permitted",
          "Cannot start claude: passing the environment on needs --allow-env; run again with " +
            "--allow-env, or pass clearEnv: true and the variables the CLI needs in env",
          { cause: error },
        );
      }
      throw error;
    }
    for (const name of STRIPPED_ENV) delete env[name];
  }
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * Checks that the working directory exists and is a directory (when it can be looked at).
 *
 * @param cwd The working directory given.
 * @throws {DuplexError} `invalid_argument` when it is missing or not a directory.
 */
export async function checkCwd(cwd: string | URL): Promise<void> {
  try {
    const info = await Deno.stat(cwd);
    if (!info.isDirectory) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot start claude: the working directory ${String(cwd)} is not a directory; ` +
          `pass a directory as cwd`,
      );
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot start claude: the working directory ${String(cwd)} does not exist; ` +
          `create it or pass another cwd`,
        { cause: error },
      );
    }
    if (error instanceof DuplexError) throw error;
    // Not permitted to look: the spawn will tell.
  }
}

function describeCommand(program: string, args: readonly string[]): string {
  return [program, ...args].map(quote).join(" ");
}

function quote(arg: string): string {
  const short = excerptOf(arg, 160);
  return /^[\w@%+=:,./-]+$/.test(short) ? short : `'${short.replaceAll("'", `'\\''`)}'`;
}
