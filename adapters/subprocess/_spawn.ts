/**
 * Spawning the CLI: the runtime check (`Deno.Command` must exist), the
 * child's environment, the private files of the launch, the working
 * directory check, the spawn itself, and a readable description of the
 * command line.
 *
 * @module
 */

import type { LaunchedCli } from "../../src/compat/cli_check.ts";
import type { CliVersion } from "../../src/compat/cli_versions.ts";
import type { MirrorTarget } from "../../src/store/mirror_target.ts";
import { childConfigDir, mirrorTargetOf } from "./_store_link.ts";
import { prepareStoreResume, type ResumeFolder } from "./_store_resume.ts";
import type { TransportOpenContext } from "../../src/transport/transport.ts";
import { DuplexError, excerptOf } from "../../src/errors.ts";
import { asksVersion, checkLaunch, probeCli } from "./cli_version.ts";
import { explainSpawnError, resolveBinary, type ResolveBinaryOptions } from "./find_binary.ts";
import { MARKER_VARIABLE } from "./_marked_processes.ts";
import { type PrivateFolder, writePrivateFiles } from "./_private_files.ts";
import { bubblewrapMissing, wrapInBubblewrap, type Wrapped } from "./_isolation.ts";
import {
  type CheckedSubprocessOptions,
  cwdPath,
  STRIPPED_ENV,
  type SubprocessOptions,
} from "./subprocess_options.ts";

/** A spawned CLI. */
export interface Spawned {
  /**
   * The child process, stdin, stdout and stderr piped. When the launch has
   * private files, its `status` settles only once they are removed.
   */
  readonly child: Deno.ChildProcess;
  /** The command line, quoted as a shell would need it (long arguments cut). */
  readonly description: string;
  /**
   * Fields the CLI reads only from `initialize` (see `CliLaunch.initialize`),
   * for the session.
   */
  readonly initialize: Readonly<Record<string, unknown>>;
  /** The mirror target, with a `sessionStore`. */
  readonly mirror: MirrorTarget | undefined;
  /** What the launch asked of the CLI (its permission mode), for the session's checks. */
  readonly cli: LaunchedCli;
  /** Removes the private files now, synchronously (for the host's exit). */
  removePrivateFilesSync(): void;
}

/**
 * Spawns the CLI: detached (it leads its own process group), all three
 * stdio streams piped, with the child's environment, the variables the
 * options set, and the marker; with `isolation: "bubblewrap"`, inside
 * `bwrap` (which then leads the group, the CLI in it). Settings, agents and
 * MCP configs given as objects are written to a private folder first,
 * removed when the CLI has been reaped (or the spawn failed).
 *
 * @param checked The subprocess options, checked, with the launch plan (its
 * arguments name the private folder written here, when the launch has private files).
 * @param marker The value of the marker variable for this CLI.
 * @param context The session's open context: its signal aborts the start before the spawn,
 * its trace context becomes `TRACEPARENT` / `TRACESTATE`.
 * @returns The child and its description.
 * @throws {DuplexError} `not_permitted`, `cli_not_found` or `invalid_argument`, saying what
 * to do; `unsupported` when the sandbox was asked for and `bwrap` is missing, when the CLI
 * (its `--version`, asked once per binary) is below the supported window, or when it lacks
 * the feature of a flag the options need.
 */
export async function spawnCli(
  checked: CheckedSubprocessOptions,
  marker: string,
  context: TransportOpenContext | undefined,
): Promise<Spawned> {
  const { options, plan } = checked;
  const signal = context?.signal;
  signal?.throwIfAborted();
  requireCommand();
  const trace = context?.traceContext;
  const env: Record<string, string> = {
    ...childEnv(options),
    ...plan.env,
    // The session's span: the CLI's own spans (when it exports them) join the caller's trace.
    ...(trace ? { TRACEPARENT: trace.traceparent } : {}),
    ...(trace?.tracestate ? { TRACESTATE: trace.tracestate } : {}),
    [MARKER_VARIABLE]: marker,
  };
  const program = await resolveBinary(lookupOf(options, env));
  if (options.cwd !== undefined) await checkCwd(options.cwd);
  const prefix = options.executableArgs ?? options.binaryArgs;
  // Once per binary (cached): a CLI below the window, or without a flag's feature, never runs.
  const version = asksVersion(prefix) ? (await probeCli(program, env.PATH)).version : undefined;
  checkLaunch(plan.args, version);
  signal?.throwIfAborted();
  const cwd = cwdPath(options.cwd);
  let resumed: ResumeFolder | undefined;
  if (options.sessionStore && options.resume !== undefined) {
    resumed = await prepareStoreResume({
      store: options.sessionStore,
      sessionId: options.resume,
      cwd: cwd ?? Deno.cwd(),
      projectKey: options.projectKey,
      configDir: childConfigDir(env, cwd),
      loadTimeoutMs: options.loadTimeoutMs,
      tempDir: options.tempDir,
    });
    if (resumed) env.CLAUDE_CONFIG_DIR = resumed.path;
  }
  let folder: PrivateFolder | undefined;
  let flags: readonly string[] = plan.args;
  if (Object.keys(plan.files).length > 0) {
    try {
      folder = await writePrivateFiles(plan.files, options.tempDir);
    } catch (error) {
      await resumed?.remove();
      throw error;
    }
    flags = plan.argsIn(folder.path);
  }
  const args = [...(prefix ?? []), ...flags];
  const sandboxed = options.isolation === "bubblewrap";
  let command: Wrapped = { program, args };
  if (sandboxed) {
    try {
      command = await wrapInBubblewrap(
        { program, args, cwd, env, privateDir: folder?.path },
        options,
      );
    } catch (error) {
      await folder?.remove();
      await resumed?.remove();
      throw error;
    }
  }
  let child: Deno.ChildProcess;
  try {
    signal?.throwIfAborted();
    // In the sandbox, bwrap's --chdir sets the CLI's working directory.
    child = new Deno.Command(command.program, {
      args: command.args,
      ...(options.cwd !== undefined && !sandboxed && { cwd: options.cwd }),
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (error) {
    await folder?.remove();
    await resumed?.remove();
    if (signal?.aborted && error === signal.reason) throw error;
    if (sandboxed && error instanceof Deno.errors.NotFound) {
      throw bubblewrapMissing(`the spawn found no ${command.program}`);
    }
    throw explainSpawnError(
      error,
      command.program,
      options.cwd === undefined || sandboxed ? undefined : String(options.cwd),
    );
  }
  return {
    child: folder === undefined ? child : new ChildWithFiles(child, folder),
    description: describeCommand(command.program, command.args),
    initialize: plan.initialize,
    mirror: mirrorTargetOf(options, childConfigDir(env, cwd), resumed),
    cli: {
      ...(plan.permissionMode !== undefined && { permissionMode: plan.permissionMode }),
      ...(version !== undefined && { version: version.text }),
    },
    removePrivateFilesSync: () => folder?.removeSync(),
  };
}

/**
 * The version of the CLI a spawn with these options would run (`--version`,
 * asked once per binary), for a caller that decides before it spawns (the
 * pool's parked spares).
 *
 * @param options The subprocess options.
 * @returns The version; `undefined` when it is not known (a wrapper given
 *   with `executableArgs`, a binary that printed none).
 * @throws {DuplexError} `cli_not_found`, `not_permitted` as the spawn would.
 */
export async function launchVersion(options: SubprocessOptions): Promise<CliVersion | undefined> {
  if (!asksVersion(options.executableArgs ?? options.binaryArgs)) return undefined;
  const env = childEnv(options);
  return (await probeCli(await resolveBinary(lookupOf(options, env)), env.PATH)).version;
}

/* The binary is looked up with the CLI's own CLAUDE_CLI and PATH (one set to undefined counts
 * as unset), else the host's. */
function lookupOf(options: SubprocessOptions, env: Record<string, string>): ResolveBinaryOptions {
  const binary = options.pathToClaudeCodeExecutable ?? options.binary;
  const lookupEnv: Record<string, string | undefined> = {};
  for (const name of ["CLAUDE_CLI", "PATH"]) {
    if (env[name] !== undefined) lookupEnv[name] = env[name];
    else if (removes(options.extraEnv, name) || removes(options.env, name)) {
      lookupEnv[name] = undefined;
    }
  }
  return { ...(binary !== undefined && { binary }), env: lookupEnv };
}

function removes(variables: SubprocessOptions["env"], name: string): boolean {
  return variables !== undefined && name in variables && variables[name] === undefined;
}

/** A child whose `status` settles after its private folder was removed. */
class ChildWithFiles implements Deno.ChildProcess {
  readonly #child: Deno.ChildProcess;
  readonly status: Promise<Deno.CommandStatus>;

  constructor(child: Deno.ChildProcess, folder: PrivateFolder) {
    this.#child = child;
    this.status = child.status.finally(() => folder.remove());
  }

  get pid(): number {
    return this.#child.pid;
  }
  get stdin(): WritableStream<Uint8Array<ArrayBuffer>> {
    return this.#child.stdin;
  }
  get stdout(): Deno.SubprocessReadableStream {
    return this.#child.stdout;
  }
  get stderr(): Deno.SubprocessReadableStream {
    return this.#child.stderr;
  }
  output(): Promise<Deno.CommandOutput> {
    return this.#child.output();
  }
  kill(signo?: Deno.Signal): void {
    this.#child.kill(signo);
  }
  ref(): void {
    this.#child.ref();
  }
  unref(): void {
    this.#child.unref();
  }
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#child[Symbol.asyncDispose]();
    await this.status.catch(() => {});
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
 * The child's environment: `env` if given (it replaces the host's), else
 * the host's without {@linkcode STRIPPED_ENV} (nothing with the deprecated
 * `clearEnv`); then `extraEnv` over it.
 *
 * @param options The subprocess options.
 * @returns The variables.
 * @throws {DuplexError} `not_permitted` without `--allow-env` to pass the host's on.
 */
export function childEnv(options: SubprocessOptions): Record<string, string> {
  let env: Record<string, string> = {};
  if (options.env !== undefined) {
    for (const [name, value] of Object.entries(options.env)) {
      if (value !== undefined) env[name] = value;
    }
  } else if (options.clearEnv !== true) {
    try {
      env = Deno.env.toObject();
    } catch (error) {
      if (
        error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
      ) {
        throw new DuplexError(
          "not_permitted",
          "Cannot start claude: passing the environment on needs --allow-env; run again with " +
            "--allow-env, or pass env: the variables the CLI needs (it replaces the environment)",
          { cause: error },
        );
      }
      throw error;
    }
    for (const name of STRIPPED_ENV) delete env[name];
  }
  for (const [name, value] of Object.entries(options.extraEnv ?? {})) {
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
