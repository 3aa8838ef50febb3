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
   * The entries table (the keys table is `<table>_keys`).
   *
   * @default {"claude_session_entries"}
   */
  readonly table?: string;
  /** The PostgreSQL schema of the tables (it must exist), if not the `search_path`'s. */
  readonly schema?: string;
}

/**
 * The SQL that creates the store's two tables, for operators who run
 * migrations themselves and give the store `createSchema: false` (a role
 * without `CREATE` then only needs `SELECT, INSERT, UPDATE, DELETE` on both
 * tables and `USAGE` on the entries table's sequence). Idempotent
 * (`IF NOT EXISTS`); the same statements the store runs on first use.
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
 * ```
 */
export function postgresSessionStoreSchema(
  options: PostgresSessionStoreSchemaOptions = {},
): string {
  return schemaStatements(tableNames(options)).map((statement) => `${statement};\n`).join("\n");
}
