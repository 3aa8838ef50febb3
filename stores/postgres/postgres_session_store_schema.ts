// This module is browser compatible.
/**
 * {@linkcode postgresSessionStoreSchema}: the store's tables as a migration.
 *
 * @module
 */

import { tableNames } from "./_names.ts";
import { schemaStatements } from "./_sql.ts";

/** Options of {@linkcode postgresSessionStoreSchema}: the names the store is given. */
export interface PostgresSessionStoreSchemaOptions {
  /**
   * The entries table (the keys table is `<table>_keys`, its index `<table>_kidx`).
   *
   * @default {"claude_session_entries"}
   */
  readonly table?: string;
  /** The PostgreSQL schema of the tables (it must exist), if not the `search_path`'s. */
  readonly schema?: string;
}

/**
 * The SQL that creates the store's two tables and the keys' index, for
 * operators who run migrations themselves and give the store
 * `createSchema: false` (a role without `CREATE` then only needs
 * `SELECT, INSERT, UPDATE, DELETE` on both tables and `USAGE` on the
 * entries table's sequence). Idempotent (`IF NOT EXISTS`); the same
 * statements the store runs on first use. It also migrates the tables of
 * an earlier version, whose keys table has no `summary` column (added
 * empty: each session's summary is folded from its whole transcript at its
 * next append, and listed sessions without one are loaded meanwhile) and
 * may have no `seq` column: it adds it, gives each transcript its last
 * entry's sequence number (so that sessions stamped in one millisecond list
 * in append order) and adds the index; until it has run, a store of this
 * version with `createSchema: false` refuses to append or list, naming the
 * missing column.
 *
 * @param options The table and schema names.
 * @returns The statements, `;`-terminated.
 * @throws {TypeError} For a name that is not a plain identifier.
 *
 * @example Print the migration for a table in schema `app`
 * ```ts
 * import { postgresSessionStoreSchema } from "@duplex/claude/postgres";
 * import assert from "node:assert/strict";
 *
 * const sql = postgresSessionStoreSchema({ schema: "app", table: "transcripts" });
 * assert.match(sql, /CREATE TABLE IF NOT EXISTS "app"\."transcripts" \(/);
 * assert.match(sql, /CREATE TABLE IF NOT EXISTS "app"\."transcripts_keys" \(/);
 * assert.match(sql, /ALTER TABLE "app"\."transcripts_keys" ADD COLUMN IF NOT EXISTS seq bigint/);
 * assert.match(sql, /ADD COLUMN IF NOT EXISTS summary json/);
 * ```
 */
export function postgresSessionStoreSchema(
  options: PostgresSessionStoreSchemaOptions = {},
): string {
  return schemaStatements(tableNames(options)).map((statement) => `${statement};\n`).join("\n");
}
