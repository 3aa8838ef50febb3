/**
 * The transport that runs a real `claude` with `Deno.Command`: the only code
 * of the library that spawns processes.
 *
 * {@linkcode subprocess} checks the options (`subprocess_options.ts`) and
 * makes the factory; each call spawns one CLI (`_spawn.ts`). The transport
 * holds the input side (one writer for stdin, and its {@linkcode InputState})
 * and the output pipes (`_pipes.ts`); the process side, with its own state,
 * is a `CliProcess` (`_cli_process.ts`), ended by the close ladder
 * (`_close_ladder.ts`) or, when the host program goes, by the host-exit
 * registry (`_host_exit.ts`).
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import type { LaunchedCli } from "../../src/compat/cli_check.ts";
import { describeExit, DuplexError, excerptOf, type TransportExit } from "../../src/errors.ts";
import type {
  Transport,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "../../src/transport/transport.ts";
import { CliProcess } from "./_cli_process.ts";
import { climbCloseLadder } from "./_close_ladder.ts";
import { type HostExitMember, registerForHostExit, unregisterForHostExit } from "./_host_exit.ts";
import { LinePipe, OutputPipe } from "./_pipes.ts";
import { spawnCli, type Spawned } from "./_spawn.ts";
import { StderrTail } from "./_stderr_tail.ts";
import {
  type CheckedSubprocessOptions,
  checkSubprocessOptions,
  type CloseSettings,
  type HostSignalMode,
  type SubprocessOptions,
} from "./subprocess_options.ts";

/** The most lines the stderr tail keeps (the byte bound usually comes first). */
const TAIL_LINES = 1000;
/** The longest stderr line kept whole; the rest of a longer line is cut. */
const MAX_STDERR_LINE = 64 * 1024;
/** Unread `transport.stderr` lines kept for a slow reader (oldest dropped first). */
const STDERR_QUEUE_LINES = 10_000;
const STDERR_QUEUE_BYTES = 1024 * 1024;
/**
 * After the exit, how long to wait for the pipes to end (a descendant may
 * hold them): the one bound of the drain, which the session relies on.
 */
const PIPE_DRAIN_MS = 1000;
/** How long a failed write waits for the exit status, to report it. */
const WRITE_FAILURE_EXIT_WAIT_MS = 500;

/**
 * Makes a transport factory that runs `claude` as a subprocess, for
 * `DuplexSession.start({ transport })`.
 *
 * The options are checked now, before anything is spawned. Each call of the
 * factory spawns one CLI: stdin, stdout and stderr piped, detached (the CLI
 * leads its own process group), always with
 * `--output-format stream-json --verbose --input-format stream-json`,
 * `--permission-prompt-tool=stdio` and `--permission-mode` (`default`
 * unless `permissionMode` says otherwise). The transport's `info.cli` names
 * that mode, and the session ends (`unsupported`) when the CLI reports
 * another one before its first turn.
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
 * @throws {RangeError} For a duration out of range.
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
  const checked = checkSubprocessOptions(options);
  return function openSubprocess(context?: TransportOpenContext): Promise<Transport> {
    return SubprocessTransport.open(checked, context);
  };
}

/**
 * Where the CLI's input (stdin) is:
 * - `open`: writes go to the pipe;
 * - `ended`: the caller ended it (`endInput()` or `close()`): writes reject
 *   with `closed`, whatever happens to the pipe later;
 * - `broken`: the pipe is gone (a write failed, the CLI exited, or a close
 *   tore it down to unblock a write): writes reject with `process_exited`.
 *
 * `failure` is the first write failure, the cause those writes reject with
 * (`undefined` when the transport tore the pipe down itself).
 */
type InputState =
  | { readonly state: "open" }
  | { readonly state: "ended" | "broken"; readonly failure: unknown };

/** Why a write failed because the stream was torn down by the transport itself. */
const INPUT_TORN_DOWN = Symbol("input torn down");

/** One running `claude`, as a {@linkcode Transport}. */
class SubprocessTransport implements Transport, HostExitMember {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<string>;
  /** With `cli`: the permission mode asked for, which the session checks the CLI reports. */
  readonly info: TransportInfo & { readonly cli: LaunchedCli };
  readonly closed: Promise<TransportExit>;
  readonly hostSignal: HostSignalMode;
  readonly terminateGraceMs: number;

  readonly #process: CliProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  readonly #close: CloseSettings;
  readonly #tail: StderrTail;
  readonly #stdout: OutputPipe;
  readonly #stderr: LinePipe;
  readonly #ended: Promise<TransportExit>;
  #input: InputState = { state: "open" };
  #inputEnding: Promise<void> | undefined;
  #exit: TransportExit | undefined;
  #closing: Promise<TransportExit> | undefined;
  readonly #removePrivateFilesSync: () => void;

  static async open(
    checked: CheckedSubprocessOptions,
    context: TransportOpenContext | undefined,
  ): Promise<SubprocessTransport> {
    const signal = context?.signal;
    const marker = crypto.randomUUID();
    const spawned = await spawnCli(checked, marker, context);
    const transport = new SubprocessTransport(spawned, checked.close, marker);
    if (signal?.aborted) {
      transport.#closing ??= transport.#shutdown(false);
      await transport.#closing;
      throw signal.reason;
    }
    return transport;
  }

  constructor(spawned: Spawned, close: CloseSettings, marker: string) {
    const { child, description } = spawned;
    this.#removePrivateFilesSync = spawned.removePrivateFilesSync;
    this.#process = new CliProcess(child, marker);
    this.#close = close;
    this.hostSignal = close.hostSignal;
    this.terminateGraceMs = close.terminateGraceMs;
    // Stdout chunks are the runtime's fresh read buffers, passed on untouched.
    this.info = {
      kind: "subprocess",
      pid: child.pid,
      description,
      freshChunks: true,
      ...(Object.keys(spawned.initialize).length > 0 ? { initialize: spawned.initialize } : {}),
      ...(spawned.mirror ? { mirror: spawned.mirror } : {}),
      cli: spawned.cli,
    };
    this.#writer = child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    this.#tail = new StderrTail(close.stderrTailBytes, TAIL_LINES);
    this.#stdout = new OutputPipe(child.stdout);
    this.readable = this.#stdout.readable;
    this.#stderr = new LinePipe(child.stderr, this.#tail, {
      maxLineLength: MAX_STDERR_LINE,
      queueLines: STDERR_QUEUE_LINES,
      queueBytes: STDERR_QUEUE_BYTES,
    });
    this.stderr = this.#stderr.readable;
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
    const status = await this.#process.status;
    this.#tearDownInput();
    await Promise.all([this.#stdout.finish(PIPE_DRAIN_MS), this.#stderr.finish(PIPE_DRAIN_MS)]);
    const { life } = this.#process.state;
    const exit: TransportExit = {
      code: status.code,
      signal: status.signal,
      stderrTail: this.#tail.text(),
      requested: life.state === "exited" && life.requested,
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
    if (this.#input.state === "ended") {
      return Promise.reject(
        new DuplexError(
          "closed",
          "Cannot write to claude: its input was ended (endInput or close was called); " +
            "open a new transport",
        ),
      );
    }
    if (this.#input.state === "broken" || this.#process.exited) return this.#exitedError();
    const bytes = this.#encoder.encode(line + "\n");
    return this.#writer.write(bytes).then(undefined, (error: unknown) => {
      this.#writeFailed(error);
      return this.#exitedError();
    });
  }

  /* Keeps the first failure of a write as the cause of the rejections after it. */
  #writeFailed(error: unknown): void {
    const input = this.#input;
    const failure = error === INPUT_TORN_DOWN ? undefined : error;
    if (input.state === "open") this.#input = { state: "broken", failure };
    else if (input.failure === undefined) this.#input = { state: input.state, failure };
  }

  async #exitedError(): Promise<never> {
    let exit = this.#exit;
    if (exit === undefined) {
      using limit = deadline(WRITE_FAILURE_EXIT_WAIT_MS);
      exit = await abortable(this.#ended, limit.signal).catch(() => undefined);
    }
    const cause = this.#input.state === "open" ? undefined : this.#input.failure;
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
    this.#endInput();
    this.#inputEnding ??= this.#writer.close().then(() => {}, () => {});
    return this.#inputEnding;
  }

  /* Refuses later writes (the caller ended the input), keeping a failure seen before. */
  #endInput(): void {
    const input = this.#input;
    this.#input = { state: "ended", failure: input.state === "open" ? undefined : input.failure };
  }

  #tearDownInput(): void {
    if (this.#input.state === "open") this.#input = { state: "broken", failure: undefined };
    this.#writer.abort(INPUT_TORN_DOWN).catch(() => {});
  }

  close(): Promise<TransportExit> {
    this.#closing ??= this.#shutdown(true);
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Signals the CLI and what it started now, without waiting (the host's exit). */
  /** The host is going: no event loop will run the removal after the exit, so do it now. */
  cleanUpNow(): void {
    this.#removePrivateFilesSync();
  }

  signalNow(signal: "SIGTERM" | "SIGKILL"): void {
    this.#process.signalNow(signal);
  }

  /** Whether the CLI or what it started still runs (`undefined`: cannot tell). */
  runningNow(): boolean | undefined {
    return this.#process.runningNow();
  }

  /* A polite close ends the input with EOF and gives the CLI closeGraceMs; an impolite one
   * (the open was aborted) goes straight to SIGTERM. */
  async #shutdown(polite: boolean): Promise<TransportExit> {
    try {
      const input = {
        outputEnded: (): boolean => this.#stdout.reachedEnd,
        end: (): void => {
          if (polite) void this.endInput();
          else this.#endInput();
        },
        tearDown: (): void => this.#tearDownInput(),
      };
      await climbCloseLadder(this.#process, input, {
        closeGraceMs: polite ? this.#close.closeGraceMs : 0,
        terminateGraceMs: this.#close.terminateGraceMs,
      });
      return await this.#ended;
    } finally {
      unregisterForHostExit(this);
    }
  }
}
