/**
 * {@linkcode DirectorySessionStore}: the embedded default `SessionStore`,
 * one folder on the local disk, nothing to install.
 *
 * @module
 */

import { checkMs } from "../../../src/_deadline.ts";
import { KeyQueue } from "../../../src/store/_key_queue.ts";
import {
  checkKey,
  checkProjectKey,
  checkSessionKey,
  serializeEntries,
} from "../../../src/store/_store_checks.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
  StoredSessionRef,
} from "../../../src/store/session_store.ts";
import { absolutePath, explainFsError } from "../history/_paths.ts";
import {
  appendLocked,
  loadFile,
  type SkippedBytes,
  type UuidIndex,
  type WrittenBatch,
} from "./_jsonl_file.ts";
import { foldSummary, readSummary, summaryPath } from "./_summary_file.ts";
import type { SessionSummaryEntry } from "../../../src/store/session_summary.ts";
import { fieldOfListed, keyPaths, projectDir } from "./_key_paths.ts";
import { checkRoot, linkError, walkDirs, writeInside } from "./_no_links.ts";
import { stampInProject } from "./_project_clock.ts";
import {
  type DirectorySessionStoreOptions,
  type DirectoryStoreSkip,
  wholeNumber,
} from "./directory_store_options.ts";

export type { DirectorySessionStoreOptions, DirectoryStoreSkip };

/**
 * A `SessionStore` in one folder: a JSONL file per key
 * (`<dir>/<project>/<session>.jsonl`, subkeys in `<dir>/<project>/<session>/`),
 * the embedded default that works with nothing installed.
 *
 * - Key fields become file names that cannot leave the folder or collide:
 *   bytes other than `a-z 0-9 _ -` are written `%XX`, a name over 160
 *   characters becomes `~<sha256>` with the field kept in `~<sha256>.name`.
 *   Any non-empty `projectKey`, `sessionId` or `subpath` string works.
 * - Appends survive a crash mid-write: an entry counts once its newline is
 *   on disk; a torn last line is skipped on load (counted in
 *   `skippedLines`, reported to `onSkip`) and cut off by the next append.
 * - Dedup by `uuid` holds across processes: each append takes an exclusive
 *   `flock` on the file (freed by the kernel if the process dies), re-reads
 *   what other writers appended since its last look, and skips entries whose
 *   uuid the file holds. Appends of one object run in call order.
 * - `mtime` is the file's modification time, stamped from the store's
 *   clock and strictly increasing across the project (within a millisecond
 *   too): each append stamps its file under the project's clock
 *   (`<dir>/<project>/.clock`, its own `flock`), past every earlier stamp
 *   of the project, by any object or process on the folder. An append that
 *   resolved before another started has the smaller mtime; `listSessions`
 *   lists newest first, the last appended to first.
 * - `load` reads in 64 KiB chunks: memory is the entries plus one line.
 * - Each main transcript has a summary (`<session>.summary.json`, the
 *   official SDK's `foldSessionSummary` of its entries), folded by each
 *   append under the transcript's lock, so `listSessionSummaries` lists a
 *   project in one read per session; one missing, torn or older than its
 *   transcript is folded again from the whole transcript.
 * - No link is followed below the folder: a symbolic link planted in place
 *   of a project or subkey folder, a transcript, a `.name` sidecar or a
 *   `.clock` (or a transcript hard-linked elsewhere) makes every operation
 *   that would go through it fail with a `store_failed` error naming it, and
 *   nothing outside the folder is written, read or deleted. Each folder is
 *   `lstat`ed from the root down, and each file checked after its open (its
 *   identity against the path's); Deno has no `O_NOFOLLOW`, so a writer that
 *   swaps a folder for a link and back within one open may still make an
 *   empty file outside (only the folder's owner can: see below). The folder
 *   itself may be a link.
 * - The folder is made with mode 0700 (and its subfolders, files 0600); a
 *   folder writable by group or others is refused at the store's first use
 *   (`store_failed`, saying to `chmod go-w` it) unless `allowSharedRoot`.
 *
 * Permissions: `--allow-read` and `--allow-write` for the folder.
 *
 * @example Keep transcripts in a folder
 * ```ts ignore
 * import { DirectorySessionStore } from "@duplex/claude/history";
 *
 * const store = new DirectorySessionStore("/var/lib/claude-sessions");
 * await store.append({ projectKey: "tenant-1", sessionId: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f" }, [
 *   { type: "user", uuid: "u1", message: { role: "user", content: "hi" } },
 * ]);
 * ```
 */
export class DirectorySessionStore implements SessionStore {
  readonly #root: string;
  readonly #clock: () => number;
  readonly #lockTimeoutMs: number;
  readonly #sync: boolean;
  readonly #maxLineBytes: number;
  readonly #cacheKeys: number;
  readonly #onSkip: ((skip: DirectoryStoreSkip) => void) | undefined;
  readonly #allowShared: boolean;
  #rootChecked = false;
  readonly #indexes = new Map<string, UuidIndex>();
  /* Operations on one file by this object run in call order. */
  readonly #queue = new KeyQueue();
  #skipped = 0;

  /**
   * Opens (lazily creates) a store in a folder.
   *
   * @param dir The folder (created with mode 0700 on the first append).
   * @param options Clock, lock timeout, sync, limits, `onSkip`, `allowSharedRoot`.
   * @throws {TypeError} When `dir` is not a non-empty string or an option has the wrong type.
   * @throws {RangeError} When `lockTimeoutMs`, `maxLineBytes` or `indexCacheKeys` is out of range.
   */
  constructor(dir: string, options: DirectorySessionStoreOptions = {}) {
    if (typeof dir !== "string" || dir === "") {
      throw new TypeError("Cannot open a DirectorySessionStore: dir must be a non-empty string");
    }
    for (const name of ["clock", "onSkip"] as const) {
      if (options[name] !== undefined && typeof options[name] !== "function") {
        throw new TypeError(`Cannot open a DirectorySessionStore: ${name} must be a function`);
      }
    }
    if (options.allowSharedRoot !== undefined && typeof options.allowSharedRoot !== "boolean") {
      throw new TypeError("Cannot open a DirectorySessionStore: allowSharedRoot must be a boolean");
    }
    this.#allowShared = options.allowSharedRoot === true;
    this.#root = absolutePath(dir);
    this.#clock = options.clock ?? Date.now;
    this.#lockTimeoutMs = checkMs(
      options.lockTimeoutMs ?? 30_000,
      "Cannot open a DirectorySessionStore: lockTimeoutMs",
    );
    this.#sync = options.sync === true;
    this.#maxLineBytes = wholeNumber(options.maxLineBytes, 67_108_864, "maxLineBytes", 1);
    this.#cacheKeys = wholeNumber(options.indexCacheKeys, 64, "indexCacheKeys", 0);
    this.#onSkip = options.onSkip;
  }

  /** The store's folder (absolute). */
  get dir(): string {
    return this.#root;
  }

  /** How many lines reading has skipped so far (torn or not JSON). */
  get skippedLines(): number {
    return this.#skipped;
  }

  /* Whether the root exists (made with `create`), checked once: a folder, not shared. */
  async #useRoot(action: string, create: boolean): Promise<boolean> {
    if (this.#rootChecked) return true;
    const exists = await checkRoot(this.#root, {
      create,
      allowShared: this.#allowShared,
      action,
    });
    this.#rootChecked = exists;
    return exists;
  }

  #skipper(key: SessionKey, file: string): (skip: SkippedBytes) => void {
    return (skip) => {
      this.#skipped++;
      this.#onSkip?.({ key, file, ...skip });
    };
  }

  /**
   * Appends a batch: entries whose uuid the file already holds are skipped,
   * the others are written in one write, in order.
   *
   * @param key The transcript.
   * @param entries The entries.
   * @returns Nothing, once written (and synced with `sync`).
   * @throws {TypeError} For a bad key or entry (nothing is written).
   * @throws {DuplexError} `timeout` when another writer holds the lock past
   * `lockTimeoutMs`; `not_permitted` when the folder may not be written;
   * `store_failed` for a link below the folder or a shared folder.
   */
  async append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const action = "append to the store";
    checkKey(key, action);
    const batch = serializeEntries(entries, action);
    if (batch.length === 0) return;
    const paths = await keyPaths(this.#root, key);
    await this.#queue.run(paths.file, async () => {
      try {
        await this.#useRoot(action, true);
        await walkDirs(this.#root, paths.dir, { create: true, action });
        const index = await appendLocked({
          root: this.#root,
          path: paths.file,
          batch,
          index: this.#indexes.get(paths.file),
          lockTimeoutMs: this.#lockTimeoutMs,
          stamp: async (least, apply) => {
            const now = this.#clock();
            await stampInProject({
              root: this.#root,
              projectDir: paths.projectDir,
              file: paths.file,
              now: Math.floor(Number.isFinite(now) ? now : Date.now()),
              least,
              lockTimeoutMs: this.#lockTimeoutMs,
              apply,
            });
          },
          sync: this.#sync,
          maxLineBytes: this.#maxLineBytes,
          onSkip: this.#skipper(key, paths.file),
          onCreate: async () => {
            for (const [sidecar, field] of paths.sidecars) {
              await writeInside(this.#root, sidecar, field, action);
            }
          },
          ...(key.subpath === undefined
            ? {
              onWritten: (written: WrittenBatch) =>
                foldSummary(this.#root, key, paths.file, written, {
                  action,
                  maxLineBytes: this.#maxLineBytes,
                }),
            }
            : {}),
        });
        this.#remember(paths.file, index);
      } catch (error) {
        this.#indexes.delete(paths.file);
        throw explainFsError(error, action, this.#root, "write");
      }
    });
  }

  #remember(file: string, index: UuidIndex): void {
    this.#indexes.delete(file);
    if (this.#cacheKeys === 0) return;
    this.#indexes.set(file, index);
    while (this.#indexes.size > this.#cacheKeys) {
      this.#indexes.delete(this.#indexes.keys().next().value as string);
    }
  }

  /**
   * Loads a transcript's committed entries (a torn last line is skipped).
   *
   * @param key The transcript.
   * @returns Its entries, or `null` when it was never written (or was deleted).
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} `not_permitted` when the folder may not be read;
   * `store_failed` for a link below the folder or a shared folder.
   */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    checkKey(key, "load from the store");
    const { file } = await keyPaths(this.#root, key);
    try {
      if (!await this.#useRoot("load from the store", false)) return null;
      return await loadFile(file, {
        root: this.#root,
        maxLineBytes: this.#maxLineBytes,
        onSkip: this.#skipper(key, file),
      });
    } catch (error) {
      throw explainFsError(error, "load from the store", this.#root, "read");
    }
  }

  /* The `.jsonl` files of this store's making in `dir`, each as `row` makes it from its key
   * field and path (none when `dir` is missing; a file deleted meanwhile is left out). */
  async #listJsonl<T>(
    dir: string,
    action: string,
    row: (field: string, file: string) => T | Promise<T>,
  ): Promise<T[]> {
    const found: T[] = [];
    try {
      if (!await this.#useRoot(action, false)) return found;
      if (!await walkDirs(this.#root, dir, { create: false, action })) return found;
      for await (const entry of Deno.readDir(dir)) {
        if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue; // a link is not listed
        const field = await fieldOfListed(this.#root, dir, entry.name.slice(0, -".jsonl".length));
        if (field === undefined) continue;
        try {
          found.push(await row(field, `${dir}/${entry.name}`));
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error; // deleted while listed
        }
      }
      await walkDirs(this.#root, dir, { create: false, action }); // not swapped meanwhile
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return found;
      throw explainFsError(error, action, this.#root, "read");
    }
    return found;
  }

  /**
   * Lists a project's sessions (those with a main transcript), newest first:
   * the last appended to first. Files with one mtime (stamped before the
   * project had its clock, or by another program: the folder keeps no other
   * record of their order) go by session id.
   *
   * @param projectKey The project.
   * @returns Each session id with its file's modification time, newest first.
   * @throws {TypeError} When `projectKey` is not a non-empty string.
   * @throws {DuplexError} `store_failed` for a link below the folder or a shared folder.
   */
  async listSessions(projectKey: string): Promise<StoredSessionRef[]> {
    const action = "list the store's sessions";
    checkProjectKey(projectKey, action);
    const { dir } = await projectDir(this.#root, projectKey);
    const found = await this.#listJsonl(dir, action, async (sessionId, file) => ({
      sessionId,
      mtime: Math.floor((await Deno.lstat(file)).mtime?.getTime() ?? 0),
    }));
    return found.sort((a, b) =>
      b.mtime - a.mtime || (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0)
    );
  }

  /**
   * Lists the summaries of a project's sessions: each main transcript's
   * `<session>.summary.json`, folded by the appends that wrote it (see the
   * class); a transcript without one (written by an earlier version) is
   * left out until its next append, and a reader loads it instead.
   *
   * @param projectKey The project.
   * @returns The summaries, newest first.
   * @throws {TypeError} When `projectKey` is not a non-empty string.
   * @throws {DuplexError} `store_failed` for a link below the folder or a shared folder.
   */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const action = "list the store's session summaries";
    checkProjectKey(projectKey, action);
    const { dir } = await projectDir(this.#root, projectKey);
    const found = await this.#listJsonl(
      dir,
      action,
      (_sessionId, file) => readSummary(this.#root, file, action),
    );
    return found.flatMap((summary) => summary ? [summary] : []).sort((a, b) => b.mtime - a.mtime);
  }

  /**
   * Lists the subpaths stored under a session.
   *
   * @param key The session.
   * @returns The subpaths, sorted.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} `store_failed` for a link below the folder or a shared folder.
   */
  async listSubkeys(
    key: { readonly projectKey: string; readonly sessionId: string },
  ): Promise<string[]> {
    const action = "list the store's subkeys";
    const { subkeysDir } = await keyPaths(this.#root, checkSessionKey(key, action));
    // Names only: a subkey's file is not stat'ed.
    return (await this.#listJsonl(subkeysDir as string, action, (subpath) => subpath)).sort();
  }

  /**
   * Deletes a transcript; a main one with its subkeys. An unknown key is a no-op.
   *
   * @param key The transcript.
   * @returns Nothing, once removed.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} `not_permitted` when the folder may not be written;
   * `store_failed` for a link below the folder (nothing is deleted) or a shared folder.
   */
  async delete(key: SessionKey): Promise<void> {
    const action = "delete from the store";
    checkKey(key, action);
    const paths = await keyPaths(this.#root, key);
    await this.#queue.run(paths.file, async () => {
      // The file, its sidecar (if its name is a hash), and a main key's subkeys.
      const doomed = [paths.file, paths.file.replace(/\.jsonl$/, ".name")];
      if (paths.subkeysDir) doomed.push(summaryPath(paths.file));
      if (paths.subkeysDir) doomed.push(paths.subkeysDir);
      try {
        if (!await this.#useRoot(action, false)) return;
        if (!await walkDirs(this.#root, paths.dir, { create: false, action })) return;
        const found: string[] = [];
        for (const path of doomed) {
          const info = await Deno.lstat(path).catch(notFound);
          if (info?.isSymlink) throw linkError(action, this.#root, path);
          if (info) found.push(path);
        }
        // Links inside a subkeys folder are removed, not followed.
        for (const path of found) await Deno.remove(path, { recursive: true }).catch(notFound);
      } catch (error) {
        throw explainFsError(error, action, this.#root, "write");
      } finally {
        for (const file of [...this.#indexes.keys()]) {
          if (
            file === paths.file || (paths.subkeysDir && file.startsWith(`${paths.subkeysDir}/`))
          ) {
            this.#indexes.delete(file);
          }
        }
      }
    });
  }
}

function notFound(error: unknown): undefined {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}
