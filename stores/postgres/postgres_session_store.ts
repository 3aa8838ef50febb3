// This module is browser compatible.
/**
 * {@linkcode PostgresSessionStore}: a `SessionStore` over PostgreSQL, for
 * transcripts shared by many hosts.
 *
 * @module
 */

import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
  StoredSessionRef,
} from "../../src/store/session_store.ts";
import { KeyQueue } from "../../src/store/_key_queue.ts";
import { foldSessionSummary, type SessionSummaryEntry } from "../../src/store/session_summary.ts";
import type { PostgresClient } from "./postgres_client.ts";
import { type TableNames, tableNames } from "./_names.ts";
import { bounded, type Operation } from "./_bounded.ts";
import { decodeEntry, encodeBatch, keyParams, projectParam, sessionParams } from "./_checks.ts";
import * as q from "./_sql.ts";

/** Options of {@linkcode PostgresSessionStore}. */
export interface PostgresSessionStoreOptions {
  /**
   * The entries table; the store also uses `<table>_keys` (and its index
   * `<table>_kidx`). Letters, digits and `_` only (it is spliced into SQL,
   * quoted), at most 58 characters.
   *
   * @default {"claude_session_entries"}
   */
  readonly table?: string;
  /**
   * The PostgreSQL schema of the tables (it must exist); by default the
   * client's `search_path` decides (most often `public`).
   */
  readonly schema?: string;
  /**
   * Create the tables on first use (`CREATE TABLE IF NOT EXISTS` under an
   * advisory lock, so hosts starting together do not race), and migrate
   * the tables of an earlier version (which lack the keys' `seq` or
   * `summary` column).
   * With `false`, create or migrate them yourself from
   * {@linkcode postgresSessionStoreSchema}.
   *
   * @default {true}
   */
  readonly createSchema?: boolean;
  /**
   * How long one call (`append`, `load`, …) may take, schema creation
   * included, before it rejects with a `DuplexError` of kind `timeout` (the
   * query is cancelled, best effort: a cancel request that cannot reach the
   * server is dropped, never left as an unhandled rejection; an append may
   * still land, and a retry is harmless: entries with a uuid are stored once).
   *
   * @default {30000}
   */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/* The statements run again and again: prepared once per connection (parsed and planned once). */
const PREPARED = { prepare: true } as const;

/**
 * A `SessionStore` (the official SDK's contract) in PostgreSQL, through the
 * `postgres` npm client (porsager's, version 3) that you create and pass in;
 * nothing in the package depends on it ({@linkcode PostgresClient} is the
 * few members the store calls).
 *
 * - Two tables: `<table>` holds one row per entry (its JSON text in a
 *   `json` column, so it loads back exactly as appended, NUL escapes
 *   included), ordered by a `bigserial`; `<table>_keys` one row per
 *   transcript with its modification time (integer Unix ms, from the
 *   server's clock) and the number of its last append (from the entries'
 *   sequence).
 * - `mtime` is strictly increasing per key and never below the mtime of an
 *   append to the project that finished before (it is the server's clock,
 *   or the project's newest mtime when that is ahead), and `listSessions`
 *   lists newest first: by mtime, then by append number. So the listing, as
 *   it comes or stably sorted by mtime (as the official SDK sorts it), is
 *   the order in which sessions were last appended to, within one
 *   millisecond too, from any host (an append that finished before another
 *   started is listed after it). Two sessions may share an mtime. Appends
 *   lock nothing but their key's row: the appends of one project, to its
 *   many keys, run at once.
 * - Each main transcript's key row keeps the session's summary (a `summary`
 *   column, the official SDK's `foldSessionSummary` of its entries), so
 *   `listSessionSummaries` lists a project in one query. The append that
 *   stamped an mtime folds its entries into the summary it found and writes
 *   it only while the row still has that mtime (a compare-and-set: of two
 *   hosts' appends to one session, the later one's summary stays); a
 *   summary older than the row's mtime before an append (another host's
 *   append in between, a crash between the two statements, a key of an
 *   earlier version) is folded again from the whole transcript, and a
 *   reader takes a summary older than the listed mtime as stale and loads
 *   the session.
 * - `append` is one statement (a main transcript's summary is a second
 *   one), so a batch lands whole or not at all; an
 *   entry whose `uuid` is already stored under the key is skipped (a
 *   unique index and `ON CONFLICT DO NOTHING`), one without a `uuid` is
 *   always appended. Appends to one key from one store run in call order
 *   (even when not awaited), and across stores and hosts they are
 *   serialised by the key's row, so entries load in commit order.
 *   `append(key, [])` does nothing.
 * - Appends, loads and listings are prepared statements, parsed and
 *   planned once per connection (one round trip each after the first);
 *   behind a pooler that cannot keep prepared statements, create the
 *   client with `prepare: false`, as that client asks anyway.
 * - `load` gives `null` for a key never written (or deleted); `delete` of a
 *   main transcript removes its subkeys too, in one transaction.
 * - Failures reject with a `DuplexError` naming the operation and the table,
 *   the driver's error as `cause`; no call outlives `timeoutMs`. The client
 *   reconnects by itself once the server is back.
 *
 * @example Mirror a session's transcripts to PostgreSQL
 * ```ts ignore
 * import postgres from "npm:postgres@3";
 * import { PostgresSessionStore } from "@duplex/claude/postgres";
 * import { subprocess } from "@duplex/claude/subprocess";
 * import { DuplexSession } from "@duplex/claude";
 *
 * const sql = postgres(Deno.env.get("DATABASE_URL")!);
 * const store = new PostgresSessionStore(sql, { table: "claude_transcripts" });
 * await using session = await DuplexSession.start({
 *   transport: subprocess({ cwd: "/srv/project", sessionStore: store }),
 * });
 * ```
 */
export class PostgresSessionStore implements SessionStore {
  readonly #sql: PostgresClient;
  readonly #names: TableNames;
  readonly #createSchema: boolean;
  readonly #timeoutMs: number;
  #schema: Promise<void> | undefined;
  readonly #appends = new KeyQueue();

  /**
   * Checks the options; connects nothing until the first call.
   *
   * @param sql The client (`postgres(url)`); the store never ends it.
   * @param options Tables, schema creation and the time bound.
   * @throws {TypeError} For a client without `unsafe` and `begin`, a table or
   *   schema name that is not a plain identifier, a `timeoutMs` not a number.
   * @throws {RangeError} For a `timeoutMs` below 1 or above 2^31-1.
   */
  constructor(sql: PostgresClient, options: PostgresSessionStoreOptions = {}) {
    if (
      (typeof sql !== "function" && (typeof sql !== "object" || sql === null)) ||
      typeof sql.unsafe !== "function" || typeof sql.begin !== "function"
    ) {
      throw new TypeError(
        "Cannot create a PostgresSessionStore: pass the postgres client (postgres(url)), " +
          "something with unsafe() and begin()",
      );
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (typeof timeoutMs !== "number") {
      throw new TypeError(
        `Cannot create a PostgresSessionStore: timeoutMs must be a number, got ${typeof timeoutMs}`,
      );
    }
    if (!(timeoutMs > 0) || timeoutMs > 2_147_483_647) {
      throw new RangeError(
        `Cannot create a PostgresSessionStore: timeoutMs must be 1 to 2^31-1 ms, got ${timeoutMs}`,
      );
    }
    this.#sql = sql;
    this.#names = tableNames(options);
    this.#createSchema = options.createSchema ?? true;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Creates the tables if they are missing (what the first call does by
   * itself with `createSchema: true`, the default); call it at start-up to
   * fail early. With `createSchema: false`, it creates them all the same.
   *
   * @throws {DuplexError} When the server is unreachable or refuses (kind
   *   `timeout` past `timeoutMs`).
   */
  async ensureSchema(): Promise<void> {
    await this.#ensure(this.#op("create the tables of"));
  }

  /**
   * Appends a batch, atomically, skipping entries whose uuid is stored.
   *
   * @param key The transcript.
   * @param entries The lines, in order.
   * @throws {TypeError} For a bad key or entry (the built-in stores' rules;
   *   nothing is written).
   * @throws {DuplexError} `timeout` past `timeoutMs`; a server or driver
   *   failure, its error as `cause`.
   */
  async append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const op = this.#op("append to");
    const params = keyParams(op.action, key);
    const batch = encodeBatch(op.action, entries);
    if (batch === undefined) return;
    // Appends to one key run one after the other, in call order (a pool would reorder them).
    await this.#appends.run(JSON.stringify(params), async () => {
      await this.#ready(op);
      if (params[2] !== "") {
        const statement = q.appendStatement(this.#names);
        await bounded(op, () => this.#sql.unsafe(statement, [...params, batch], PREPARED));
        return;
      }
      const statement = q.appendReturningStatement(this.#names);
      const rows = await bounded(
        op,
        () => this.#sql.unsafe(statement, [...params, batch], PREPARED),
      );
      const mtime = String(rows[0]?.mtime);
      const summary = await this.#fold(op, key, params, rows);
      const update = q.summaryStatement(this.#names);
      await bounded(
        op,
        () => this.#sql.unsafe(update, [params[0], params[1], summary, mtime], PREPARED),
      );
    });
  }

  /* The session's new summary (JSON) from what the append returned. */
  async #fold(
    op: Operation,
    key: SessionKey,
    params: readonly string[],
    rows: readonly Record<string, unknown>[],
  ): Promise<string> {
    const first = rows[0] ?? {};
    const mtime = Number(first.mtime);
    const inserted = rows.flatMap((row) => typeof row.e === "string" ? [decodeEntry(row.e)] : []);
    const prev = typeof first.summary === "string"
      ? JSON.parse(first.summary) as SessionSummaryEntry
      : undefined;
    let summary: SessionSummaryEntry;
    if (first.fresh === "true") summary = foldSessionSummary(undefined, key, inserted, { mtime });
    else if (
      prev !== undefined && typeof first.prev === "string" && prev.mtime === Number(first.prev)
    ) {
      summary = foldSessionSummary(prev, key, inserted, { mtime });
    } else {
      // No summary yet (a key of an earlier version), or one another writer moved past.
      const query = q.loadQuery(this.#names);
      const all = await bounded(op, () => this.#sql.unsafe(query, [...params], PREPARED));
      summary = foldSessionSummary(undefined, key, all.map((row) => decodeEntry(row.e)), { mtime });
    }
    return JSON.stringify(summary);
  }

  /**
   * Lists the summaries of a project's sessions (the `summary` column of
   * the keys table, folded in each append's transaction by
   * `foldSessionSummary`), newest first. A session last appended to by an
   * earlier version has none until its next append, and a reader loads it.
   *
   * @param projectKey The project.
   * @returns The summaries.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} As {@linkcode PostgresSessionStore.append}.
   */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const op = this.#op("list the session summaries of");
    const project = projectParam(op.action, projectKey);
    await this.#ready(op);
    const query = q.listSummariesQuery(this.#names);
    const rows = await bounded(op, () => this.#sql.unsafe(query, [project], PREPARED));
    return rows.map((row) => JSON.parse(String(row.summary)) as SessionSummaryEntry);
  }

  /**
   * Loads a transcript in append order.
   *
   * @param key The transcript.
   * @returns Its entries, or `null` when none was ever appended (or it was deleted).
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} As {@linkcode PostgresSessionStore.append}.
   */
  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const op = this.#op("load from");
    const params = keyParams(op.action, key);
    await this.#ready(op);
    const query = q.loadQuery(this.#names);
    const rows = await bounded(op, () => this.#sql.unsafe(query, params, PREPARED));
    if (rows.length === 0) return null;
    return rows.map((row) => decodeEntry(row.e));
  }

  /**
   * Lists a project's main transcripts with their modification times (the
   * last append, integer Unix ms from the server's clock, strictly
   * increasing per key), newest first: the last appended to first, within
   * one millisecond too (sessions of one millisecond go by their last
   * append's number; stably sorted by mtime, the order stays).
   *
   * @param projectKey The project.
   * @returns The sessions; none for an unknown project.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} As {@linkcode PostgresSessionStore.append}.
   */
  async listSessions(projectKey: string): Promise<StoredSessionRef[]> {
    const op = this.#op("list the sessions of");
    const project = projectParam(op.action, projectKey);
    await this.#ready(op);
    const query = q.listSessionsQuery(this.#names);
    const rows = await bounded(op, () => this.#sql.unsafe(query, [project], PREPARED));
    return rows.map((row) => ({ sessionId: String(row.sid), mtime: Number(row.mtime) }));
  }

  /**
   * Deletes a transcript; a main one with its subkeys (one transaction,
   * which first waits for the appends in flight on the table, so none of
   * them leaves a key row behind without its entries).
   *
   * @param key The transcript.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} As {@linkcode PostgresSessionStore.append}.
   */
  async delete(key: SessionKey): Promise<void> {
    const op = this.#op("delete from");
    const params = keyParams(op.action, key);
    await this.#ready(op);
    const sub = params[2] !== "";
    const statements = q.deleteStatements(this.#names, sub);
    const values = sub ? params : params.slice(0, 2);
    await this.#transaction(op, async (tx) => {
      await tx.unsafe(q.deleteLock(this.#names));
      for (const statement of statements) await tx.unsafe(statement, values);
    });
  }

  /**
   * Lists the subpaths (subagent transcripts) under a session, sorted.
   *
   * @param key The session.
   * @returns The subpaths; none for an unknown session.
   * @throws {TypeError} For a bad key.
   * @throws {DuplexError} As {@linkcode PostgresSessionStore.append}.
   */
  async listSubkeys(
    key: { readonly projectKey: string; readonly sessionId: string },
  ): Promise<string[]> {
    const op = this.#op("list the subkeys of");
    const params = sessionParams(op.action, key);
    await this.#ready(op);
    const query = q.listSubkeysQuery(this.#names);
    const rows = await bounded(op, () => this.#sql.unsafe(query, params, PREPARED));
    return rows.map((row) => String(row.sub));
  }

  #op(verb: string): Operation {
    return {
      verb,
      action: `${verb} the PostgreSQL session store`,
      label: this.#names.label,
      timeoutMs: this.#timeoutMs,
      deadline: performance.now() + this.#timeoutMs,
      createSchema: this.#createSchema,
    };
  }

  async #ready(op: Operation): Promise<void> {
    if (this.#createSchema) await this.#ensure(op);
  }

  /* Once per store; a failure is not remembered (the next call tries again). */
  async #ensure(op: Operation): Promise<void> {
    this.#schema ??= this.#create(op).catch((error) => {
      this.#schema = undefined;
      throw error;
    });
    await this.#schema;
  }

  async #create(op: Operation): Promise<void> {
    const exists = await bounded(op, () => this.#sql.unsafe(q.existsQuery(this.#names)));
    if (exists[0]?.ok === "true") return;
    await this.#transaction(op, async (tx) => {
      await tx.unsafe("SET LOCAL client_min_messages = warning"); // no "already exists" notices
      await tx.unsafe(q.LOCK, [this.#names.label]);
      for (const statement of q.schemaStatements(this.#names)) await tx.unsafe(statement);
    });
  }

  /* A transaction, bounded on the server too (statement_timeout covers lock waits). */
  #transaction(op: Operation, work: Parameters<PostgresClient["begin"]>[0]): Promise<unknown> {
    const ms = Math.max(1, Math.ceil(op.deadline - performance.now()));
    return bounded(op, () =>
      this.#sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL statement_timeout = ${ms}`);
        await work(tx);
      }));
  }
}
