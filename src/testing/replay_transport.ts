// This module is browser compatible.
/**
 * {@linkcode replay}: a transport that plays a recorded CLI session back and
 * checks that the session under test writes what the recorded host wrote.
 *
 * @module
 */

import { DuplexError } from "../errors.ts";
import type { Transport, TransportFactory, TransportOpenContext } from "../transport/transport.ts";
import type { Chunking } from "./scripted_cli_options.ts";
import { ReplayPlayer } from "./_replay_player.ts";
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
  #player: ReplayPlayer;

  /**
   * Prepares a replay; nothing plays until the transport is opened.
   *
   * @param entries The recorded session (see {@linkcode parseTranscript}).
   * @param options Matching, timing and delivery options.
   * @throws {RangeError} When `waitTimeoutMs` is not 1 to 2^31-1 or `Infinity`.
   */
  constructor(entries: readonly TranscriptEntry[], options: ReplayOptions = {}) {
    this.#player = new ReplayPlayer(entries, options);
    this.done = this.#player.done;
    this.transport = (context: TransportOpenContext) => this.open(context);
  }

  /** What went wrong, one readable line each (`stdin #6: expected …, got …`). */
  get mismatches(): readonly string[] {
    return this.#player.mismatches;
  }

  /** Every line the session wrote, parsed. */
  get written(): readonly Record<string, unknown>[] {
    return this.#player.written;
  }

  /** True once the transcript was played to its end (its `exit` entry). */
  get complete(): boolean {
    return this.#player.complete;
  }

  /** The ids learned so far: recorded → what the session used. */
  get ids(): ReadonlyMap<string, string> {
    return this.#player.ids;
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
    if (this.#player.opened) {
      return Promise.reject(
        new DuplexError(
          "invalid_argument",
          "Cannot open the replay: a transcript plays once; call replay() again",
        ),
      );
    }
    return Promise.resolve(this.#player.open());
  }
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
