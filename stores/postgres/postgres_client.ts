// This module is browser compatible.
/**
 * The few members of a PostgreSQL client that the store calls, typed
 * structurally: the `sql` function of the `postgres` npm package
 * (`postgres(url)`, porsager's client, version 3) fits as it is, so the
 * package depends on no client and you pass your own instance, configured
 * as you like (pool size, TLS, `connect_timeout`, …).
 *
 * @module
 */

/** A query in flight: a promise of its rows, which can be cancelled. */
export interface PostgresPendingQuery extends PromiseLike<readonly Record<string, unknown>[]> {
  /** Cancels the query (the `postgres` client's `PendingQuery.cancel()`). */
  cancel?(): void;
}

/** How the store asks for one statement to be run. */
export interface PostgresQueryOptions {
  /**
   * Keep the statement prepared on its connection, so that running it again
   * skips parsing and planning and a round trip (the `postgres` client's
   * `unsafe(query, parameters, { prepare: true })`; its statements are
   * unprepared by default). The store asks it for its appends, loads and
   * listings; a client created with `prepare: false` (behind a pooler that
   * cannot keep prepared statements) does not prepare them.
   */
  readonly prepare?: boolean;
}

/** What runs one statement with bound parameters (the client, or a transaction of it). */
export interface PostgresQueryable {
  /**
   * Runs one statement, its values bound as parameters (`$1`, `$2`, …); the
   * store only ever passes strings.
   *
   * @param query The statement's text.
   * @param parameters The values of `$1`, `$2`, ….
   * @param options Whether to keep the statement prepared (a client may ignore it).
   * @returns The rows.
   */
  unsafe(
    query: string,
    parameters?: string[],
    options?: PostgresQueryOptions,
  ): PostgresPendingQuery;
}

/**
 * The client the store takes: `unsafe` for single statements (each is
 * atomic on its own), `begin` for the two places that need a transaction
 * (schema creation, delete).
 *
 * @example The `postgres` npm client fits
 * ```ts ignore
 * import postgres from "npm:postgres@3";
 * import { PostgresSessionStore } from "@duplex/claude/postgres";
 *
 * const sql = postgres("postgres://app@db.internal/app");
 * const store = new PostgresSessionStore(sql);
 * ```
 */
export interface PostgresClient extends PostgresQueryable {
  /**
   * Runs `fn` in a transaction: committed when its promise resolves, rolled
   * back when it rejects.
   *
   * @param fn The transaction's work, given the transaction's queryable.
   * @returns What the client's `begin` resolves with (unused).
   */
  begin(fn: (tx: PostgresQueryable) => Promise<void>): PromiseLike<unknown>;
}
