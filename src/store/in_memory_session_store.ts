// This module is browser compatible.
/**
 * {@linkcode InMemorySessionStore}: a {@linkcode SessionStore} in this
 * process's memory, for tests and development.
 *
 * @module
 */

import {
  checkKey,
  checkProjectKey,
  checkSessionKey,
  newEntries,
  type SerializedEntry,
  serializeEntries,
} from "./_store_checks.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
  StoredSessionRef,
} from "./session_store.ts";
import { foldSessionSummary, type SessionSummaryEntry } from "./session_summary.ts";

/** Options of the {@linkcode InMemorySessionStore} constructor. */
export interface InMemorySessionStoreOptions {
  /**
   * The store's clock, in milliseconds since the epoch: `mtime` is stamped
   * from it at each append (floored; never equal to or below an earlier
   * stamp of this store).
   *
   * @default {Date.now}
   */
  readonly clock?: () => number;
}

/** One transcript: its entries as JSON text, the uuids it holds, its last append. */
interface Transcript {
  readonly lines: string[];
  readonly uuids: Set<string>;
  mtime: number;
  /* A main transcript's summary (foldSessionSummary of what it holds). */
  summary?: SessionSummaryEntry;
}

/** The main transcript is kept under this subpath (a real subpath is never empty). */
const MAIN = "";

/**
 * A {@linkcode SessionStore} in memory, with the official SDK's
 * `InMemorySessionStore` semantics plus what the contract recommends:
 *
 * - an entry with a `uuid` is stored once per key (a retried or re-imported
 *   batch adds nothing; the first copy is kept), one without is appended
 *   every time; order is call order;
 * - `mtime` is stamped at append from the store's clock and increases with
 *   every append to any key, within a millisecond too (the SDK's rule), so
 *   `listSessions`, newest first, lists sessions in the order they were
 *   last appended to;
 * - `listSessions` lists a project's main transcripts; `delete` of a main
 *   key removes its subkeys; `listSubkeys` lists a session's subpaths;
 * - `listSessionSummaries` gives each session's summary, folded at each
 *   append (`foldSessionSummary` of the entries stored, its `mtime` the
 *   append's).
 *
 * Unlike the SDK's, keys are kept apart field by field (`{ projectKey: "a/b",
 * sessionId: "c" }` and `{ projectKey: "a", sessionId: "b/c" }` are two
 * keys), entries are copied in and out (JSON round trip: changing an object
 * after `append`, or one `load` returned, changes nothing stored), and a bad
 * key or entry is a `TypeError`. Data lives as long as the object.
 *
 * @example Mirror, reload, list
 * ```ts
 * import { InMemorySessionStore } from "./in_memory_session_store.ts";
 * import assert from "node:assert/strict";
 *
 * const store = new InMemorySessionStore();
 * const key = { projectKey: "-home-me-app", sessionId: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f" };
 * await store.append(key, [{ type: "user", uuid: "u1" }, { type: "tag", tag: "x" }]);
 * await store.append(key, [{ type: "user", uuid: "u1" }]); // a retry: stored once
 * assert.deepEqual(await store.load(key), [{ type: "user", uuid: "u1" }, { type: "tag", tag: "x" }]);
 * assert.deepEqual((await store.listSessions("-home-me-app")).map((s) => s.sessionId), [key.sessionId]);
 * assert.equal(await store.load({ ...key, sessionId: "other" }), null);
 * ```
 */
export class InMemorySessionStore implements SessionStore {
  readonly #projects = new Map<string, Map<string, Map<string, Transcript>>>();
  readonly #clock: () => number;
  #lastMtime = 0;

  /**
   * Makes an empty store.
   *
   * @param options The clock.
   * @throws {TypeError} When `clock` is given and is not a function.
   */
  constructor(options: InMemorySessionStoreOptions = {}) {
    if (options.clock !== undefined && typeof options.clock !== "function") {
      throw new TypeError("Cannot create an InMemorySessionStore: clock must be a function");
    }
    this.#clock = options.clock ?? Date.now;
  }

  /**
   * Appends a batch (see the class for the rules). An empty batch changes nothing.
   *
   * @param key The transcript.
   * @param entries The entries, in order.
   * @returns Nothing, once stored.
   * @throws {TypeError} For a bad key or entry (nothing of the batch is stored).
   */
  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const action = "append to the store";
    try {
      checkKey(key, action);
      const batch = serializeEntries(entries, action);
      if (batch.length > 0) this.#append(key, batch);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #append(key: SessionKey, batch: readonly SerializedEntry[]): void {
    let sessions = this.#projects.get(key.projectKey);
    if (!sessions) this.#projects.set(key.projectKey, sessions = new Map());
    let transcripts = sessions.get(key.sessionId);
    if (!transcripts) sessions.set(key.sessionId, transcripts = new Map());
    const subpath = key.subpath ?? MAIN;
    let transcript = transcripts.get(subpath);
    if (!transcript) {
      transcripts.set(subpath, transcript = { lines: [], uuids: new Set(), mtime: 0 });
    }
    const stored = newEntries(batch, transcript.uuids);
    for (const entry of stored) transcript.lines.push(entry.json);
    const now = Math.floor(this.#clock());
    this.#lastMtime = Number.isFinite(now) && now > this.#lastMtime ? now : this.#lastMtime + 1;
    transcript.mtime = this.#lastMtime;
    if (subpath === MAIN) {
      const entries = stored.map((entry) => JSON.parse(entry.json));
      transcript.summary = foldSessionSummary(transcript.summary, key, entries, {
        mtime: transcript.mtime,
      });
    }
  }

  #transcript(key: SessionKey): Transcript | undefined {
    return this.#projects.get(key.projectKey)?.get(key.sessionId)?.get(key.subpath ?? MAIN);
  }

  /**
   * Loads a transcript.
   *
   * @param key The transcript.
   * @returns Fresh copies of its entries, or `null` for a key never written (or deleted).
   * @throws {TypeError} For a bad key.
   */
  load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    try {
      checkKey(key, "load from the store");
      const transcript = this.#transcript(key);
      return Promise.resolve(transcript ? transcript.lines.map((line) => JSON.parse(line)) : null);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Lists a project's sessions (those with a main transcript), newest first:
   * the last appended to first (no two appends share an `mtime`).
   *
   * @param projectKey The project.
   * @returns Each session id with its last append's time, newest first.
   * @throws {TypeError} When `projectKey` is not a non-empty string.
   */
  listSessions(projectKey: string): Promise<StoredSessionRef[]> {
    try {
      checkProjectKey(projectKey, "list the store's sessions");
      const found: StoredSessionRef[] = [];
      for (const [sessionId, transcripts] of this.#projects.get(projectKey) ?? []) {
        const main = transcripts.get(MAIN);
        if (main) found.push({ sessionId, mtime: main.mtime });
      }
      return Promise.resolve(found.sort((a, b) => b.mtime - a.mtime));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Lists the summaries of a project's sessions (one per main transcript),
   * newest first, each as {@linkcode foldSessionSummary} made it at the
   * last append (its `mtime` is the session's `listSessions` mtime).
   *
   * @param projectKey The project.
   * @returns Fresh copies of the summaries.
   * @throws {TypeError} When `projectKey` is not a non-empty string.
   */
  listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    try {
      checkProjectKey(projectKey, "list the store's session summaries");
      const found: SessionSummaryEntry[] = [];
      for (const transcripts of this.#projects.get(projectKey)?.values() ?? []) {
        const summary = transcripts.get(MAIN)?.summary;
        if (summary) found.push(structuredClone(summary));
      }
      return Promise.resolve(found.sort((a, b) => b.mtime - a.mtime));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Deletes a transcript; a main one with all its subkeys. Deleting a key
   * that does not exist does nothing.
   *
   * @param key The transcript.
   * @returns Nothing, once gone.
   * @throws {TypeError} For a bad key.
   */
  delete(key: SessionKey): Promise<void> {
    try {
      checkKey(key, "delete from the store");
      const sessions = this.#projects.get(key.projectKey);
      const transcripts = sessions?.get(key.sessionId);
      if (sessions && transcripts) {
        if (key.subpath === undefined) transcripts.clear();
        else transcripts.delete(key.subpath);
        if (transcripts.size === 0) sessions.delete(key.sessionId);
        if (sessions.size === 0) this.#projects.delete(key.projectKey);
      }
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Lists the subpaths stored under a session (never the main transcript).
   *
   * @param key The session.
   * @returns The subpaths, sorted.
   * @throws {TypeError} For a bad key.
   */
  listSubkeys(key: { readonly projectKey: string; readonly sessionId: string }): Promise<string[]> {
    try {
      checkSessionKey(key, "list the store's subkeys");
      const transcripts = this.#projects.get(key.projectKey)?.get(key.sessionId);
      return Promise.resolve([...transcripts?.keys() ?? []].filter((s) => s !== MAIN).sort());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** How many main transcripts the store holds, over all projects. */
  get size(): number {
    let count = 0;
    for (const sessions of this.#projects.values()) {
      for (const transcripts of sessions.values()) if (transcripts.has(MAIN)) count++;
    }
    return count;
  }

  /** Removes everything. */
  clear(): void {
    this.#projects.clear();
  }
}
