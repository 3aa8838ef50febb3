/**
 * The options of `subprocess()`: their type, their defaults, and their
 * checks ({@linkcode checkSubprocessOptions}, pure), which run when the
 * factory is made, before anything is spawned.
 *
 * @module
 */

import { checkMs } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import type { CliOptions } from "./cli_options.ts";
import { type LaunchPlan, launchPlan } from "./build_args.ts";
import type { MirrorOptions } from "../../src/store/mirror_target.ts";
import { checkMirrorOptions } from "../../src/session/_mirror.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import { checkIsolation } from "./_bubblewrap.ts";

/**
 * How a transport takes part in the host program's SIGINT, SIGTERM and
 * SIGHUP handling; see {@linkcode SubprocessOptions.hostSignal}.
 */
export type HostSignalMode = "close-and-exit" | "close" | "ignore";

/** The host signal modes accepted by the `hostSignal` option. */
export const HOST_SIGNAL_MODES: readonly HostSignalMode[] = ["close-and-exit", "close", "ignore"];

/** Default of {@linkcode SubprocessOptions.closeGraceMs}. */
export const DEFAULT_CLOSE_GRACE_MS = 2000;
/** Default of {@linkcode SubprocessOptions.terminateGraceMs}. */
export const DEFAULT_TERMINATE_GRACE_MS = 3000;
/** Default of {@linkcode SubprocessOptions.stderrTailBytes}. */
export const DEFAULT_STDERR_TAIL_BYTES = 64 * 1024;
/** Default of {@linkcode SubprocessOptions.hostSignal}. */
export const DEFAULT_HOST_SIGNAL: HostSignalMode = "close-and-exit";

/** Variables of the host's environment that are not passed on to the CLI. */
export const STRIPPED_ENV: readonly string[] = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "NODE_OPTIONS",
  "DEBUG",
];

/** Options of `subprocess()`: where and how to run `claude`, and its flags. */
export interface SubprocessOptions extends CliOptions {
  /**
   * The program to run: a path, or a command name searched on `PATH`.
   *
   * @default {the `CLAUDE_CLI` environment variable, else `claude` on `PATH`}
   */
  readonly pathToClaudeCodeExecutable?: string;
  /** @deprecated Use `pathToClaudeCodeExecutable` (the official SDK's name); removed in the next minor version. */
  readonly binary?: string;
  /**
   * Arguments placed before the CLI flags: the way to run the CLI through a
   * wrapper, for example `{ pathToClaudeCodeExecutable: "node",
   * executableArgs: ["cli.js"] }`, `{ pathToClaudeCodeExecutable: "ssh",
   * executableArgs: ["host", "claude"] }`, or a stand-in script
   * `{ pathToClaudeCodeExecutable: Deno.execPath(), executableArgs: ["run",
   * "-A", "fake_claude.ts"] }` (where the official SDK puts them too for a
   * native binary).
   */
  readonly executableArgs?: readonly string[];
  /** @deprecated Use `executableArgs`; removed in the next minor version. */
  readonly binaryArgs?: readonly string[];
  /**
   * The working directory of the CLI.
   *
   * @default {the host's}
   */
  readonly cwd?: string | URL;
  /**
   * The CLI's whole environment, as in the official SDK: when set, it
   * REPLACES the host's environment (nothing of the host's is passed on;
   * spread `Deno.env.toObject()` yourself for that, or use `extraEnv`).
   * A key set to `undefined` is left out. `CLAUDE_CLI` and `PATH` given here
   * are also used to find the binary.
   *
   * @default {the host's environment, without {@linkcode STRIPPED_ENV}}
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Variables set over the environment the CLI gets (the host's, or `env`);
   * a key set to `undefined` removes the variable. Of the host's
   * environment, `CLAUDECODE` (set inside Claude Code's own tools, it would
   * make the CLI think it is nested), `CLAUDE_CODE_ENTRYPOINT` (so the CLI
   * identifies itself as `sdk-cli`), `NODE_OPTIONS` and `DEBUG` (which change
   * how a Node-based CLI runs and what it prints) are not passed on; set them
   * here to pass them explicitly. `CLAUDE_CLI` and `PATH` given here are
   * also used to find the binary. (This is what `env` did in 0.1.)
   */
  readonly extraEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Pass nothing of the host's environment (only `extraEnv`). With `env`,
   * which replaces the host's environment anyway, it changes nothing (so
   * 0.1's `{ env, clearEnv: true }` means what it meant).
   *
   * @deprecated Pass `env`, which replaces the environment; removed in the next minor version.
   * @default {false}
   */
  readonly clearEnv?: boolean;
  /**
   * Where the private files that carry `settings`, `sandbox`, `agents` and
   * `mcpConfig` to the CLI are written: in a fresh folder of its own (mode
   * 0700, the files 0600), removed when the CLI has exited. Writing needs
   * `--allow-write` for it.
   *
   * @default {the system's temporary folder (`TMPDIR`, else `/tmp`)}
   */
  readonly tempDir?: string;
  /**
   * Mirror the transcript to a store (the official SDK's `sessionStore`):
   * the CLI runs with `--session-mirror`, the session appends its
   * `transcript_mirror` entries in batches with retries, and when the store
   * is down it catches the store up later from the local transcript (which
   * stays the source of truth), reporting `mirror` events. Needs session
   * persistence. With `resume`, a session the CLI's folder lacks is loaded
   * from the store first (see `materializeSession`).
   */
  readonly sessionStore?: SessionStore;
  /**
   * The store's project key for this CLI's transcripts.
   *
   * @default {the CLI's project folder name for its cwd}
   */
  readonly projectKey?: string;
  /** Batching and retries of the mirror. */
  readonly mirror?: MirrorOptions;
  /**
   * With `sessionStore` and `resume`: how long loading the session from the
   * store may take before the start fails with a `timeout` error.
   *
   * @default {60000}
   */
  readonly loadTimeoutMs?: number;
  /**
   * How long `close()` waits for the CLI to exit after stdin EOF before
   * SIGTERM, in milliseconds: 0 skips the wait, `Infinity` waits as long as
   * the CLI takes. At most 2^31-1 otherwise.
   *
   * @default {2000}
   */
  readonly closeGraceMs?: number;
  /**
   * How long `close()` waits after SIGTERM before SIGKILL, in milliseconds:
   * 0 skips the wait, `Infinity` waits as long as the CLI takes. At most
   * 2^31-1 otherwise. The CLI's tool processes get at most 1 s of it.
   *
   * @default {3000}
   */
  readonly terminateGraceMs?: number;
  /**
   * The most bytes of stderr kept for `TransportExit.stderrTail`.
   *
   * @default {65536}
   */
  readonly stderrTailBytes?: number;
  /**
   * What a SIGINT, SIGTERM or SIGHUP to the host program does to this CLI
   * (listening for a signal replaces Deno's default action of dying from it):
   *
   * - `"close-and-exit"`: ends every open CLI and its processes at once
   *   (SIGTERM, a bounded wait, SIGKILL for what is left) and exits the host
   *   with 130/143/129, as a shell would;
   * - `"close"`: closes every open CLI with `close()` but leaves exiting to
   *   the program's own signal listener (use it when the program has one);
   * - `"ignore"`: this CLI adds no signal listener and is left alone by
   *   signals (unless another transport's `"close-and-exit"` exits the host:
   *   then it ends with the host, as on `Deno.exit()`).
   *
   * On `Deno.exit()` or the end of the program every open CLI is ended in
   * any case (an `unload` listener, synchronously).
   *
   * @default {"close-and-exit"}
   */
  readonly hostSignal?: HostSignalMode;
  /**
   * Where the CLI runs. `"none"`: on the host, as the host's user.
   * `"bubblewrap"`: in a sandbox of its own made by `bwrap` (Linux; Debian's
   * package `bubblewrap`; `--allow-run` must allow `bwrap`), which the CLI,
   * its tools and everything they start cannot leave. Every folder it shows
   * is at its host path, so `--resume`, the session mirror and the history
   * functions work unchanged:
   *
   * - read-only: `/usr`, `/bin`, `/sbin`, `/lib*`; of `/etc` only what
   *   programs need (`resolv.conf`, `hosts`, `nsswitch.conf`, `passwd`,
   *   `group`, the certificate stores, `ld.so.cache`, `alternatives`,
   *   `localtime`; not `ssl/private`); the folder of the CLI's program; the
   *   private folder of the settings and MCP files; `isolationBinds.readOnly`;
   * - read-write: `cwd`; the folders `HOME` (required), `CLAUDE_CONFIG_DIR`,
   *   `TMPDIR` and `CLAUDE_CODE_TMPDIR` name (made, 0700, when missing);
   *   `additionalDirectories`; `isolationBinds.readWrite`;
   * - its own `/proc` (its own processes only), a minimal `/dev`, a private
   *   `/tmp` in memory (what `TMPDIR=/tmp` means there); nothing else.
   *
   * The CLI gets exactly the environment `env` / `extraEnv` decide (pass
   * `env`: by default the host's variables go in), none of it on the command
   * line. It runs as `nobody` (uid 65534; the host's user outside) with no
   * capabilities, in its own user, PID, IPC and UTS namespaces, on the
   * host's network (the API, and whatever the host reaches, `127.0.0.1`
   * included), and dies with the host program, even one killed with
   * SIGKILL. A close works as without the sandbox, but SIGTERM ends all of
   * it at once (the exit then reads `signal: "SIGTERM"`); nothing the CLI
   * started outlives it. The CLI's own `sandbox` nests inside with
   * `enableWeakerNestedSandbox: true` (without it, sandboxed commands fail).
   * Files other options name by path (`settings`, `mcpConfig` or `agents`
   * as paths, `plugins`, `debugFile`, `projectConfigRoot`) and an
   * interpreter outside `/usr` need `isolationBinds`. A parked pool spare
   * cannot be claimed for a folder its sandbox does not show.
   *
   * Where `bwrap` is not on PATH the start fails with a `DuplexError` of
   * kind `unsupported` naming the package; the CLI never runs unsandboxed
   * instead.
   *
   * @default {"none"}
   */
  readonly isolation?: "none" | "bubblewrap";
  /**
   * More paths (absolute; folders or files) the `"bubblewrap"` sandbox
   * shows, at the same path: `readOnly` and `readWrite`. A deeper path wins
   * over the folder holding it; a path given both ways is read-only.
   */
  readonly isolationBinds?: {
    /** Shown read-only. */
    readonly readOnly?: readonly string[];
    /** Shown read-write. */
    readonly readWrite?: readonly string[];
  };
}

/** How a transport closes: the close options, checked, with their defaults. */
export interface CloseSettings {
  /** See {@linkcode SubprocessOptions.closeGraceMs}. */
  readonly closeGraceMs: number;
  /** See {@linkcode SubprocessOptions.terminateGraceMs}. */
  readonly terminateGraceMs: number;
  /** See {@linkcode SubprocessOptions.stderrTailBytes}. */
  readonly stderrTailBytes: number;
  /** See {@linkcode SubprocessOptions.hostSignal}. */
  readonly hostSignal: HostSignalMode;
}

/** The options of `subprocess()`, checked once: what every spawn of its factory takes. */
export interface CheckedSubprocessOptions {
  /** The options, with `sessionMirror: true` when a `sessionStore` is given. */
  readonly options: SubprocessOptions;
  /** The launch, planned (its private files' folder is named at each spawn). */
  readonly plan: LaunchPlan;
  /** How the transport closes. */
  readonly close: CloseSettings;
}

const WHAT = "Cannot use the subprocess options";

/**
 * Checks every option of `subprocess()` and plans the launch, spawning
 * nothing and touching nothing (pure): what `subprocess()` and a pool's
 * constructor run before anything is spawned.
 *
 * @param given The options given.
 * @returns The options with the plan and the close settings.
 * @throws {DuplexError} `invalid_argument` for an option the CLI would refuse.
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a duration out of range.
 */
export function checkSubprocessOptions(given: SubprocessOptions): CheckedSubprocessOptions {
  const options = given?.sessionStore ? { ...given, sessionMirror: true } : given;
  const plan = launchPlan(options);
  return { options, plan, close: checkOptions(options) };
}

/**
 * A working directory option as a path (a `file:` URL decoded).
 *
 * @param cwd The `cwd` option.
 * @returns The path, or `undefined` when none was given.
 */
export function cwdPath(cwd: string | URL | undefined): string | undefined {
  return cwd instanceof URL ? decodeURIComponent(cwd.pathname) : cwd;
}

/**
 * Checks the options that are not CLI flags (`planLaunch` checks those).
 *
 * @param options The options given.
 * @returns The close settings, defaults applied.
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a duration out of range.
 * @throws {DuplexError} `invalid_argument` for another value that cannot be used.
 */
export function checkOptions(options: SubprocessOptions): CloseSettings {
  for (const name of ["pathToClaudeCodeExecutable", "binary", "tempDir"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "string") {
      throw new TypeError(`${WHAT}: ${name} must be a string`);
    }
  }
  alias(options, "pathToClaudeCodeExecutable", "binary");
  alias(options, "executableArgs", "binaryArgs");
  for (const name of ["executableArgs", "binaryArgs"] as const) {
    const args = options[name];
    if (args === undefined) continue;
    if (!Array.isArray(args)) throw new TypeError(`${WHAT}: ${name} must be an array`);
    for (const [i, arg] of args.entries()) {
      if (typeof arg !== "string") throw new TypeError(`${WHAT}: ${name}[${i}] must be a string`);
    }
  }
  if (
    options.cwd !== undefined && typeof options.cwd !== "string" && !(options.cwd instanceof URL)
  ) {
    throw new TypeError(`${WHAT}: cwd must be a string or a URL`);
  }
  if (options.mirror !== undefined) checkMirrorOptions(options.mirror);
  for (const name of ["env", "extraEnv"] as const) {
    const variables = options[name];
    if (variables === undefined) continue;
    if (typeof variables !== "object" || variables === null || Array.isArray(variables)) {
      throw new TypeError(`${WHAT}: ${name} must be an object`);
    }
    for (const [key, value] of Object.entries(variables)) {
      if (value !== undefined && typeof value !== "string") {
        throw new TypeError(`${WHAT}: ${name}.${key} must be a string or undefined`);
      }
    }
  }
  checkIsolation(options);
  if (options.clearEnv !== undefined && typeof options.clearEnv !== "boolean") {
    throw new TypeError(`${WHAT}: clearEnv must be a boolean`);
  }
  const hostSignal = options.hostSignal ?? DEFAULT_HOST_SIGNAL;
  if (!HOST_SIGNAL_MODES.includes(hostSignal)) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: hostSignal must be one of ${HOST_SIGNAL_MODES.join(", ")}, got ${
        JSON.stringify(hostSignal)
      }`,
    );
  }
  return {
    closeGraceMs: duration("closeGraceMs", options.closeGraceMs, DEFAULT_CLOSE_GRACE_MS),
    terminateGraceMs: duration(
      "terminateGraceMs",
      options.terminateGraceMs,
      DEFAULT_TERMINATE_GRACE_MS,
    ),
    stderrTailBytes: byteCount(options.stderrTailBytes),
    hostSignal,
  };
}

function alias(
  options: SubprocessOptions,
  name: keyof SubprocessOptions,
  old: keyof SubprocessOptions,
): void {
  if (options[name] !== undefined && options[old] !== undefined) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: pass ${name} or its deprecated name ${old}, not both`,
    );
  }
}

/* 0 is allowed: it skips the wait. */
function duration(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") throw new TypeError(`${WHAT}: ${name} must be a number`);
  return checkMs(value, `${WHAT}: ${name}`, 0);
}

function byteCount(value: unknown): number {
  if (value === undefined) return DEFAULT_STDERR_TAIL_BYTES;
  if (typeof value !== "number") throw new TypeError(`${WHAT}: stderrTailBytes must be a number`);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: stderrTailBytes must be a positive integer, got ${value}`,
    );
  }
  return value;
}
