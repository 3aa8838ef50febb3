/* One transcript file of a DirectorySessionStore: reading it in bounded
 * chunks, and appending to it under an exclusive lock.
 *
 * An entry is committed when its newline is on disk: a last line without
 * one (a writer that died mid-write) is torn. Load skips it (and counts it);
 * the next append, holding the lock, cuts it off before writing.
 *
 * Cross-process dedup: every append holds `flock(LOCK_EX)` on the file
 * itself (the kernel frees it when a process dies, so no stale lock files),
 * re-checks that the path still names the locked file (a delete or a
 * replace while it waited makes it start over), and reads what other
 * processes appended since its last look to extend its uuid index. The
 * index is checked against the file (inode, size, the last 64 bytes it saw)
 * and rebuilt from the file when they differ.
 *
 * Files are opened through no link below the store's root (_no_links.ts). */

import { type DecodeDiagnostic, FrameDecoder } from "../../../src/codec/frame_decoder.ts";
import { abortable, deadline } from "../../../src/_deadline.ts";
import { DuplexError } from "../../../src/errors.ts";
import { newEntries, type SerializedEntry } from "../../../src/store/_store_checks.ts";
import type { SessionStoreEntry } from "../../../src/store/session_store.ts";
import { openInside } from "./_no_links.ts";

const CHUNK = 65_536;
const TAIL = 64;
const LF = 10;

/** What a file holds up to its last newline: the uuids, and where its lines end. */
export interface UuidIndex {
  readonly ino: number | null;
  /** Bytes up to and including the last newline. */
  readonly size: number;
  /** The last bytes before `size`, to tell the same file from a rewritten one. */
  readonly tail: Uint8Array;
  readonly uuids: Set<string>;
}

/** A line that was skipped: torn (no newline) or not a JSON object. */
export interface SkippedBytes {
  readonly kind: "torn" | Exclude<DecodeDiagnostic["kind"], "invalid_utf8">;
  readonly bytes: number;
  readonly excerpt: string;
}

async function readAt(file: Deno.FsFile, at: number, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  await file.seek(at, Deno.SeekMode.Start);
  let done = 0;
  while (done < length) {
    const n = await file.read(out.subarray(done));
    if (n === null) break;
    done += n;
  }
  return out.subarray(0, done);
}

/**
 * Reads a file from `from` in chunks, passing each complete line's object
 * to `onEntry`; returns the end of the last complete line and the torn tail.
 */
export async function scan(
  file: Deno.FsFile,
  from: number,
  onEntry: (entry: Record<string, unknown>) => void,
  options: { maxLineBytes?: number; onSkip?: (skip: SkippedBytes) => void } = {},
): Promise<{ committed: number; torn: number }> {
  const decoder = new FrameDecoder({
    onFrame: onEntry,
    ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
    onDiagnostic: (d) => {
      if (d.kind !== "invalid_utf8") {
        options.onSkip?.({ kind: d.kind, bytes: d.bytes, excerpt: d.excerpt });
      }
    },
  });
  await file.seek(from, Deno.SeekMode.Start);
  const buffer = new Uint8Array(CHUNK);
  let position = from;
  let committed = from;
  let tailStart: Uint8Array | undefined;
  for (;;) {
    const n = await file.read(buffer);
    if (n === null) break;
    const chunk = buffer.subarray(0, n);
    const last = chunk.lastIndexOf(LF);
    if (last >= 0) {
      committed = position + last + 1;
      tailStart = undefined;
    }
    if (last < n - 1 && tailStart === undefined) tailStart = chunk.slice(last + 1, last + 1 + 200);
    decoder.push(chunk);
    position += n;
  }
  const torn = position - committed;
  if (torn > 0) {
    options.onSkip?.({
      kind: "torn",
      bytes: torn,
      excerpt: new TextDecoder().decode(tailStart ?? new Uint8Array()),
    });
  }
  return { committed, torn };
}

/**
 * Loads every committed entry of a file.
 *
 * @returns The entries, or `null` when the file does not exist.
 */
export async function loadFile(
  path: string,
  options: {
    root: string;
    maxLineBytes?: number;
    onSkip?: (skip: SkippedBytes) => void;
  },
): Promise<SessionStoreEntry[] | null> {
  let file: Deno.FsFile;
  try {
    file = await openInside({
      root: options.root,
      path,
      action: "load from the store",
      read: true,
    });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  try {
    const entries: SessionStoreEntry[] = [];
    await scan(file, 0, (entry) => entries.push(entry as SessionStoreEntry), options);
    return entries;
  } finally {
    file.close();
  }
}

/** What an append under the lock needs. */
export interface LockedAppend {
  /** The store's root, which no link below may leave. */
  readonly root: string;
  readonly path: string;
  readonly batch: readonly SerializedEntry[];
  readonly index: UuidIndex | undefined;
  readonly lockTimeoutMs: number;
  /**
   * Stamps the file's mtime once new lines are written (the project's clock,
   * _project_clock.ts): `least` is one past its previous stamp (0 for a new
   * file), `apply` sets it.
   */
  readonly stamp: (least: number, apply: (mtime: number) => Promise<void>) => Promise<void>;
  readonly sync: boolean;
  /** Called with the file's path, once created (empty), before anything is written. */
  readonly onCreate: () => Promise<void>;
  readonly onSkip: (skip: SkippedBytes) => void;
  readonly maxLineBytes: number;
  /**
   * Called under the lock once new lines are written and stamped: the
   * entries written, the mtime stamped, and the file as it was before (its
   * committed size and mtime; size 0 for a new file).
   */
  readonly onWritten?: (written: WrittenBatch) => Promise<void>;
}

/** What one append wrote, for {@linkcode LockedAppend.onWritten}. */
export interface WrittenBatch {
  /** The entries written, in order (the batch's new ones). */
  readonly entries: readonly SessionStoreEntry[];
  /** The file's new mtime. */
  readonly mtime: number;
  /** The file's committed size before the append. */
  readonly previousSize: number;
  /** The file's mtime before the append (floored ms). */
  readonly previousMtime: number;
}

/**
 * Takes the exclusive lock on an open file within `ms`; on a timeout the file
 * is closed once the lock request settles (the caller must not close it).
 *
 * @throws {DuplexError} `timeout` naming the path and `lockTimeoutMs`.
 */
export async function lockWithin(file: Deno.FsFile, path: string, ms: number): Promise<void> {
  // deadline() sets no timer for Infinity (a setTimeout of Infinity fires at once).
  using limit = deadline(ms, {
    reason: () =>
      new DuplexError(
        "timeout",
        `Cannot append to the store: ${path} stayed locked by another writer for ` +
          `${ms} ms (lockTimeoutMs)`,
      ),
  });
  const locking = file.lock(true);
  try {
    await abortable(locking, limit.signal);
  } catch (error) {
    // The lock may still be granted later: release the file then.
    locking.then(() => file.close(), () => file.close());
    throw error;
  }
}

/* The open file's info, or `undefined` when the path no longer names it (a link does not). */
async function ifSameFile(path: string, file: Deno.FsFile): Promise<Deno.FileInfo | undefined> {
  try {
    const [named, open] = [await Deno.lstat(path), await file.stat()];
    return named.ino === open.ino && named.dev === open.dev ? open : undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

async function indexFor(
  file: Deno.FsFile,
  info: Deno.FileInfo,
  known: UuidIndex | undefined,
  append: LockedAppend,
) {
  let base = known;
  if (base) {
    const tail = base.size > 0
      ? await readAt(file, base.size - base.tail.length, base.tail.length)
      : new Uint8Array();
    const same = base.ino === info.ino && info.size >= base.size &&
      tail.length === base.tail.length && tail.every((byte, i) => byte === base!.tail[i]);
    if (!same) base = undefined;
  }
  // Extended in place: a failed append drops the index (DirectorySessionStore.append).
  const uuids = base?.uuids ?? new Set<string>();
  const { committed, torn } = await scan(file, base?.size ?? 0, (entry) => {
    if (typeof entry.uuid === "string") uuids.add(entry.uuid);
  }, { maxLineBytes: append.maxLineBytes, onSkip: append.onSkip });
  if (torn > 0) await file.truncate(committed);
  return { committed, uuids };
}

/**
 * Appends the new entries of a batch under the file's lock, then stamps the
 * file's mtime (past the previous one, and past every earlier stamp of the
 * project: `append.stamp`).
 *
 * @returns The file's index afterwards.
 */
export async function appendLocked(append: LockedAppend): Promise<UuidIndex> {
  const { path } = append;
  for (let attempt = 0;; attempt++) {
    const file = await openInside({
      root: append.root,
      path,
      action: "append to the store",
      read: true,
      append: true,
      create: true,
    });
    let locked = false;
    try {
      await lockWithin(file, path, append.lockTimeoutMs);
      locked = true;
      const info = await ifSameFile(path, file);
      if (!info) {
        if (attempt < 10) continue; // deleted or replaced while we waited: open it again
        throw new DuplexError(
          "invalid_argument",
          `Cannot append to the store: ${path} keeps changing`,
        );
      }
      if (info.size === 0) await append.onCreate();
      const { committed, uuids } = await indexFor(file, info, append.index, append);
      const fresh = newEntries(append.batch, uuids);
      const lines = fresh.map((entry) => entry.json);
      let size = committed;
      let written = new Uint8Array();
      if (lines.length > 0) {
        written = new TextEncoder().encode(`${lines.join("\n")}\n`);
        for (let done = 0; done < written.length;) {
          done += await file.write(written.subarray(done));
        }
        if (append.sync) await file.sync();
        size += written.length;
        const previousMtime = Math.floor(info.mtime?.getTime() ?? 0);
        const least = info.size > 0 ? previousMtime + 1 : 0;
        let stamped = least;
        await append.stamp(least, (mtime) => {
          stamped = mtime;
          return file.utime(new Date(), new Date(mtime));
        });
        await append.onWritten?.({
          entries: fresh.map((entry) => JSON.parse(entry.json)),
          mtime: stamped,
          previousSize: committed,
          previousMtime,
        });
      }
      const tail = written.length >= TAIL
        ? written.slice(-TAIL)
        : await readAt(file, Math.max(0, size - TAIL), Math.min(size, TAIL));
      return { ino: info.ino, size, tail, uuids };
    } finally {
      if (locked) file.close();
    }
  }
}
