// This module is browser compatible.
/**
 * {@linkcode ScriptedCli}: an in-memory fake of the `claude` CLI that a test
 * scripts ("when the session writes X, emit Y").
 *
 * @module
 */

import { checkMs, deadline, sleep } from "../_deadline.ts";
import { DuplexError, excerptOf } from "../errors.ts";
import { isRecord } from "../protocol/guards.ts";
import type {
  Transport,
  TransportExit,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "../transport/transport.ts";
import { echoReply, type EchoState } from "./_echo.ts";
import { type Chunking, MemoryTransport } from "./_memory_transport.ts";

export type { Chunking };

/** Decides whether a rule applies to a line the session wrote. */
export type FrameMatcher = (frame: Record<string, unknown>) => boolean;

/**
 * A matcher, or a shorthand: a frame `type` (`"user"`), or `"type:subtype"`
 * where the subtype is `request.subtype` for `control_request`,
 * `response.subtype` for `control_response`, else `subtype`
 * (`"control_request:interrupt"`).
 */
export type FrameMatch = FrameMatcher | string;

/** "When the session writes a line that matches, reply." */
export interface ScriptRule {
  /** Which lines the rule answers. */
  match: FrameMatcher;
  /**
   * Answers a line: returns frames to emit (in order), or emits itself with
   * `cli.emit(...)`, or both. May be async. A throw is recorded in
   * {@linkcode ScriptedCli.errors}.
   */
  reply: (
    frame: Record<string, unknown>,
    cli: ScriptedCli,
  ) => void | Iterable<unknown> | Promise<void | Iterable<unknown>>;
  /** Remove the rule after it answered once. @default {false} */
  once?: boolean;
}

/** Options of {@linkcode ScriptedCli}. */
export interface ScriptedCliOptions {
  /** Rules, tried in order before those added with `on()`. */
  rules?: ScriptRule[];
  /**
   * Built-in behaviour for lines no rule answers: a user line gets
   * `system/init`, an assistant text `"Echo: <text>"` and a `result` (with
   * `command_lifecycle` frames when it carries a `uuid`; costs cumulative per
   * process, like the real CLI); `interrupt` gets `{still_queued: []}`;
   * `initialize` gets a small success; any other control request gets the
   * real CLI's `unsupported_request` error.
   * @default {false}
   */
  echo?: boolean;
  /** Exit with code 0 once input ends and pending replies are out. @default {echo} */
  exitOnEndInput?: boolean;
  /** The session id echo frames carry. @default {a random UUID} */
  sessionId?: string;
  /** How emitted output is cut into `Uint8Array` chunks on `readable`. @default {"line"} */
  chunking?: Chunking;
  /** Reported in `transport.info.pid`. */
  pid?: number;
}

/** How long {@linkcode ScriptedCli.nextWrite} waits by default, in milliseconds. */
const DEFAULT_NEXT_WRITE_TIMEOUT_MS = 5000;

/** Options of {@linkcode ScriptedCli.nextWrite}. */
export interface NextWriteOptions {
  /** How long to wait: 1 to 2^31-1 milliseconds, or `Infinity`. @default {5000} */
  timeoutMs?: number;
  /** Cancels the wait (rejects with `signal.reason`). */
  signal?: AbortSignal;
}

/** Options of {@linkcode ScriptedCli.exit}. */
export interface ScriptedExit {
  /** The exit code. @default {0, or null when a signal is given} */
  code?: number | null;
  /** The signal that ended the process, for example `"SIGKILL"`. @default {null} */
  signal?: string | null;
  /** A human-readable reason. */
  reason?: string;
  /** The stderr tail. @default {the last lines given to emitStderr} */
  stderrTail?: string;
}

interface Process {
  transport: MemoryTransport;
  opened: boolean;
  hung: boolean;
  /** Aborted when the process ends: replies not yet started are dropped. */
  life: AbortController;
  pending: Set<Promise<void>>;
  echo: EchoState;
}

interface Waiter {
  match: FrameMatcher;
  resolve: (frame: Record<string, unknown>) => void;
}

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
  #process: Process | undefined = undefined;
  #received: Record<string, unknown>[] = [];
  #claimed: boolean[] = [];
  #errors: Error[] = [];
  #waiters: Waiter[] = [];
  #opened = 0;
  #closeCalls = 0;

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
    return this.#received;
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
    pushFrames(this.#target().transport, frames);
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
    const matcher = match === undefined ? matchAny : toMatcher(match);
    let timeoutMs: number;
    try {
      options.signal?.throwIfAborted();
      timeoutMs = checkMs(
        options.timeoutMs ?? DEFAULT_NEXT_WRITE_TIMEOUT_MS,
        "Cannot get the next write: timeoutMs",
      );
    } catch (reason) {
      return Promise.reject(reason);
    }
    for (let i = 0; i < this.#received.length; i++) {
      if (!this.#claimed[i] && this.#safeMatch(matcher, this.#received[i]!)) {
        this.#claimed[i] = true;
        return Promise.resolve(this.#received[i]!);
      }
    }
    const what = typeof match === "string" ? ` matching "${match}"` : "";
    const limit = deadline(timeoutMs, {
      signal: options.signal,
      reason: () =>
        new DuplexError(
          "timeout",
          `Cannot get the next write${what}: none came within ${timeoutMs} ms`,
        ),
    });
    const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
    const settle = (): void => {
      limit[Symbol.dispose]();
      limit.signal.removeEventListener("abort", onAbort);
      const at = this.#waiters.indexOf(waiter);
      if (at >= 0) this.#waiters.splice(at, 1);
    };
    const onAbort = (): void => {
      settle();
      reject(limit.signal.reason);
    };
    const waiter: Waiter = {
      match: matcher,
      resolve(frame): void {
        settle();
        resolve(frame);
      },
    };
    limit.signal.addEventListener("abort", onAbort, { once: true });
    this.#waiters.push(waiter);
    return promise;
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

  #target(): Process {
    const current = this.#process;
    if (current !== undefined && !(current.opened && current.transport.ended)) return current;
    this.#process = this.#spawn();
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

  #spawn(): Process {
    const options = this.#options;
    const info: TransportInfo = {
      kind: "scripted",
      description: "ScriptedCli",
      ...(options.pid === undefined ? {} : { pid: options.pid }),
    };
    const process: Process = {
      transport: undefined as unknown as MemoryTransport,
      opened: false,
      hung: false,
      life: new AbortController(),
      pending: new Set(),
      echo: { sessionId: this.#sessionId, turns: 0 },
    };
    process.transport = new MemoryTransport(
      { info, chunking: options.chunking },
      {
        onWrite: (line) => this.#onWrite(process, line),
        onEndInput: () => void this.#onEndInput(process),
        onClose: (): Omit<TransportExit, "stderrTail" | "requested"> =>
          process.hung ? { code: null, signal: "SIGTERM" } : { code: 0, signal: null },
        onCloseCalled: () => {
          this.#closeCalls += 1;
        },
        onFinish: () => process.life.abort(),
      },
    );
    return process;
  }

  #onWrite(process: Process, line: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch (cause) {
      this.#badLine(line, "it is not JSON", cause);
      return;
    }
    if (!isRecord(frame)) {
      this.#badLine(line, "it is not a JSON object", undefined);
      return;
    }
    const index = this.#received.push(frame) - 1;
    this.#claimed.push(false);
    for (const waiter of this.#waiters) {
      if (this.#safeMatch(waiter.match, frame)) {
        this.#claimed[index] = true;
        waiter.resolve(frame);
        break;
      }
    }
    if (process.hung) return;
    // Answered on a later macrotask, as a real process would; dropped if the process ends first.
    const answered = sleep(0, { signal: process.life.signal }).then(
      () => this.#answer(process, frame),
      () => {},
    );
    process.pending.add(answered);
    answered.then(() => process.pending.delete(answered));
  }

  async #answer(process: Process, frame: Record<string, unknown>): Promise<void> {
    if (process.hung || process.transport.ended) return;
    const at = this.#rules.findIndex((rule) => this.#safeMatch(rule.match, frame));
    if (at < 0) {
      if (this.#options.echo) pushFrames(process.transport, echoReply(process.echo, frame));
      return;
    }
    const rule = this.#rules[at]!;
    if (rule.once) this.#rules.splice(at, 1);
    try {
      const frames = await rule.reply(frame, this);
      if (frames === undefined || frames === null) return;
      if (typeof frames === "string" || typeof frames[Symbol.iterator] !== "function") {
        throw new TypeError(
          "Cannot emit a rule's reply: it must return frames (an iterable) or nothing",
        );
      }
      if (!process.hung) pushFrames(process.transport, [...frames]);
    } catch (error) {
      this.#errors.push(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async #onEndInput(process: Process): Promise<void> {
    if (process.hung || !(this.#options.exitOnEndInput ?? this.#options.echo ?? false)) return;
    while (process.pending.size > 0 && !process.transport.ended) {
      await Promise.race([Promise.allSettled([...process.pending]), process.transport.closed]);
    }
    if (!process.hung) process.transport.finish({ code: 0, signal: null, requested: false });
  }

  #safeMatch(match: FrameMatcher, frame: Record<string, unknown>): boolean {
    try {
      return match(frame) === true;
    } catch (error) {
      this.#errors.push(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  }

  #badLine(line: string, why: string, cause: unknown): void {
    this.#errors.push(
      new DuplexError("protocol", `Cannot read a line the session wrote: ${why}`, {
        excerpt: excerptOf(line),
        cause,
      }),
    );
  }
}

function matchAny(): boolean {
  return true;
}

function pushFrames(transport: MemoryTransport, frames: unknown[]): void {
  if (frames.length === 0) return;
  transport.push(frames.map((frame) => `${JSON.stringify(frame)}\n`).join(""));
}

function subtypeOf(frame: Record<string, unknown>): unknown {
  if (frame.type === "control_request" && isRecord(frame.request)) return frame.request.subtype;
  if (frame.type === "control_response" && isRecord(frame.response)) return frame.response.subtype;
  return frame.subtype;
}

function toMatcher(match: FrameMatch): FrameMatcher {
  if (typeof match === "function") return match;
  const colon = match.indexOf(":");
  const type = colon < 0 ? match : match.slice(0, colon);
  const subtype = colon < 0 ? undefined : match.slice(colon + 1);
  return (frame) => frame.type === type && (subtype === undefined || subtypeOf(frame) === subtype);
}
