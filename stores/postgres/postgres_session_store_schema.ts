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
   * The entries table (the others are `<table>_keys` and `<table>_proj`).
   *
   * @default {"claude_session_entries"}
   */
  readonly table?: string;
  /** The PostgreSQL schema of the tables (it must exist), if not the `search_path`'s. */
  readonly schema?: string;
}

/**
 * The SQL that creates the store's three tables, for operators who run
 * migrations themselves and give the store `createSchema: false` (a role
 * without `CREATE` then only needs `SELECT, INSERT, UPDATE, DELETE` on the
 * three tables and `USAGE` on the entries table's sequence). Idempotent
 * (`IF NOT EXISTS`); the same statements the store runs on first use. It
 * also migrates a database of an earlier version, which had no
 * `<table>_proj`: it creates it and starts each project's clock at the
 * newest mtime stored (run it again there before the new version appends).
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
 * assert.match(sql, /CREATE TABLE IF NOT EXISTS "app"\."transcripts_proj" \(/);
 * ```
 */
export function postgresSessionStoreSchema(
  options: PostgresSessionStoreSchemaOptions = {},
): string {
  return schemaStatements(tableNames(options)).map((statement) => `${statement};\n`).join("\n");
}
