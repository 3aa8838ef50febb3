/**
 * The options of {@linkcode DirectorySessionStore} and what its `onSkip`
 * receives, with the constructor's check of a whole-number option.
 *
 * @module
 */

import type { SessionKey } from "../../../src/store/session_store.ts";

/** A line a {@linkcode DirectorySessionStore} skipped while reading a transcript. */
export interface DirectoryStoreSkip {
  /** The transcript. */
  readonly key: SessionKey;
  /** Its file. */
  readonly file: string;
  /**
   * `torn`: the last line has no newline (a writer died mid-write; the next
   * append cuts it off); otherwise the decoder's reason (`invalid_json`,
   * `not_an_object`, `line_too_long`, `noise`).
   */
  readonly kind: "torn" | "noise" | "invalid_json" | "not_an_object" | "line_too_long";
  /** Its size in bytes. */
  readonly bytes: number;
  /** Its first characters (at most 200). */
  readonly excerpt: string;
}

/** Options of the {@linkcode DirectorySessionStore} constructor. */
export interface DirectorySessionStoreOptions {
  /**
   * The store's clock (milliseconds since the epoch): each append stamps the
   * transcript file's modification time from it, one millisecond past the
   * project's previous stamp (any key's, any process's) when the clock has
   * not moved past it.
   *
   * @default {Date.now}
   */
  readonly clock?: () => number;
  /**
   * How long an append waits for another writer (another process) to
   * release the file's lock before it fails with a `timeout` error.
   *
   * @default {30000}
   */
  readonly lockTimeoutMs?: number;
  /**
   * `fsync` each append before it resolves (survives a power loss, not only
   * a crash of the process; slower).
   *
   * @default {false}
   */
  readonly sync?: boolean;
  /**
   * The longest entry read back, in bytes of JSON; a longer line is skipped
   * (and reported) instead of held in memory.
   *
   * @default {67108864}
   */
  readonly maxLineBytes?: number;
  /**
   * How many keys' uuid indexes this object keeps in memory (least recently
   * used first out); an evicted key's index is rebuilt from its file.
   *
   * @default {64}
   */
  readonly indexCacheKeys?: number;
  /**
   * Called with each line skipped while reading (torn or not JSON).
   *
   * @default {undefined}
   */
  readonly onSkip?: (skip: DirectoryStoreSkip) => void;
  /**
   * Use a folder writable by group or others (mode & 0o022), which is
   * otherwise refused at first use: anyone who may write it may plant links
   * in it (which the store refuses) or replace its files.
   *
   * @default {false}
   */
  readonly allowSharedRoot?: boolean;
}

/** A whole-number option, checked (the constructor's message). */
export function wholeNumber(value: unknown, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot open a DirectorySessionStore: ${name} must be a number`);
  }
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(
      `Cannot open a DirectorySessionStore: ${name} must be a whole number of at least ${min}, got ${value}`,
    );
  }
  return value;
}
