/**
 * The transport that runs a real `claude` with `Deno.Command`: the only code
 * of the library that spawns processes.
 *
 * @module
 */

import { MARKER_VARIABLE, signalMarkedSync, sweepMarked } from "./_marked_processes.ts";
import { describeExit, DuplexError, excerptOf, type TransportExit } from "../../src/errors.ts";
import type {
  Transport,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "../../src/transport/transport.ts";
import { buildArgs, type CliOptions } from "./build_args.ts";
import { explainSpawnError, resolveBinary, type ResolveBinaryOptions } from "./_find_binary.ts";
import {
  HOST_SIGNAL_MODES,
  type HostExitMember,
  type HostSignalMode,
  registerForHostExit,
  unregisterForHostExit,
} from "./_host_exit.ts";
import { LinePipe, OutputPipe } from "./_pipes.ts";
import {
  findDescendants,
  findDescendantsSync,
  isAlive,
  isAliveSync,
  type ProcessRecord,
} from "./_process_tree.ts";
import { StderrTail } from "./_stderr_tail.ts";

export type { HostSignalMode };

/** Default of {@linkcode SubprocessOptions.closeGraceMs}. */
export const DEFAULT_CLOSE_GRACE_MS = 2000;
/** Default of {@linkcode SubprocessOptions.terminateGraceMs}. */
export const DEFAULT_TERMINATE_GRACE_MS = 3000;
/** Default of {@linkcode SubprocessOptions.stderrTailBytes}. */
export const DEFAULT_STDERR_TAIL_BYTES = 64 * 1024;

/** Variables of the host's environment that are not passed on to the CLI. */
export const STRIPPED_ENV: readonly string[] = [
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "NODE_OPTIONS",
  "DEBUG",
];

/** The most lines the stderr tail keeps (the byte bound usually comes first). */
const TAIL_LINES = 1000;
/** The longest stderr line kept whole; the rest of a longer line is cut. */
const MAX_STDERR_LINE = 64 * 1024;
/** Unread `transport.stderr` lines kept for a slow reader (oldest dropped first). */
const STDERR_QUEUE_LINES = 10_000;
const STDERR_QUEUE_BYTES = 1024 * 1024;
/** After the exit, how long to wait for the pipes to end (a descendant may hold them). */
const PIPE_DRAIN_MS = 1000;
/** How long a failed write waits for the exit status, to report it. */
const WRITE_FAILURE_EXIT_WAIT_MS = 500;
/** The most time between SIGTERM and SIGKILL for recorded descendants. */
const MAX_DESCENDANT_GRACE_MS = 1000;
/** How often descendants are checked while waiting for them to end. */
const POLL_MS = 25;

/** Options of {@linkcode subprocess}: where and how to run `claude`, and its flags. */
export interface SubprocessOptions extends CliOptions {
  /**
   * The program to run: a path or a command name searched on `PATH`.
   * Default: the `CLAUDE_CLI` environment variable, else `claude` on `PATH`.
   */
  readonly binary?: string;
  /**
   * Arguments placed before the CLI flags: the way to run the CLI through a
   * wrapper, for example `{ binary: "node", binaryArgs: ["cli.js"] }`,
   * `{ binary: "ssh", binaryArgs: ["host", "claude"] }`, or a stand-in script
   * `{ binary: Deno.execPath(), binaryArgs: ["run", "-A", "fake_claude.ts"] }`.
   */
  readonly binaryArgs?: readonly string[];
  /** The working directory of the CLI. Default: the host's. */
  readonly cwd?: string | URL;
  /**
   * Variables set for the CLI, over the host's environment (a key set to
   * `undefined` removes the variable). From the host's environment,
   * `CLAUDECODE` (set inside Claude Code's own tools, it would make the CLI
   * think it is nested), `CLAUDE_CODE_ENTRYPOINT` (so the CLI identifies
   * itself as `sdk-cli`), `NODE_OPTIONS` and `DEBUG` (which change how a
   * Node-based CLI runs and what it prints) are not passed on; set them here
   * to pass them explicitly. `CLAUDE_CLI` and `PATH` given here are also used
   * to find the binary.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Pass only `env`, nothing of the host's environment. Default: false. */
  readonly clearEnv?: boolean;
  /** How long `close()` waits for the CLI to exit after stdin EOF before SIGTERM. Default: 2000. */
  readonly closeGraceMs?: number;
  /** How long `close()` waits after SIGTERM before SIGKILL. Default: 3000. */
  readonly terminateGraceMs?: number;
  /** The most bytes of stderr kept for `TransportExit.stderrTail`. Default: 64 KiB. */
  readonly stderrTailBytes?: number;
  /**
   * What a SIGINT, SIGTERM or SIGHUP to the host program does to this CLI:
   * `"close-and-exit"` (default) closes every open CLI and exits with
   * 130/143/129 as a shell would; `"close"` closes them but leaves exiting to
   * the program's own signal listener (use it when the program has one);
   * `"ignore"` leaves this CLI alone. On `Deno.exit()` every open CLI gets
   * SIGTERM in any case.
   */
  readonly hostSignal?: HostSignalMode;
}

interface Lifecycle {
  readonly closeGraceMs: number;
  readonly terminateGraceMs: number;
  readonly stderrTailBytes: number;
  readonly hostSignal: HostSignalMode;
}

/**
 * Makes a transport factory that runs `claude` as a subprocess, for
 * `DuplexSession.start({ transport })`.
 *
 * The options are checked now, before anything is spawned. Each call of the
 * factory spawns one CLI: stdin, stdout and stderr piped, detached (the CLI
 * leads its own process group), always with
 * `--output-format stream-json --verbose --input-format stream-json` and
 * `--permission-prompt-tool=stdio`.
 *
 * Permissions: `--allow-run=<path of claude>` and `--allow-env` (to read
 * `CLAUDE_CLI`/`PATH` and pass the environment on). With only that, `close()`
 * signals the CLI process itself; with full `--allow-run` it signals the
 * CLI's whole process group (`Deno.kill` needs it), and with `--allow-all`
 * it also finds and ends the CLI's tool processes, which run in their own
 * process groups (Deno lets only `--allow-all` read `/proc`).
 *
 * @param options Where and how to run the CLI, and its flags.
 * @returns A factory that spawns the CLI and resolves with its transport.
 * @throws {DuplexError} `invalid_argument` for an option the CLI would refuse.
 * @throws {TypeError} For an option of the wrong type.
 *
 * @example Open a session on a local claude
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { subprocess } from "@duplex/claude/subprocess";
 *
 * await using session = await DuplexSession.start({
 *   transport: subprocess({ model: "sonnet", cwd: "/path/to/project" }),
 * });
 * const turn = await session.send("Say hi.");
 * console.log(turn.result.text);
 * ```
 */
export function subprocess(options: SubprocessOptions = {}): TransportFactory {
  const cliArgs = buildArgs(options);
  const lifecycle = checkOptions(options);
  return function openSubprocess(context?: TransportOpenContext): Promise<Transport> {
    return SubprocessTransport.open(options, cliArgs, lifecycle, context?.signal);
  };
}

function checkOptions(options: SubprocessOptions): Lifecycle {
  if (options.binary !== undefined && typeof options.binary !== "string") {
    throw new TypeError("Cannot use the subprocess options: binary must be a string");
  }
  if (options.binaryArgs !== undefined) {
    if (!Array.isArray(options.binaryArgs)) {
      throw new TypeError("Cannot use the subprocess options: binaryArgs must be an array");
    }
    for (const [i, arg] of options.binaryArgs.entries()) {
      if (typeof arg !== "string") {
        throw new TypeError(`Cannot use the subprocess options: binaryArgs[${i}] must be a string`);
      }
    }
  }
  if (
    options.cwd !== undefined && typeof options.cwd !== "string" && !(options.cwd instanceof URL)
  ) {
    throw new TypeError("Cannot use the subprocess options: cwd must be a string or a URL");
  }
  if (options.env !== undefined) {
    if (typeof options.env !== "object" || options.env === null) {
      throw new TypeError("Cannot use the subprocess options: env must be an object");
    }
    for (const [name, value] of Object.entries(options.env)) {
      if (value !== undefined && typeof value !== "string") {
        throw new TypeError(
          `Cannot use the subprocess options: env.${name} must be a string or undefined`,
        );
      }
    }
  }
  if (options.clearEnv !== undefined && typeof options.clearEnv !== "boolean") {
    throw new TypeError("Cannot use the subprocess options: clearEnv must be a boolean");
  }
  const hostSignal = options.hostSignal ?? "close-and-exit";
  if (!HOST_SIGNAL_MODES.includes(hostSignal)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot use the subprocess options: hostSignal must be one of ${
        HOST_SIGNAL_MODES.join(", ")
      }, got ${JSON.stringify(hostSignal)}`,
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

function duration(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot use the subprocess options: ${name} must be a number`);
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot use the subprocess options: ${name} must be a finite number of milliseconds >= 0, got ${value}`,
    );
  }
  return value;
}

function byteCount(value: unknown): number {
  if (value === undefined) return DEFAULT_STDERR_TAIL_BYTES;
  if (typeof value !== "number") {
    throw new TypeError("Cannot use the subprocess options: stderrTailBytes must be a number");
  }
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot use the subprocess options: stderrTailBytes must be a positive integer, got ${value}`,
    );
  }
  return value;
}

function childEnv(options: SubprocessOptions): Record<string, string> {
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

async function checkCwd(cwd: string | URL): Promise<void> {
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

function delay(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return {
    promise,
    cancel(): void {
      clearTimeout(timer);
    },
  };
}

/** How the child ended, as Deno reports it. */
interface ExitStatus {
  readonly code: number | null;
  readonly signal: string | null;
}

/** Why a write failed because the stream was torn down by the transport itself. */
const INPUT_TORN_DOWN = Symbol("input torn down");

/** One running `claude`, as a {@linkcode Transport}. */
class SubprocessTransport implements Transport, HostExitMember {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  readonly hostSignal: HostSignalMode;

  readonly #child: Deno.ChildProcess;
  readonly #pid: number;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  readonly #lifecycle: Lifecycle;
  readonly #tail: StderrTail;
  readonly #stdout: OutputPipe;
  readonly #stderr: LinePipe;
  readonly #status: Promise<ExitStatus>;
  readonly #descendants = new Map<number, ProcessRecord>();
  #exited = false;
  #requestedAtExit = false;
  #exit: TransportExit | undefined;
  #closeRequested = false;
  #inputEnded = false;
  #inputEndedByCaller = false;
  #inputEnding: Promise<void> | undefined;
  #writeFailed = false;
  #writeFailure: unknown = undefined;
  #closing: Promise<TransportExit> | undefined;
  #mayKill = true;
  readonly #marker: string;
  readonly #ended: Promise<TransportExit>;

  static async open(
    options: SubprocessOptions,
    cliArgs: readonly string[],
    lifecycle: Lifecycle,
    signal: AbortSignal | undefined,
  ): Promise<SubprocessTransport> {
    signal?.throwIfAborted();
    const marker = crypto.randomUUID();
    const env = { ...childEnv(options), [MARKER_VARIABLE]: marker };
    const lookup: ResolveBinaryOptions = {};
    if (options.binary !== undefined) Object.assign(lookup, { binary: options.binary });
    if (options.env !== undefined) Object.assign(lookup, { env: options.env });
    const program = await resolveBinary(lookup);
    if (options.cwd !== undefined) await checkCwd(options.cwd);
    signal?.throwIfAborted();
    const args = [...(options.binaryArgs ?? []), ...cliArgs];
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args,
        ...(options.cwd !== undefined && { cwd: options.cwd }),
        env,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        detached: true,
      }).spawn();
    } catch (error) {
      throw explainSpawnError(
        error,
        program,
        options.cwd === undefined ? undefined : String(options.cwd),
      );
    }
    const transport = new SubprocessTransport(
      child,
      describeCommand(program, args),
      lifecycle,
      marker,
    );
    if (signal?.aborted) {
      transport.#closing ??= transport.#shutdown(false);
      await transport.#closing;
      throw signal.reason;
    }
    return transport;
  }

  constructor(
    child: Deno.ChildProcess,
    description: string,
    lifecycle: Lifecycle,
    marker: string,
  ) {
    this.#marker = marker;
    this.#child = child;
    this.#pid = child.pid;
    this.#lifecycle = lifecycle;
    this.hostSignal = lifecycle.hostSignal;
    // Stdout chunks are the runtime's fresh read buffers, passed on untouched.
    this.info = { kind: "subprocess", pid: child.pid, description, freshChunks: true };
    this.#writer = child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    this.#tail = new StderrTail(lifecycle.stderrTailBytes, TAIL_LINES);
    this.#stdout = new OutputPipe(child.stdout);
    this.readable = this.#stdout.readable;
    this.#stderr = new LinePipe(child.stderr, this.#tail, {
      maxLineLength: MAX_STDERR_LINE,
      queueLines: STDERR_QUEUE_LINES,
      queueBytes: STDERR_QUEUE_BYTES,
    });
    this.stderr = this.#stderr.readable;
    this.#status = child.status.then(
      (status): ExitStatus => ({ code: status.code, signal: status.signal }),
      (): ExitStatus => ({ code: null, signal: null }),
    ).then((status) => {
      this.#exited = true;
      this.#requestedAtExit = this.#closeRequested;
      return status;
    });
    this.#ended = this.#watch();
    // During a close, `closed` waits for the whole ladder (descendants and marked processes
    // included): a program that exits as soon as its CLI did must not cut the sweep short.
    this.closed = this.#ended.then(async (exit) => {
      if (this.#closing) await this.#closing.catch(() => {});
      return exit;
    });
    registerForHostExit(this);
  }

  async #watch(): Promise<TransportExit> {
    const status = await this.#status;
    this.#tearDownInput();
    await Promise.all([this.#stdout.finish(PIPE_DRAIN_MS), this.#stderr.finish(PIPE_DRAIN_MS)]);
    const exit: TransportExit = {
      code: status.code,
      signal: status.signal,
      stderrTail: this.#tail.text(),
      requested: this.#requestedAtExit,
    };
    this.#exit = exit;
    // A close in progress unregisters when it has also ended the descendants.
    if (this.#closing === undefined) unregisterForHostExit(this);
    return exit;
  }

  write(line: string): Promise<void> {
    if (typeof line !== "string") {
      return Promise.reject(new TypeError("Cannot write to claude: the line must be a string"));
    }
    if (line.includes("\n")) {
      return Promise.reject(
        new DuplexError(
          "invalid_argument",
          "Cannot write to claude: the line contains a newline; pass one JSON text",
          { excerpt: excerptOf(line) },
        ),
      );
    }
    if (this.#inputEndedByCaller) {
      return Promise.reject(
        new DuplexError(
          "closed",
          "Cannot write to claude: its input was ended (endInput or close was called); " +
            "open a new transport",
        ),
      );
    }
    if (this.#exited || this.#writeFailed || this.#inputEnded) return this.#exitedError();
    const bytes = this.#encoder.encode(line + "\n");
    return this.#writer.write(bytes).then(undefined, (error: unknown) => {
      if (!this.#writeFailed) {
        this.#writeFailed = true;
        if (error !== INPUT_TORN_DOWN) this.#writeFailure = error;
      }
      return this.#exitedError();
    });
  }

  async #exitedError(): Promise<never> {
    let exit = this.#exit;
    if (exit === undefined) {
      const wait = delay(WRITE_FAILURE_EXIT_WAIT_MS);
      exit = await Promise.race([this.#ended, wait.promise.then(() => undefined)]);
      wait.cancel();
    }
    const cause = this.#writeFailure;
    const message = exit !== undefined
      ? `Cannot write to claude: the process has exited (${describeExit(exit)}); ` +
        `start a new session`
      : `Cannot write to claude: its input is closed (${
        cause instanceof Error ? cause.message : "pipe closed"
      }); start a new session`;
    throw new DuplexError("process_exited", message, {
      ...(cause !== undefined && { cause }),
      ...(exit !== undefined && { exit }),
    });
  }

  endInput(): Promise<void> {
    this.#inputEnded = true;
    this.#inputEndedByCaller = true;
    this.#inputEnding ??= this.#writer.close().then(() => {}, () => {});
    return this.#inputEnding;
  }

  close(): Promise<TransportExit> {
    this.#closing ??= this.#shutdown(true);
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * The ladder: stdin EOF and wait; SIGTERM to the group and wait; then
   * SIGTERM to the recorded descendants still alive, SIGKILL to the group,
   * a short wait, SIGKILL to the descendants; always reap the child.
   */
  async #shutdown(polite: boolean): Promise<TransportExit> {
    try {
      return await this.#ladder(polite);
    } finally {
      unregisterForHostExit(this);
    }
  }

  async #ladder(polite: boolean): Promise<TransportExit> {
    const { closeGraceMs, terminateGraceMs } = this.#lifecycle;
    if (!this.#exited) {
      this.#closeRequested = true;
      await this.#record();
    }
    if (polite) {
      void this.endInput();
      await this.#waitExit(closeGraceMs);
    } else {
      this.#inputEnded = true;
      this.#inputEndedByCaller = true;
    }
    if (!this.#exited) {
      await this.#record();
      this.#signalGroup("SIGTERM");
      await this.#waitExit(terminateGraceMs);
    }
    // Unblock a write the CLI never read.
    this.#tearDownInput();
    const leftovers = await this.#living();
    for (const record of leftovers) this.#signalDescendant(record, "SIGTERM");
    // Members of the CLI's group that outlived it, if it ended during this close (a CLI
    // that had exited before is left alone: its pid may belong to another process by now).
    const groupLeft = this.#exited && this.#requestedAtExit ? this.#signalGroup("SIGTERM") : false;
    if (!this.#exited) this.#signalGroup("SIGKILL");
    if (leftovers.length > 0 || groupLeft) {
      const grace = Math.min(terminateGraceMs, MAX_DESCENDANT_GRACE_MS);
      const deadline = Date.now() + grace;
      let alive = leftovers;
      while (alive.length > 0 && Date.now() < deadline) {
        const wait = delay(POLL_MS);
        await wait.promise;
        alive = await filterAlive(alive);
      }
      if (groupLeft && alive.length === 0) {
        const wait = delay(Math.min(grace, POLL_MS * 4));
        await wait.promise;
      }
      for (const record of alive) this.#signalDescendant(record, "SIGKILL");
      if (groupLeft) this.#signalGroup("SIGKILL");
    }
    await this.#status;
    // Whatever the CLI started and left behind (double-forked, reparented, own session).
    if (this.#mayKill) {
      await sweepMarked(this.#marker, Math.min(terminateGraceMs, MAX_DESCENDANT_GRACE_MS));
    }
    return await this.#ended;
  }

  /** Signals the process group and known descendants now, without waiting (host exit). */
  terminateNow(signal: "SIGTERM" | "SIGKILL"): void {
    if (!this.#exited) {
      this.#closeRequested = true;
      for (const record of findDescendantsSync(this.#pid)) {
        this.#descendants.set(record.pid, record);
      }
      this.#signalGroup(signal);
    }
    for (const record of this.#descendants.values()) {
      if (isAliveSync(record)) this.#signalDescendant(record, signal);
    }
    if (this.#mayKill) signalMarkedSync(this.#marker, signal);
  }

  #tearDownInput(): void {
    this.#inputEnded = true;
    this.#writer.abort(INPUT_TORN_DOWN).catch(() => {});
  }

  async #waitExit(ms: number): Promise<void> {
    if (this.#exited) return;
    const wait = delay(ms);
    await Promise.race([this.#status, wait.promise]);
    wait.cancel();
  }

  async #record(): Promise<void> {
    for (const record of await findDescendants(this.#pid)) {
      this.#descendants.set(record.pid, record);
    }
  }

  async #living(): Promise<ProcessRecord[]> {
    return await filterAlive([...this.#descendants.values()]);
  }

  /**
   * Sends a signal to the CLI's process group. Falls back to the CLI alone
   * without the permission for `Deno.kill`.
   *
   * @returns True if a process received it.
   */
  #signalGroup(signal: Deno.Signal): boolean {
    if (this.#mayKill) {
      try {
        Deno.kill(-this.#pid, signal);
        return true;
      } catch (error) {
        if (
          error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
        ) {
          this.#mayKill = false;
        }
        // Otherwise no such group is left (or groups are not supported here).
      }
    }
    if (this.#exited) return false;
    try {
      this.#child.kill(signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Sends a signal to a recorded descendant, and to its group if it leads one. */
  #signalDescendant(record: ProcessRecord, signal: Deno.Signal): void {
    if (!this.#mayKill) return;
    const targets = record.pgid === record.pid && record.pgid !== this.#pid
      ? [-record.pid, record.pid]
      : [record.pid];
    for (const target of targets) {
      try {
        Deno.kill(target, signal);
      } catch (error) {
        if (
          error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
        ) {
          this.#mayKill = false;
          return;
        }
      }
    }
  }
}

async function filterAlive(records: readonly ProcessRecord[]): Promise<ProcessRecord[]> {
  const alive = await Promise.all(records.map(isAlive));
  return records.filter((_, i) => alive[i]);
}
