// This module is browser compatible.
/**
 * What a transport gives the session so that it mirrors the CLI's
 * transcript to a store (`transport.info.mirror`), and the mirror's events.
 *
 * @module
 */

import type { SessionKey, SessionStore, SessionStoreEntry } from "./session_store.ts";

/** How the session batches and retries its appends. */
export interface MirrorOptions {
  /**
   * Flush a transcript's pending entries once this many wait.
   *
   * @default {500}
   */
  readonly maxBatchEntries?: number;
  /**
   * Flush once this many bytes (of JSON) wait.
   *
   * @default {1048576}
   */
  readonly maxBatchBytes?: number;
  /**
   * Flush this long after the first pending entry at the latest (and at the
   * end of each turn).
   *
   * @default {100}
   */
  readonly flushMs?: number;
  /**
   * Attempts per batch before the store counts as behind (then the local
   * transcript catches it up later).
   *
   * @default {3}
   */
  readonly attempts?: number;
  /**
   * How long one `append` may take; a timed-out one is not retried (it may
   * still land), the store is caught up from the local file instead.
   *
   * @default {60000}
   */
  readonly appendTimeoutMs?: number;
  /**
   * The first wait before a catch-up from the local transcript (doubling up
   * to `maxCatchUpDelayMs` while the store keeps failing).
   *
   * @default {1000}
   */
  readonly catchUpDelayMs?: number;
  /**
   * The longest wait between catch-ups: how long after the store is back
   * the transcript may still be behind. The relay's sessions use 5000 unless
   * its `cli.mirror` says otherwise (a client resuming the conversation on
   * another relay waits for the catch-up).
   *
   * @default {60000}
   */
  readonly maxCatchUpDelayMs?: number;
  /**
   * How long `close()` waits for pending appends and a last catch-up.
   *
   * @default {10000}
   */
  readonly closeFlushMs?: number;
}

/** A transport's mirroring: the store, how paths map to keys, the local file. */
export interface MirrorTarget {
  /** Where entries go. */
  readonly store: SessionStore;
  /**
   * The key of a transcript the CLI names in a `transcript_mirror` frame;
   * `undefined` for a path outside its projects folder (the frame is dropped
   * and reported).
   */
  keyOf(filePath: string): SessionKey | undefined;
  /**
   * Reads the transcript's local lines, for a catch-up after the store
   * failed (the local file is the source of truth). Without it, failed
   * batches are reported lost.
   */
  readLocal?(filePath: string): Promise<SessionStoreEntry[]>;
  /** Batching and retries. */
  readonly options?: MirrorOptions;
  /**
   * Called once after the mirror's last flush: `caughtUp` tells whether the
   * store holds everything. The transport may then remove a private local
   * copy; it returns where it kept the local transcript when the store is
   * behind (reported in a `dropped` event), if anywhere.
   */
  release?(caughtUp: boolean): Promise<string | undefined>;
}

/** What the mirror reports, as a session event of type `mirror`. */
export type MirrorEvent =
  /** A batch could not be appended after its attempts: the store is behind for this key. */
  | {
    readonly type: "mirror";
    readonly status: "failed";
    readonly key: SessionKey;
    readonly entries: number;
    readonly error: Error;
    /** When the catch-up from the local file will run, or `undefined` if it cannot (no local access). */
    readonly retryInMs: number | undefined;
  }
  /** The store was caught up from the local transcript. */
  | {
    readonly type: "mirror";
    readonly status: "caught_up";
    readonly key: SessionKey;
    /** Entries appended by the catch-up. */
    readonly entries: number;
  }
  /** A frame named a file outside the projects folder, or entries were lost (no local file to catch up from). */
  | {
    readonly type: "mirror";
    readonly status: "dropped";
    readonly key: SessionKey | undefined;
    readonly entries: number;
    readonly reason: string;
  };
