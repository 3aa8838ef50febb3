// This module is browser compatible.
/**
 * The transcript mirror: takes the CLI's `transcript_mirror` frames, appends
 * their entries to the store in batches (bounded by count, bytes and time,
 * flushed at each turn's end), retries with backoff, and when the store
 * stays down marks the transcript behind and catches the store up later from
 * the local file (the source of truth), without duplicates.
 *
 * @module
 */

import { errorOf } from "../_values.ts";
import { abortable, checkMs, deadline, sleep } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { TranscriptMirrorFrame } from "../protocol/status_frames.ts";
import type { MirrorEvent, MirrorOptions, MirrorTarget } from "../store/mirror_target.ts";
import {
  isSessionStoreEntry,
  type SessionKey,
  type SessionStoreEntry,
} from "../store/session_store.ts";

/** The checked mirror options. */
type MirrorSettings = Required<MirrorOptions>;
/** Identities remembered after a catch-up, to trim frames that repeat what it appended. */
const RECENT = 1000;

/** One transcript file's mirroring. */
interface Transcript {
  readonly key: SessionKey;
  /** The local file (where the target's `release` kept it, once lingering). */
  filePath: string;
  pending: SessionStoreEntry[];
  bytes: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Appends run one after another, in order. */
  chain: Promise<void>;
  /** Behind: the identity of the first entry the store lacks (the catch-up starts there). */
  behind: string | undefined;
  /** After a catch-up: the identities it appended (frames still in the pipe repeat some). */
  recent: Set<string> | undefined;
  catchUpTimer: ReturnType<typeof setTimeout> | undefined;
  catchUpDelay: number;
}

/** The last part of a path. */
function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The identity of an entry: its uuid, else its JSON. */
function identity(entry: SessionStoreEntry): string {
  return typeof entry.uuid === "string" ? `u:${entry.uuid}` : `j:${JSON.stringify(entry)}`;
}

/**
 * Checks mirror options and applies their defaults.
 *
 * @param options The options as given.
 * @returns The settings.
 * @throws {RangeError} For a count below 1 or a duration out of range.
 */
export function checkMirrorOptions(options: MirrorOptions = {}): MirrorSettings {
  const what = "Cannot mirror the transcript";
  const count = (name: keyof MirrorOptions, fallback: number): number => {
    const value = options[name];
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`${what}: ${name} must be a positive integer, got ${value}`);
    }
    return value;
  };
  const ms = (name: keyof MirrorOptions, fallback: number): number =>
    options[name] === undefined ? fallback : checkMs(options[name], `${what}: ${name}`);
  return {
    maxBatchEntries: count("maxBatchEntries", 500),
    maxBatchBytes: count("maxBatchBytes", 1024 * 1024),
    flushMs: ms("flushMs", 100),
    attempts: count("attempts", 3),
    appendTimeoutMs: ms("appendTimeoutMs", 60_000),
    catchUpDelayMs: ms("catchUpDelayMs", 1000),
    maxCatchUpDelayMs: ms("maxCatchUpDelayMs", 60_000),
    closeFlushMs: ms("closeFlushMs", 10_000),
  };
}

/**
 * How long a closed mirror whose store is still behind keeps catching it up
 * (a relay's ended sessions: another relay resuming the conversation waits
 * for their turns, see `adapters/relay/_relay.ts`).
 */
export interface MirrorLinger {
  /** Ends the lingering at once (the relay closes, or another relay took the conversation). */
  readonly signal: AbortSignal;
  /** How long after the close's bound it keeps at it. */
  readonly forMs: number;
}

/** Mirrors one session's transcripts to a store. */
export class TranscriptMirror {
  readonly #target: MirrorTarget;
  readonly #publish: (event: MirrorEvent) => void;
  readonly #settings: MirrorSettings;
  readonly #transcripts = new Map<string, Transcript>();
  #closed = false;
  /** The catch-ups a close with `linger` left running. */
  readonly #lingering: Promise<void>[] = [];

  /**
   * @param target The store, key mapping and local reader.
   * @param publish Reports failures, catch-ups and drops.
   */
  constructor(target: MirrorTarget, publish: (event: MirrorEvent) => void) {
    this.#target = target;
    this.#publish = publish;
    this.#settings = checkMirrorOptions(target.options);
  }

  /** Takes one `transcript_mirror` frame. */
  take(frame: TranscriptMirrorFrame): void {
    const key = this.#target.keyOf(frame.filePath);
    const entries = frame.entries.filter(isSessionStoreEntry);
    if (!key || entries.length < frame.entries.length) {
      this.#publish({
        type: "mirror",
        status: "dropped",
        key,
        entries: key ? frame.entries.length - entries.length : frame.entries.length,
        reason: key
          ? "entries that are not objects with a string type"
          : `a transcript outside the CLI's projects folder: ${frame.filePath}`,
      });
      if (!key) return;
    }
    const transcript = this.#transcript(key, frame.filePath);
    let fresh = entries;
    if (transcript.recent) {
      fresh = entries.filter((entry) => !transcript.recent!.has(identity(entry)));
      if (fresh.length === entries.length) transcript.recent = undefined;
    }
    // Behind: the local file has these lines; the catch-up appends them.
    if (transcript.behind !== undefined || fresh.length === 0) return;
    for (const entry of fresh) {
      transcript.pending.push(entry);
      transcript.bytes += JSON.stringify(entry).length;
    }
    const { maxBatchEntries, maxBatchBytes, flushMs } = this.#settings;
    if (transcript.pending.length >= maxBatchEntries || transcript.bytes >= maxBatchBytes) {
      this.#flush(transcript);
    } else {
      transcript.timer ??= setTimeout(() => this.#flush(transcript), flushMs);
    }
  }

  /** A turn ended: flushes every transcript now. */
  flushAll(): void {
    for (const transcript of this.#transcripts.values()) this.#flush(transcript);
  }

  /**
   * Flushes what waits, tries a last catch-up of what is behind, and stops
   * (bounded by `closeFlushMs`). With `linger`, a transcript still behind is
   * caught up in the background after that, from where the target's
   * `release` kept it, backing off, for `linger.forMs` at most or until its
   * signal aborts; its end is reported as a catch-up or a drop.
   *
   * @param linger Keep catching the store up after the close, when given.
   */
  async close(linger?: MirrorLinger): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.flushAll();
    using limit = deadline(this.#settings.closeFlushMs);
    // Each transcript's last appends and catch-ups; one that has not ended when the bound passes
    // counts as behind (an append or a catch-up in flight has not landed).
    const caughtUp = new Set<Transcript>();
    const work = new Map<Transcript, Promise<void>>();
    for (const transcript of this.#transcripts.values()) {
      work.set(
        transcript,
        (async () => {
          clearTimeout(transcript.catchUpTimer);
          await transcript.chain;
          // A store back within the bound gets every line: retry, backing off, until it passes.
          await this.#keepCatchingUp(transcript, limit.signal);
          if (transcript.behind === undefined) caughtUp.add(transcript);
        })(),
      );
    }
    await abortable(Promise.all(work.values()), limit.signal).catch(() => {});
    const behind: Transcript[] = [];
    for (const transcript of this.#transcripts.values()) {
      clearTimeout(transcript.timer);
      clearTimeout(transcript.catchUpTimer);
      if (!caughtUp.has(transcript)) behind.push(transcript);
    }
    const kept = await this.#target.release?.(behind.length === 0).catch(() => undefined);
    for (const transcript of behind) {
      // The target's release may have moved the file: the main transcript is where it kept it
      // (a subagent's, moved along with it, is not followed).
      const moved = kept !== undefined && kept !== transcript.filePath;
      const follows = !moved || basename(kept) === basename(transcript.filePath);
      if (linger !== undefined && follows && !linger.signal.aborted) {
        if (moved) transcript.filePath = kept;
        this.#lingering.push(this.#linger(transcript, work.get(transcript)!, linger, kept));
      } else this.#dropped(transcript, kept);
    }
  }

  /** Settles once the catch-ups a close with `linger` left running have ended. Never rejects. */
  get lingering(): Promise<void> {
    return Promise.all(this.#lingering).then(() => {});
  }

  /* Catches the store up until it holds everything, or `signal` aborts. */
  async #keepCatchingUp(transcript: Transcript, signal: AbortSignal): Promise<void> {
    while (transcript.behind !== undefined && !signal.aborted) {
      await this.#catchUp(transcript, signal);
      if (transcript.behind === undefined) break;
      await sleep(transcript.catchUpDelay, { signal }).catch(() => {});
    }
  }

  async #linger(
    transcript: Transcript,
    closing: Promise<void>,
    linger: MirrorLinger,
    kept: string | undefined,
  ): Promise<void> {
    using limit = deadline(linger.forMs, { signal: linger.signal });
    await abortable(closing, limit.signal).catch(() => {}); // the close's append or catch-up
    if (transcript.behind === undefined && !limit.signal.aborted) return; // it landed
    await sleep(transcript.catchUpDelay, { signal: limit.signal }).catch(() => {});
    await this.#keepCatchingUp(transcript, limit.signal);
    if (transcript.behind !== undefined) this.#dropped(transcript, kept);
  }

  #dropped(transcript: Transcript, kept: string | undefined): void {
    this.#publish({
      type: "mirror",
      status: "dropped",
      key: transcript.key,
      entries: 0,
      reason: "the store is still behind at the end; the local transcript " +
        (kept ? `is kept at ${kept}` : "stays in the CLI's folder") +
        " (importSessionToStore copies it later)",
    });
  }

  #transcript(key: SessionKey, filePath: string): Transcript {
    let transcript = this.#transcripts.get(filePath);
    if (!transcript) {
      transcript = {
        key,
        filePath,
        pending: [],
        bytes: 0,
        timer: undefined,
        chain: Promise.resolve(),
        behind: undefined,
        recent: undefined,
        catchUpTimer: undefined,
        catchUpDelay: this.#settings.catchUpDelayMs,
      };
      this.#transcripts.set(filePath, transcript);
    }
    return transcript;
  }

  #flush(transcript: Transcript): void {
    clearTimeout(transcript.timer);
    transcript.timer = undefined;
    if (transcript.pending.length === 0) return;
    const batch = transcript.pending;
    transcript.pending = [];
    transcript.bytes = 0;
    transcript.chain = transcript.chain.then(async () => {
      if (transcript.behind !== undefined) return; // the catch-up covers it
      try {
        await this.#append(transcript.key, batch);
      } catch (error) {
        this.#fellBehind(transcript, batch, error);
      }
    });
  }

  /* Appends with retries; a timeout is not retried (the call may still land). */
  async #append(key: SessionKey, batch: readonly SessionStoreEntry[], signal?: AbortSignal) {
    const { attempts, appendTimeoutMs } = this.#settings;
    for (let attempt = 1;; attempt++) {
      using limit = deadline(appendTimeoutMs, {
        signal,
        reason: () =>
          new DuplexError(
            "timeout",
            `The session store's append did not settle within ${appendTimeoutMs} ms`,
          ),
      });
      try {
        await abortable(this.#target.store.append(key, batch), limit.signal);
        return;
      } catch (error) {
        if (limit.expired || signal?.aborted || attempt >= attempts) throw error;
      }
      await sleep(100 * 2 ** (attempt - 1), signal ? { signal } : {});
    }
  }

  #fellBehind(transcript: Transcript, batch: readonly SessionStoreEntry[], error: unknown): void {
    transcript.behind ??= identity(batch[0]!); // keep the earliest
    transcript.pending = [];
    transcript.bytes = 0;
    const canCatchUp = this.#target.readLocal !== undefined;
    this.#publish({
      type: "mirror",
      status: "failed",
      key: transcript.key,
      entries: batch.length,
      error: errorOf(error),
      retryInMs: canCatchUp ? transcript.catchUpDelay : undefined,
    });
    if (canCatchUp) this.#scheduleCatchUp(transcript);
    else {
      transcript.behind = undefined;
      this.#publish({
        type: "mirror",
        status: "dropped",
        key: transcript.key,
        entries: batch.length,
        reason: "the store failed and the transport cannot read the local transcript",
      });
    }
  }

  #scheduleCatchUp(transcript: Transcript): void {
    if (this.#closed) return;
    clearTimeout(transcript.catchUpTimer);
    transcript.catchUpTimer = setTimeout(() => {
      transcript.catchUpTimer = undefined;
      transcript.chain = transcript.chain.then(() => this.#catchUp(transcript));
    }, transcript.catchUpDelay);
  }

  /* Appends the local file's lines from the first one the store lacks. */
  async #catchUp(transcript: Transcript, signal?: AbortSignal): Promise<void> {
    const first = transcript.behind;
    if (first === undefined) return;
    try {
      const local = await this.#target.readLocal!(transcript.filePath);
      const ids = local.map(identity);
      const from = ids.indexOf(first);
      const missing = from < 0 ? local : local.slice(from);
      // From the read on, frames are queued again (behind this catch-up in the chain), less
      // the lines the read saw that frames still in the pipe repeat.
      transcript.behind = undefined;
      transcript.recent = new Set(ids.slice(-RECENT));
      const { maxBatchEntries } = this.#settings;
      for (let at = 0; at < missing.length; at += maxBatchEntries) {
        await this.#append(transcript.key, missing.slice(at, at + maxBatchEntries), signal);
      }
      transcript.catchUpDelay = this.#settings.catchUpDelayMs;
      this.#publish({
        type: "mirror",
        status: "caught_up",
        key: transcript.key,
        entries: missing.length,
      });
    } catch (error) {
      transcript.behind = first; // the earliest line the store may lack
      transcript.pending = [];
      transcript.bytes = 0;
      const { maxCatchUpDelayMs } = this.#settings;
      transcript.catchUpDelay = Math.min(maxCatchUpDelayMs, transcript.catchUpDelay * 2);
      this.#publish({
        type: "mirror",
        status: "failed",
        key: transcript.key,
        entries: 0,
        error: errorOf(error),
        retryInMs: this.#closed ? undefined : transcript.catchUpDelay,
      });
      this.#scheduleCatchUp(transcript);
    }
  }
}
