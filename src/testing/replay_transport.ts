// This module is browser compatible.
/**
 * {@linkcode replay}: a transport that plays a recorded CLI session back and
 * checks that the session under test writes what the recorded host wrote.
 *
 * @module
 */

import { abortable, checkMs, deadline, MAX_TIMER_MS, sleep } from "../_deadline.ts";
import { DuplexError, excerptOf, type TransportExit } from "../errors.ts";
import { isRecord } from "../protocol/guards.ts";
import type {
  Transport,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "../transport/transport.ts";
import { describeFrame, matchLine, type MatchMode } from "./_line_match.ts";
import { type Chunking, MemoryTransport } from "./_memory_transport.ts";
import type { TranscriptEntry } from "./transcript.ts";

/** Options of {@linkcode replay}. */
export interface ReplayOptions {
  /**
   * Recorded stdin entries to drop (not expected from the session). Always
   * dropped besides: `keep_alive` lines, and answers to control requests the
   * CLI had cancelled (a correct session does not send them).
   */
  skipStdin?: (entry: TranscriptEntry) => boolean;
  /**
   * Compare written lines deeply (every field; only the ids the session makes
   * up may differ). By default: same `type`; control requests: same subtype
   * and the recorded request fields; control responses: same subtype and
   * request id, and `behavior`, `updatedInput`, `message`, `interrupt` when
   * recorded (other payloads: the recorded fields); user lines: same text.
   * @default {false}
   */
  strict?: boolean;
  /** Compare only `type` and subtypes (and control response request ids). @default {false} */
  loose?: boolean;
  /**
   * Replay speed relative to the recording: `1` keeps the recorded gaps between
   * output lines, `10` is ten times faster. By default output is emitted as fast
   * as the session reads it.
   * @default {Infinity}
   */
  speed?: number;
  /**
   * How long to wait for each expected write (and for the end of input): 1 to
   * 2^31-1 milliseconds, or `Infinity`.
   * @default {5000}
   */
  waitTimeoutMs?: number;
  /** How output is cut into `Uint8Array` chunks on `readable`. @default {"line"} */
  chunking?: Chunking;
}

/** How long a replay waits for each expected write by default, in milliseconds. */
const DEFAULT_REPLAY_WAIT_MS = 5000;

interface Written {
  line: string;
  frame: Record<string, unknown> | undefined;
}

type Wait = "line" | "input_ended" | "ended" | "timeout";

/**
 * Plays a recorded session to the session under test. Open it with
 * {@linkcode ReplayCli.transport}; then await {@linkcode ReplayCli.done} and
 * check {@linkcode ReplayCli.mismatches}.
 */
export class ReplayCli {
  /** Opens the replay (once). */
  readonly transport: TransportFactory;
  /** Resolves when the replay has ended: played to its end, mismatched, or closed. */
  readonly done: Promise<void>;
  #entries: readonly TranscriptEntry[];
  #options: ReplayOptions;
  #waitMs: number;
  #mode: MatchMode;
  #mismatches: string[] = [];
  #written: Record<string, unknown>[] = [];
  #queue: Written[] = [];
  #ids = new Map<string, string>();
  #cancelled = new Map<string, number>();
  #index = 0;
  #complete = false;
  #transport: MemoryTransport | undefined = undefined;
  #wake: PromiseWithResolvers<void> = Promise.withResolvers();
  /** Aborted when the transport ends: cuts a timed gap short. */
  #stop = new AbortController();
  #resolveDone: () => void;

  /**
   * Prepares a replay; nothing plays until the transport is opened.
   *
   * @param entries The recorded session (see {@linkcode parseTranscript}).
   * @param options Matching, timing and delivery options.
   * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
   */
  constructor(entries: readonly TranscriptEntry[], options: ReplayOptions = {}) {
    this.#entries = entries;
    this.#options = options;
    this.#waitMs = checkMs(
      options.waitTimeoutMs ?? DEFAULT_REPLAY_WAIT_MS,
      "Cannot prepare a replay: waitTimeoutMs",
    );
    this.#mode = options.strict ? "strict" : options.loose ? "loose" : "default";
    entries.forEach((entry, i) => {
      const id = entry.dir === "stdout" && entry.msg?.type === "control_cancel_request"
        ? entry.msg.request_id
        : undefined;
      if (typeof id === "string" && !this.#cancelled.has(id)) this.#cancelled.set(id, i);
    });
    const { promise, resolve } = Promise.withResolvers<void>();
    this.done = promise;
    this.#resolveDone = resolve;
    this.transport = (context: TransportOpenContext) => this.open(context);
  }

  /** What went wrong, one readable line each (`stdin #6: expected …, got …`). */
  get mismatches(): readonly string[] {
    return this.#mismatches;
  }

  /** Every line the session wrote, parsed. */
  get written(): readonly Record<string, unknown>[] {
    return this.#written;
  }

  /** True once the transcript was played to its end (its `exit` entry). */
  get complete(): boolean {
    return this.#complete;
  }

  /** The ids learned so far: recorded → what the session used. */
  get ids(): ReadonlyMap<string, string> {
    return this.#ids;
  }

  /**
   * Opens the replay transport. A transcript plays once.
   *
   * @param context A signal that cancels opening.
   * @returns The transport.
   * @throws {DuplexError} Of kind `invalid_argument` on a second open.
   */
  open(context: Partial<TransportOpenContext> = {}): Promise<Transport> {
    try {
      context.signal?.throwIfAborted();
    } catch (reason) {
      return Promise.reject(reason);
    }
    if (this.#transport !== undefined) {
      return Promise.reject(
        new DuplexError(
          "invalid_argument",
          "Cannot open the replay: a transcript plays once; call replay() again",
        ),
      );
    }
    const spawn = this.#entries.find((e) => e.dir === "meta" && e.msg?.event === "spawn")?.msg;
    const args = Array.isArray(spawn?.args) ? spawn.args.join(" ") : "";
    const info: TransportInfo = {
      kind: "replay",
      description: spawn ? `replay of ${String(spawn.bin)} ${args}`.trimEnd() : "replay",
    };
    const transport = new MemoryTransport(
      { info, chunking: this.#options.chunking },
      {
        onWrite: (line) => this.#onWrite(line),
        onEndInput: () => this.#wakeUp(),
        onClose: () => this.#onClose(),
        onFinish: () => {
          this.#stop.abort();
          this.#wakeUp();
        },
      },
    );
    this.#transport = transport;
    this.#run(transport).finally(() => this.#resolveDone());
    return Promise.resolve(transport);
  }

  #onWrite(line: string): void {
    let frame: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) frame = value;
    } catch {
      frame = undefined;
    }
    if (frame !== undefined) this.#written.push(frame);
    if (frame?.type === "keep_alive") return;
    this.#queue.push({ line, frame });
    this.#wakeUp();
  }

  #wakeUp(): void {
    this.#wake.resolve();
    this.#wake = Promise.withResolvers();
  }

  /* Waits for a write, the end of input, the end of the transport, or the wait's deadline. */
  async #waitFor(t: MemoryTransport): Promise<Wait> {
    using limit = deadline(this.#waitMs);
    for (;;) {
      if (t.ended) return "ended";
      if (this.#queue.length > 0) return "line";
      if (t.inputEnded) return "input_ended";
      if (limit.signal.aborted) return "timeout";
      await abortable(this.#wake.promise, limit.signal).catch(() => {});
    }
  }

  /* Keeps a recorded gap between output lines; the end of the transport cuts it short. */
  async #gap(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    await sleep(Math.min(ms, MAX_TIMER_MS), { signal: this.#stop.signal }).catch(() => {});
  }

  #skipped(entry: TranscriptEntry, index: number): boolean {
    const msg = entry.msg;
    if (msg === undefined || msg.type === "keep_alive") return true;
    if (msg.type === "control_response" && isRecord(msg.response)) {
      const at = this.#cancelled.get(String(msg.response.request_id));
      if (at !== undefined && at < index) return true;
    }
    return this.#options.skipStdin?.(entry) ?? false;
  }

  #fail(t: MemoryTransport, message: string): void {
    this.#mismatches.push(message);
    t.finish({ code: null, signal: null, reason: `replay mismatch: ${message}`, requested: false });
  }

  #emit(t: MemoryTransport, entry: TranscriptEntry): void {
    if (entry.dir === "stderr") {
      t.pushStderr(entry.raw ?? JSON.stringify(entry.msg));
    } else if (entry.msg !== undefined) {
      const ids = this.#ids;
      const text = JSON.stringify(
        entry.msg,
        (_key, value) => (typeof value === "string" ? ids.get(value) ?? value : value),
      );
      t.push(`${text}\n`);
    } else {
      t.push(`${entry.raw ?? ""}\n`);
    }
  }

  #stdinLeft(from: number): boolean {
    for (let i = from; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.dir === "stdin" && !this.#skipped(entry, i)) return true;
    }
    return false;
  }

  /* close(): a polite end once nothing more is expected from the session, else SIGTERM. */
  #onClose(): Omit<TransportExit, "stderrTail" | "requested"> {
    const t = this.#transport!;
    if (this.#stdinLeft(this.#index)) {
      return { code: null, signal: "SIGTERM", reason: "closed before the transcript ended" };
    }
    for (; this.#index < this.#entries.length; this.#index++) {
      const entry = this.#entries[this.#index]!;
      if (entry.dir === "stdout" || entry.dir === "stderr") this.#emit(t, entry);
      if (entry.dir === "meta" && entry.msg?.event === "exit") {
        this.#complete = true;
        return exitOf(entry);
      }
    }
    this.#complete = true;
    return { code: null, signal: null, reason: "the transcript has no exit entry" };
  }

  async #run(t: MemoryTransport): Promise<void> {
    const speed = this.#options.speed ?? Infinity;
    let lastT: number | undefined;
    for (; this.#index < this.#entries.length; this.#index++) {
      if (t.ended) return;
      const entry = this.#entries[this.#index]!;
      if (entry.dir === "stdout" || entry.dir === "stderr") {
        if (lastT !== undefined && Number.isFinite(speed)) {
          await this.#gap((entry.tMs - lastT) / speed);
        }
        await t.waitForRoom();
        if (t.ended) return;
        this.#emit(t, entry);
      } else if (entry.dir === "stdin") {
        if (this.#skipped(entry, this.#index)) continue;
        if (!(await this.#expectLine(t, entry))) return;
      } else if (entry.msg?.event === "stdin_end") {
        if (!(await this.#expectInputEnd(t, entry))) return;
      } else if (entry.msg?.event === "exit") {
        this.#complete = true;
        t.finish({ ...exitOf(entry), requested: false });
        return;
      }
      lastT = entry.tMs;
    }
    if (t.ended) return;
    this.#complete = true;
    t.finish({
      code: null,
      signal: null,
      reason: "the transcript has no exit entry",
      requested: false,
    });
  }

  async #expectLine(t: MemoryTransport, entry: TranscriptEntry): Promise<boolean> {
    const expected = entry.msg!;
    const where = `stdin #${entry.seq}`;
    const wait = await this.#waitFor(t);
    if (wait === "ended") return false;
    if (wait === "timeout" || wait === "input_ended") {
      const why = wait === "timeout"
        ? `got nothing within ${this.#waitMs} ms`
        : "but the session ended its input";
      this.#fail(t, `${where}: expected ${describeFrame(expected)}, ${why}`);
      return false;
    }
    const written = this.#queue.shift()!;
    if (written.frame === undefined) {
      this.#fail(
        t,
        `${where}: expected ${describeFrame(expected)}, got a line that is not a JSON object: ` +
          excerptOf(written.line, 80),
      );
      return false;
    }
    const match = matchLine(expected, written.frame, this.#mode, this.#ids);
    if (!match.ok) {
      this.#fail(t, `${where}: ${match.why}`);
      return false;
    }
    for (const [recorded, actual] of match.learned) this.#ids.set(recorded, actual);
    return true;
  }

  async #expectInputEnd(t: MemoryTransport, entry: TranscriptEntry): Promise<boolean> {
    const where = `stdin_end #${entry.seq}`;
    const wait = await this.#waitFor(t);
    if (wait === "ended") return false;
    if (wait === "input_ended") return true;
    if (wait === "timeout") {
      this.#fail(t, `${where}: expected the end of input, got nothing within ${this.#waitMs} ms`);
      return false;
    }
    const written = this.#queue.shift()!;
    const got = written.frame === undefined
      ? `a line that is not a JSON object: ${excerptOf(written.line, 80)}`
      : describeFrame(written.frame);
    this.#fail(t, `${where}: expected the end of input, got ${got}`);
    return false;
  }
}

function exitOf(entry: TranscriptEntry): Omit<TransportExit, "stderrTail" | "requested"> {
  const msg = entry.msg ?? {};
  return {
    code: typeof msg.code === "number" ? msg.code : null,
    signal: typeof msg.signal === "string" ? msg.signal : null,
  };
}

/**
 * Prepares the replay of a recorded session.
 *
 * The transport emits the recorded stdout (and stderr) up to the next
 * recorded stdin line, then waits (bounded by `waitTimeoutMs`) for the
 * session to write a line and compares the two (see
 * {@linkcode ReplayOptions.strict}); at the recorded end of stdin it waits
 * for `endInput()` or `close()`; at the recorded exit it ends with that code.
 * The ids the session makes up (user line `uuid`, control `request_id`, hook
 * callback ids) are learned when lines match, and replaced in later output,
 * so responses and lifecycle frames refer to the session's own ids. The first
 * mismatch is recorded in {@linkcode ReplayCli.mismatches} and ends the
 * transport with `{code: null, signal: null, reason: "replay mismatch: …"}`.
 *
 * `close()` once nothing more is expected from the session plays the rest and
 * ends with the recorded exit (`requested: true`); earlier, it ends with
 * `signal: "SIGTERM"` and {@linkcode ReplayCli.complete} stays false.
 *
 * @param entries The recorded session.
 * @param options Matching, timing and delivery options.
 * @returns The replay; open it with `.transport`.
 * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
 *
 * @example Replay a one-turn session by hand
 * ```ts
 * import { parseTranscript, replay } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const user = { type: "user", message: { role: "user", content: "hi" }, uuid: "u-rec" };
 * const entries = parseTranscript([
 *   { seq: 0, t_ms: 0, dir: "stdin", msg: user },
 *   { seq: 1, t_ms: 1, dir: "stdout", msg: { type: "command_lifecycle", command_uuid: "u-rec", state: "queued" } },
 *   { seq: 2, t_ms: 2, dir: "meta", msg: { event: "stdin_end" } },
 *   { seq: 3, t_ms: 3, dir: "meta", msg: { event: "exit", code: 0, signal: null } },
 * ].map((e) => JSON.stringify(e)).join("\n"));
 *
 * const cli = replay(entries);
 * const transport = await cli.transport({ signal: new AbortController().signal });
 * await transport.write(JSON.stringify({ ...user, uuid: "u-live" }));
 * await transport.endInput();
 * const text = await new Response(transport.readable).text();
 * assert.equal(JSON.parse(text).command_uuid, "u-live");
 * assert.equal((await transport.closed).code, 0);
 * await cli.done;
 * assert.deepEqual(cli.mismatches, []);
 * assert.ok(cli.complete);
 * ```
 */
export function replay(
  entries: readonly TranscriptEntry[],
  options: ReplayOptions = {},
): ReplayCli {
  return new ReplayCli(entries, options);
}
