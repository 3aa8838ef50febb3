// This module is browser compatible.
/**
 * {@linkcode ScriptedCli}: an in-memory fake of the `claude` CLI that a test
 * scripts ("when the session writes X, emit Y").
 *
 * @module
 */

import { errorOf } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { Transport, TransportFactory, TransportOpenContext } from "../transport/transport.ts";
import { toMatcher } from "./_frame_matcher.ts";
import type { Chunking } from "./scripted_cli_options.ts";
import { type ProcessHost, ScriptedProcess } from "./_scripted_process.ts";
import { WriteLog } from "./_write_log.ts";
import type {
  FrameMatch,
  FrameMatcher,
  NextWriteOptions,
  ScriptedCliOptions,
  ScriptedExit,
  ScriptRule,
} from "./scripted_cli_options.ts";

export type { Chunking };
export type * from "./scripted_cli_options.ts";

/**
 * An in-memory fake CLI. Each line the session writes is parsed, recorded in
 * {@linkcode ScriptedCli.received}, and answered (on a later macrotask, as a
 * real process would) by the first rule that matches, else by the `echo`
 * behaviour when enabled, else not at all. Frames can also be pushed at any
 * time with {@linkcode ScriptedCli.emit}.
 *
 * One "process" is open at a time. `transport` opens it; after it has ended,
 * calling `transport` again opens a fresh one (a restart). Frames emitted,
 * `exit()`, `failWrites()` and `hang()` apply to the open process, or, when
 * none is open, to the next one opened (so a test can queue output before the
 * session starts).
 *
 * `close()` ends the process with `{code: 0, signal: null, requested: true}`
 * (or `{code: null, signal: "SIGTERM"}` after `hang()`). A line that is not a
 * JSON object is recorded in {@linkcode ScriptedCli.errors}; nothing throws.
 *
 * @example Script a turn and read what the CLI writes
 * ```ts
 * import { assistantTextFrame, resultFrame, ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli()
 *   .on("user", () => [assistantTextFrame("Hi"), resultFrame({ text: "Hi" })]);
 * const transport = await cli.transport({ signal: AbortSignal.timeout(5000) });
 * await transport.write(JSON.stringify({ type: "user", message: { role: "user", content: "Hello" } }));
 * // `readable` yields bytes; with the default chunking, one chunk per reply (here two lines).
 * const reader = transport.readable.getReader();
 * const text = new TextDecoder().decode((await reader.read()).value);
 * const frames = text.trimEnd().split("\n").map((line) => JSON.parse(line));
 * assert.deepEqual(frames.map((frame) => frame.type), ["assistant", "result"]);
 * assert.equal(cli.received[0]?.type, "user");
 * reader.releaseLock();
 * assert.equal((await transport.close()).requested, true);
 * ```
 */
export class ScriptedCli {
  /** Opens the fake process (see the class doc for reopening). */
  readonly transport: TransportFactory;
  #options: ScriptedCliOptions;
  #rules: ScriptRule[];
  #sessionId: string;
  #process: ScriptedProcess | undefined = undefined;
  #log = new WriteLog(
    (match, frame) => this.#safeMatch(match, frame),
    (error) => this.#report(error),
  );
  #errors: Error[] = [];
  #opened = 0;
  #closeCalls = 0;
  #host: ProcessHost = {
    cli: this,
    read: (line) => this.#log.read(line),
    ruleFor: (frame) => this.#ruleFor(frame),
    report: (error) => this.#report(error),
    closeCalled: () => {
      this.#closeCalls += 1;
    },
  };

  /**
   * Makes a fake CLI. Nothing runs until `transport` is called.
   *
   * @param options Rules, echo, session id, chunking, reported info.
   */
  constructor(options: ScriptedCliOptions = {}) {
    const chunking = options.chunking;
    if (
      typeof chunking === "object" &&
      !(Number.isInteger(chunking.maxChunk) && chunking.maxChunk > 0)
    ) {
      throw new RangeError(
        "Cannot create ScriptedCli: chunking.maxChunk must be a positive integer",
      );
    }
    this.#options = options;
    this.#rules = [...(options.rules ?? [])];
    this.#sessionId = options.sessionId ?? crypto.randomUUID();
    this.transport = (context: TransportOpenContext) => this.#open(context);
  }

  /** Every line the session wrote, parsed, in order, across restarts. */
  get received(): readonly Record<string, unknown>[] {
    return this.#log.frames;
  }

  /** Lines that were not JSON objects (`protocol` errors) and errors thrown by rules. */
  get errors(): readonly Error[] {
    return this.#errors;
  }

  /** How many times `transport` opened a process. */
  get opened(): number {
    return this.#opened;
  }

  /** How many times `close()` was called, on all processes. */
  get closeCalls(): number {
    return this.#closeCalls;
  }

  /** True once the session ended the open process's input (`endInput()` or `close()`). */
  get inputEnded(): boolean {
    return this.#process?.transport.inputEnded ?? false;
  }

  /** The session id that `echo` frames carry. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /**
   * Adds a rule: lines that match get `reply`. The first matching rule (in the
   * order added, after `options.rules`) answers a line; later ones do not.
   *
   * @param match A matcher, or a shorthand like `"user"` or `"control_request:interrupt"`.
   * @param reply Returns the frames to emit, or emits them itself.
   * @param options `once`: remove the rule after one answer.
   * @returns This, for chaining.
   */
  on(match: FrameMatch, reply: ScriptRule["reply"], options: { once?: boolean } = {}): this {
    this.#rules.push({ match: toMatcher(match), reply, once: options.once ?? false });
    return this;
  }

  /**
   * Writes frames to the session, each as `JSON.stringify(frame) + "\n"`.
   *
   * @param frames The frames, in order.
   */
  emit(...frames: unknown[]): void {
    this.#target().emit(frames);
  }

  /**
   * Writes raw output (garbage, a partial line), cut per the chunking option.
   *
   * @param chunk The bytes or text, as is (no newline added).
   */
  emitRaw(chunk: string | Uint8Array): void {
    this.#target().transport.push(chunk);
  }

  /**
   * Writes one line to stderr; the last lines become the exit's `stderrTail`.
   *
   * @param line The line, without newline.
   */
  emitStderr(line: string): void {
    this.#target().transport.pushStderr(line);
  }

  /**
   * Resolves with the oldest line the session wrote that matches and that no
   * earlier `nextWrite` returned; waits for one if there is none yet. So a
   * test may call it before or after the session writes, and successive calls
   * return successive lines.
   *
   * @param match Which lines count (default: any).
   * @param options Timeout and signal.
   * @returns The parsed line.
   * @throws {DuplexError} Of kind `timeout` when none comes in time; rejects
   *   with `signal.reason` when aborted.
   * @throws {RangeError} When `timeoutMs` is not 1 to 2^31-1 or `Infinity`.
   */
  nextWrite(match?: FrameMatch, options: NextWriteOptions = {}): Promise<Record<string, unknown>> {
    return this.#log.next(match, options);
  }

  /**
   * Ends the process as if it exited by itself (`requested: false`): output
   * already emitted is still delivered, then `readable` ends and `closed`
   * resolves.
   *
   * @param exit Code (default 0), signal, reason, stderr tail.
   */
  exit(exit: ScriptedExit = {}): void {
    const signal = exit.signal ?? null;
    const code = exit.code !== undefined ? exit.code : signal === null ? 0 : null;
    this.#target().transport.finish({
      code,
      signal,
      requested: false,
      ...(exit.reason === undefined ? {} : { reason: exit.reason }),
      ...(exit.stderrTail === undefined ? {} : { stderrTail: exit.stderrTail }),
    });
  }

  /**
   * Makes later writes reject with a `process_exited` error whose cause is
   * `error` (a broken pipe), while the process keeps running.
   *
   * @param error The cause. @default {an Error "Broken pipe"}
   */
  failWrites(error?: unknown): void {
    this.#target().transport.writeError = error ?? new Error("Broken pipe");
  }

  /** Stops answering: rules and echo are off, input end does not exit, close() sends SIGTERM. */
  hang(): void {
    this.#target().hung = true;
  }

  #target(): ScriptedProcess {
    const current = this.#process;
    if (current !== undefined && !(current.opened && current.transport.ended)) return current;
    this.#process = new ScriptedProcess(this.#options, this.#host);
    return this.#process;
  }

  #open(context: TransportOpenContext): Promise<Transport> {
    try {
      context?.signal?.throwIfAborted();
    } catch (reason) {
      return Promise.reject(reason);
    }
    const current = this.#process;
    if (current !== undefined && current.opened && !current.transport.ended) {
      return Promise.reject(
        new DuplexError(
          "invalid_argument",
          "Cannot open the scripted CLI: its process is still running; close it before reopening",
        ),
      );
    }
    const process = this.#target();
    process.opened = true;
    this.#opened += 1;
    return Promise.resolve(process.transport);
  }

  #ruleFor(frame: Record<string, unknown>): ScriptRule | undefined {
    const at = this.#rules.findIndex((rule) => this.#safeMatch(rule.match, frame));
    if (at < 0) return undefined;
    const rule = this.#rules[at]!;
    if (rule.once) this.#rules.splice(at, 1);
    return rule;
  }

  #safeMatch(match: FrameMatcher, frame: Record<string, unknown>): boolean {
    try {
      return match(frame) === true;
    } catch (error) {
      this.#report(error);
      return false;
    }
  }

  #report(error: unknown): void {
    this.#errors.push(errorOf(error));
  }
}
