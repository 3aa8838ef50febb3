// This module is browser compatible.
/**
 * A `SessionStore` in PostgreSQL: transcripts that outlive their host, shared
 * by every host (relays behind a load balancer resume any conversation from
 * it). It takes the `postgres` npm client (porsager's, version 3) that you
 * create: the package depends on no client, and the store never ends yours.
 *
 * - {@linkcode PostgresSessionStore}: the store (the official SDK's
 *   `SessionStore` contract: idempotent appends by `uuid`, order kept,
 *   `listSessions` by modification time, `delete` with subkeys,
 *   `listSubkeys`).
 * - {@linkcode postgresSessionStoreSchema}: its tables as SQL, for
 *   migrations you run yourself (`createSchema: false`).
 *
 * @example The tables as SQL, for a migration you run yourself
 * ```ts
 * import { postgresSessionStoreSchema } from "@duplex/claude/postgres";
 * import assert from "node:assert/strict";
 *
 * // The statements the store runs on first use, idempotent; with them run by your
 * // migration tool, give the store `createSchema: false`.
 * const migration = postgresSessionStoreSchema({ table: "transcripts" });
 * assert.match(migration, /CREATE TABLE IF NOT EXISTS "transcripts" \(/);
 * assert.match(migration, /CREATE TABLE IF NOT EXISTS "transcripts_keys" \(/);
 * ```
 *
 * @example Mirror a session to PostgreSQL and read it back
 * ```ts ignore
 * import postgres from "npm:postgres@3";
 * import { PostgresSessionStore } from "@duplex/claude/postgres";
 * import assert from "node:assert/strict";
 *
 * const sql = postgres("postgres://app@127.0.0.1:5432/app");
 * const store = new PostgresSessionStore(sql);
 * const key = { projectKey: "-srv-project", sessionId: "3f2b…" };
 * await store.append(key, [{ type: "user", uuid: "u1", message: { content: "hi" } }]);
 * await store.append(key, [{ type: "user", uuid: "u1", message: { content: "hi" } }]);
 * assert.equal((await store.load(key))?.length, 1);
 * await sql.end();
 * ```
 *
 * @module
 */

export {
  PostgresSessionStore,
  type PostgresSessionStoreOptions,
} from "./postgres_session_store.ts";
export {
  postgresSessionStoreSchema,
  type PostgresSessionStoreSchemaOptions,
} from "./postgres_session_store_schema.ts";
export type {
  PostgresClient,
  PostgresPendingQuery,
  PostgresQueryable,
  PostgresQueryOptions,
} from "./postgres_client.ts";
