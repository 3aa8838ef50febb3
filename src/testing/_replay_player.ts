// This module is browser compatible.
/**
 * The engine of {@linkcode ReplayCli}: plays a transcript's output, expects
 * its stdin from the session, learns the ids the session makes up, and ends
 * as the recording did. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { checkMs, MAX_TIMER_MS, sleep } from "../_deadline.ts";
import { excerptOf, type TransportExit } from "../errors.ts";
import { isRecord } from "../_values.ts";
import type { TransportInfo } from "../transport/transport.ts";
import { describeFrame, matchLine, type MatchMode } from "./_line_match.ts";
import { formatMismatch, type Mismatch } from "./_mismatch_diff.ts";
import { MemoryTransport } from "./_memory_transport.ts";
import { WrittenLines } from "./_written_lines.ts";
import { redactJson, type Redactor, redactor } from "./redaction.ts";
import type { ReplayOptions } from "./replay_transport.ts";
import type { TranscriptEntry } from "./transcript.ts";

/** How long a replay waits for each expected write by default, in milliseconds. */
const DEFAULT_REPLAY_WAIT_MS = 5000;

/** How a replay ends, short of the stderr tail and whether it was requested. */
type Exit = Omit<TransportExit, "stderrTail" | "requested">;

/** A replay's options, checked once. */
export interface ReplaySettings {
  /** The options as given. */
  readonly options: ReplayOptions;
  /** How long to wait for each expected write. */
  readonly waitMs: number;
  /** How closely written lines are compared. */
  readonly mode: MatchMode;
  /** What to hide in each written line before it is compared, as `record()` hid it. */
  readonly redact: Redactor;
}

/**
 * Checks a replay's options.
 *
 * @param options The options given to `replay()`.
 * @returns The settings a {@linkcode ReplayPlayer} plays with.
 * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
 * @throws {TypeError} For a bad redaction rule.
 */
export function replaySettings(options: ReplayOptions): ReplaySettings {
  const what = "Cannot prepare a replay";
  return {
    options,
    waitMs: checkMs(options.waitTimeoutMs ?? DEFAULT_REPLAY_WAIT_MS, `${what}: waitTimeoutMs`),
    mode: options.strict ? "strict" : options.loose ? "loose" : "default",
    redact: redactor(options.redact, options.redactDefaults ?? true, what),
  };
}

/** Plays one transcript, once, on the transport it opens. */
export class ReplayPlayer {
  /** Resolves when the replay has ended: played to its end, mismatched, or closed. */
  readonly done: Promise<void>;
  #entries: readonly TranscriptEntry[];
  #options: ReplayOptions;
  #waitMs: number;
  #mode: MatchMode;
  #mismatches: string[] = [];
  #first: Mismatch | undefined = undefined;
  #lineNumbers: readonly number[] | undefined;
  #redact: Redactor;
  #lines = new WrittenLines();
  #ids = new Map<string, string>();
  #cancelled = new Map<string, number>();
  #index = 0;
  #complete = false;
  #transport: MemoryTransport | undefined = undefined;
  /** Aborted when the transport ends: cuts a timed gap short. */
  #stop = new AbortController();
  #resolveDone: () => void;

  /**
   * Prepares the replay of a transcript.
   *
   * @param entries The recorded session.
   * @param settings The checked options (see {@linkcode replaySettings}).
   * @param lineNumbers The transcript line of each entry, when known.
   */
  constructor(
    entries: readonly TranscriptEntry[],
    settings: ReplaySettings,
    lineNumbers?: readonly number[],
  ) {
    this.#entries = entries;
    this.#lineNumbers = lineNumbers;
    this.#options = settings.options;
    this.#waitMs = settings.waitMs;
    this.#mode = settings.mode;
    this.#redact = settings.redact;
    entries.forEach((entry, i) => {
      const id = entry.dir === "stdout" && entry.msg?.type === "control_cancel_request"
        ? entry.msg.request_id
        : undefined;
      if (typeof id === "string" && !this.#cancelled.has(id)) this.#cancelled.set(id, i);
    });
    const { promise, resolve } = Promise.withResolvers<void>();
    this.done = promise;
    this.#resolveDone = resolve;
  }

  /** What went wrong, one readable line each. */
  get mismatches(): readonly string[] {
    return this.#mismatches;
  }

  /** The first mismatch as a readable diff, once there is one. */
  get diff(): string | undefined {
    return this.#first === undefined ? undefined : formatMismatch(this.#first);
  }

  /** The next entry the replay expects from the session (for a report), if any. */
  get nextExpected(): string | undefined {
    for (let i = this.#index; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.dir === "stdin" && !this.#skipped(entry, i)) {
        return `${describeFrame(entry.msg!)} (${this.#where(entry, i)})`;
      }
      if (entry.dir === "meta" && entry.msg?.event === "stdin_end") {
        return `the end of input (${this.#where(entry, i)})`;
      }
    }
    return undefined;
  }

  #where(entry: TranscriptEntry, index: number): string {
    const line = this.#lineNumbers?.[index];
    return line === undefined ? `stdin #${entry.seq}` : `transcript line ${line}, seq ${entry.seq}`;
  }

  /** Every line the session wrote, parsed. */
  get written(): readonly Record<string, unknown>[] {
    return this.#lines.frames;
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
   * Opens the transport and starts playing; call it once.
   *
   * @returns The transport the session drives.
   */
  open(): MemoryTransport {
    const spawn = this.#entries.find((e) => e.dir === "meta" && e.msg?.event === "spawn")?.msg;
    const args = Array.isArray(spawn?.args) ? spawn.args.join(" ") : "";
    const of = typeof spawn?.bin === "string"
      ? `${spawn.bin} ${args}`.trimEnd()
      : typeof spawn?.description === "string"
      ? spawn.description
      : typeof spawn?.transport === "string"
      ? spawn.transport
      : undefined;
    const info: TransportInfo = {
      kind: "replay",
      description: of === undefined ? "replay" : `replay of ${of}`,
    };
    const transport = new MemoryTransport(
      { info, chunking: this.#options.chunking },
      {
        onWrite: (line) => this.#lines.add(line),
        onEndInput: () => this.#lines.wakeUp(),
        onClose: () => this.#onClose(),
        onFinish: () => {
          this.#stop.abort();
          this.#lines.wakeUp();
        },
      },
    );
    this.#transport = transport;
    this.#run(transport).finally(() => this.#resolveDone());
    return transport;
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

  #fail(t: MemoryTransport, message: string, detail?: Omit<Mismatch, "why" | "ids">): void {
    this.#mismatches.push(message);
    if (this.#first === undefined && detail !== undefined) {
      this.#first = { why: message, ids: new Map(this.#ids), ...detail };
    }
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
  #onClose(): Exit {
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
    const at = {
      line: this.#lineNumbers?.[this.#index],
      entry: this.#index + 1,
      seq: entry.seq,
      expected,
    };
    const wait = await this.#lines.wait(t, this.#waitMs);
    if (wait === "ended") return false;
    if (wait === "timeout" || wait === "input_ended") {
      const why = wait === "timeout"
        ? `got nothing within ${this.#waitMs} ms`
        : "but the session ended its input";
      const actual = wait === "timeout" ? undefined : "the end of input";
      const detail = { ...at, write: undefined, actual, path: undefined };
      this.#fail(t, `${where}: expected ${describeFrame(expected)}, ${why}`, detail);
      return false;
    }
    const written = this.#lines.shift();
    const frame = written.frame === undefined
      ? undefined
      : redactJson(written.frame, this.#redact) as Record<string, unknown>;
    if (frame === undefined) {
      this.#fail(
        t,
        `${where}: expected ${describeFrame(expected)}, got a line that is not a JSON object: ` +
          excerptOf(written.line, 80),
        { ...at, write: written.number, actual: excerptOf(written.line, 400), path: undefined },
      );
      return false;
    }
    const match = matchLine(expected, frame, this.#mode, this.#ids);
    if (!match.ok) {
      const detail = { ...at, write: written.number, actual: frame, path: match.path };
      this.#fail(t, `${where}: ${match.why}`, detail);
      return false;
    }
    for (const [recorded, actual] of match.learned) this.#ids.set(recorded, actual);
    return true;
  }

  async #expectInputEnd(t: MemoryTransport, entry: TranscriptEntry): Promise<boolean> {
    const where = `stdin_end #${entry.seq}`;
    const at = {
      line: this.#lineNumbers?.[this.#index],
      entry: this.#index + 1,
      seq: entry.seq,
      expected: "end of input" as const,
    };
    const wait = await this.#lines.wait(t, this.#waitMs);
    if (wait === "ended") return false;
    if (wait === "input_ended") return true;
    if (wait === "timeout") {
      this.#fail(
        t,
        `${where}: expected the end of input, got nothing within ${this.#waitMs} ms`,
        { ...at, write: undefined, actual: undefined, path: undefined },
      );
      return false;
    }
    const written = this.#lines.shift();
    const got = written.frame === undefined
      ? `a line that is not a JSON object: ${excerptOf(written.line, 80)}`
      : describeFrame(written.frame);
    this.#fail(t, `${where}: expected the end of input, got ${got}`, {
      ...at,
      write: written.number,
      actual: written.frame ?? excerptOf(written.line, 400),
      path: undefined,
    });
    return false;
  }
}

function exitOf(entry: TranscriptEntry): Exit {
  const msg = entry.msg ?? {};
  return {
    code: typeof msg.code === "number" ? msg.code : null,
    signal: typeof msg.signal === "string" ? msg.signal : null,
  };
}
