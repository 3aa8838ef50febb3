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
  readonly filePath: string;
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

/** Mirrors one session's transcripts to a store. */
export class TranscriptMirror {
  readonly #target: MirrorTarget;
  readonly #publish: (event: MirrorEvent) => void;
  readonly #settings: MirrorSettings;
  readonly #transcripts = new Map<string, Transcript>();
  #closed = false;

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
   * (bounded by `closeFlushMs`).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.flushAll();
    using limit = deadline(this.#settings.closeFlushMs);
    const work = [...this.#transcripts.values()].map(async (transcript) => {
      clearTimeout(transcript.catchUpTimer);
      await transcript.chain;
      // A store back within the bound gets every line: retry, backing off, until it passes.
      while (transcript.behind !== undefined && !limit.signal.aborted) {
        await this.#catchUp(transcript, limit.signal);
        if (transcript.behind === undefined) break;
        await sleep(transcript.catchUpDelay, { signal: limit.signal }).catch(() => {});
      }
    });
    await abortable(Promise.all(work), limit.signal).catch(() => {});
    let behind: Transcript | undefined;
    for (const transcript of this.#transcripts.values()) {
      clearTimeout(transcript.timer);
      clearTimeout(transcript.catchUpTimer);
      if (transcript.behind !== undefined) behind ??= transcript;
    }
    const kept = await this.#target.release?.(behind === undefined).catch(() => undefined);
    if (behind) {
      this.#publish({
        type: "mirror",
        status: "dropped",
        key: behind.key,
        entries: 0,
        reason: "the store is still behind at the end; the local transcript " +
          (kept ? `is kept at ${kept}` : "stays in the CLI's folder") +
          " (importSessionToStore copies it later)",
      });
    }
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
