// This module is browser compatible.
/**
 * {@linkcode replay}: a transport that plays a recorded CLI session back and
 * checks that the session under test writes what the recorded host wrote.
 *
 * @module
 */

import { messageOf } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { Transport, TransportFactory, TransportOpenContext } from "../transport/transport.ts";
import type { Chunking } from "./scripted_cli_options.ts";
import { ReplayPlayer, type ReplaySettings, replaySettings } from "./_replay_player.ts";
import type { Redaction } from "./redaction.ts";
import { parseTranscript, type TranscriptEntry } from "./transcript.ts";

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
  /**
   * What to hide in each line the session writes before it is compared: the
   * rules the recording was made with (see {@linkcode record}), so that a
   * value hidden in the transcript matches the live one.
   */
  redact?: readonly Redaction[];
  /**
   * Hide Anthropic API keys (`sk-ant-…`) besides, as {@linkcode record} does
   * by default: a recording made without options replays without options.
   * @default {true}
   */
  redactDefaults?: boolean;
}

/** Where a replay's transcript comes from: its entries, or a URL (or absolute path) to fetch. */
export type ReplaySource = readonly TranscriptEntry[] | URL | string;

/**
 * Plays a recorded session to the session under test. Open it with
 * {@linkcode ReplayCli.transport}; when the code under test is done (its
 * session closed), call {@linkcode ReplayCli.verify}, or read
 * {@linkcode ReplayCli.mismatches} and {@linkcode ReplayCli.complete}.
 */
export class ReplayCli {
  /** Opens the replay (once). */
  readonly transport: TransportFactory;
  /** Resolves when the replay has ended: played to its end, mismatched, closed, or not loaded. */
  readonly done: Promise<void>;
  #settings: ReplaySettings;
  #source: readonly TranscriptEntry[] | URL;
  #player: ReplayPlayer | undefined = undefined;
  #loadError: unknown = undefined;
  #opened = false;
  #resolveDone: () => void;

  /**
   * Prepares a replay; nothing plays until the transport is opened (a URL is
   * fetched then).
   *
   * @param source The recorded session: its entries (see {@linkcode parseTranscript}),
   *   or a URL or absolute path of a transcript file.
   * @param options Matching, timing and delivery options.
   * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
   * @throws {TypeError} For a relative path, or a bad redaction rule.
   */
  constructor(source: ReplaySource, options: ReplayOptions = {}) {
    this.#settings = replaySettings(options);
    this.#source = Array.isArray(source) ? source : transcriptUrl(source as URL | string);
    const { promise, resolve } = Promise.withResolvers<void>();
    this.done = promise;
    this.#resolveDone = resolve;
    this.transport = (context: TransportOpenContext) => this.open(context);
  }

  /** What went wrong, one readable line each (`stdin #6: expected …, got …`). */
  get mismatches(): readonly string[] {
    return this.#player?.mismatches ?? [];
  }

  /**
   * The first mismatch as a readable diff: the transcript line and the
   * session's write compared, the first differing JSON path, and a line diff
   * of the recorded and the written frame; `undefined` while none.
   */
  get diff(): string | undefined {
    return this.#player?.diff;
  }

  /** Every line the session wrote, parsed. */
  get written(): readonly Record<string, unknown>[] {
    return this.#player?.written ?? [];
  }

  /** True once the transcript was played to its end (its `exit` entry). */
  get complete(): boolean {
    return this.#player?.complete ?? false;
  }

  /** The ids learned so far: recorded → what the session used. */
  get ids(): ReadonlyMap<string, string> {
    return this.#player?.ids ?? new Map();
  }

  /**
   * Opens the replay transport. A transcript plays once.
   *
   * @param context A signal that cancels opening.
   * @returns The transport.
   * @throws {DuplexError} Of kind `invalid_argument` on a second open or when the
   *   transcript cannot be fetched, `protocol` when a line of it is bad.
   */
  async open(context: Partial<TransportOpenContext> = {}): Promise<Transport> {
    context.signal?.throwIfAborted();
    if (this.#opened) {
      throw new DuplexError(
        "invalid_argument",
        "Cannot open the replay: a transcript plays once; call replay() again",
      );
    }
    this.#opened = true;
    let player: ReplayPlayer;
    try {
      const source = this.#source;
      const { entries, lines } = source instanceof URL
        ? await fetchTranscript(source, context.signal)
        : { entries: source, lines: undefined };
      player = this.#player = new ReplayPlayer(entries, this.#settings, lines);
    } catch (error) {
      this.#loadError = error;
      this.#resolveDone();
      throw error;
    }
    const transport = player.open();
    void player.done.then(this.#resolveDone);
    return transport;
  }

  /**
   * Checks that the code under test wrote what the recording holds, to its
   * end. Call it after the session has closed.
   *
   * @throws {DuplexError} Of kind `protocol` with {@linkcode ReplayCli.diff} as its
   *   message on a mismatch, or naming the next expected line when the
   *   session stopped early; `invalid_argument` when the replay was never
   *   opened; the fetch's error when the transcript could not be loaded.
   */
  verify(): void {
    if (this.#loadError !== undefined) throw this.#loadError;
    const player = this.#player;
    if (player === undefined) {
      throw new DuplexError(
        "invalid_argument",
        "Cannot verify the replay: it was never opened; give `replay.transport` to the session",
      );
    }
    const diff = player.diff ?? player.mismatches[0];
    if (diff !== undefined) throw new DuplexError("protocol", diff);
    if (!player.complete) {
      const next = player.nextExpected;
      throw new DuplexError(
        "protocol",
        "Cannot verify the replay: the session stopped before the end of the recording" +
          (next === undefined ? "" : `; next expected: ${next}`) +
          "; close the session before verifying",
      );
    }
  }
}

function transcriptUrl(source: URL | string): URL {
  if (source instanceof URL) return source;
  if (typeof source !== "string" || source === "") {
    throw new TypeError("Cannot prepare a replay: pass transcript entries, a URL or a path");
  }
  if (/^[a-z][a-z0-9+.-]+:/i.test(source)) return new URL(source);
  if (source.startsWith("/")) return new URL(`file://${encodeURI(source)}`);
  throw new TypeError(
    `Cannot prepare a replay of "${source}": a relative path needs a base; ` +
      `pass new URL("${source.startsWith(".") ? source : `./${source}`}", import.meta.url)`,
  );
}

/* Fetches and parses a transcript, keeping each entry's line number for the diff. */
async function fetchTranscript(
  url: URL,
  signal: AbortSignal | undefined,
): Promise<{ entries: TranscriptEntry[]; lines: number[] }> {
  const text = await fetch(url, signal ? { signal } : {}).then(async (response) => {
    if (response.ok) return await response.text();
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }).catch((cause: unknown) => {
    if (signal?.aborted) throw signal.reason;
    throw new DuplexError(
      "invalid_argument",
      `Cannot replay ${url.href}: ${messageOf(cause)}; ` +
        "check the path and read permission",
      { cause },
    );
  });
  const lines: number[] = [];
  text.split("\n").forEach((line, i) => line.trim() !== "" && lines.push(i + 1));
  return { entries: parseTranscript(text), lines };
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
 * @param source The recorded session: its entries, or the URL (or absolute
 *   path) of a transcript file, fetched when the transport opens.
 * @param options Matching, timing, delivery and redaction options.
 * @returns The replay; open it with `.transport`, check it with `.verify()`.
 * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
 * @throws {TypeError} For a relative path (pass a URL), or a bad redaction rule.
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
export function replay(source: ReplaySource, options: ReplayOptions = {}): ReplayCli {
  return new ReplayCli(source, options);
}
