// This module is browser compatible.
/*
 * The store's SQL. Values are always bound parameters ($1, …); only the
 * validated, quoted table names of _names.ts are spliced into the text.
 * Result columns have one-word lower-case names (e, sid, sub, mtime) so that
 * a client's column transform (postgres.camel and the like) leaves them alone,
 * and every value is selected as text so that a client's type parsers do too.
 */

import type { TableNames } from "./_names.ts";

/** The DDL, one statement per item: idempotent (IF NOT EXISTS). */
export function schemaStatements(names: TableNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${names.entries} (
  seq         bigserial NOT NULL,
  project_key text      NOT NULL,
  session_id  text      NOT NULL,
  subpath     text      NOT NULL,  -- '' for the main transcript
  uuid        text,                -- the idempotency key; NULL: always appended
  entry       json      NOT NULL,  -- the line as appended (json keeps its text)
  PRIMARY KEY (project_key, session_id, subpath, seq),
  UNIQUE (project_key, session_id, subpath, uuid)
)`,
    `CREATE TABLE IF NOT EXISTS ${names.keys} (
  project_key text   NOT NULL,
  session_id  text   NOT NULL,
  subpath     text   NOT NULL,     -- '' for the main transcript
  mtime       bigint NOT NULL,     -- the last append, Unix epoch ms (the server's clock)
  PRIMARY KEY (project_key, session_id, subpath)
)`,
  ];
}

/** Both tables exist: `ok` is 't' (to_regclass of a missing table is NULL). */
export function existsQuery(names: TableNames): string {
  const literal = (name: string) => `'${name.replaceAll("'", "''")}'`;
  return `SELECT (to_regclass(${literal(names.entries)}) IS NOT NULL AND ` +
    `to_regclass(${literal(names.keys)}) IS NOT NULL)::text AS ok`;
}

/**
 * Serialises concurrent schema creations (CREATE TABLE IF NOT EXISTS races
 * on the catalog's unique index otherwise): a transaction-scoped advisory
 * lock on the hash of the qualified name. $1: the qualified name.
 */
export const LOCK = "SELECT pg_advisory_xact_lock(hashtext('@duplex/claude store'), hashtext($1))";

/**
 * One append, one statement (atomic on its own): the key's row first (its
 * row lock orders concurrent appends to one key, so sequence order is commit
 * order; mtime from the server's clock, strictly increasing per key), then
 * the batch in array order, a uuid already stored skipped.
 * $1-$3: project key, session id, subpath; $4: a JSON array of
 * [uuid or null, the entry's JSON text] pairs.
 */
export function appendStatement(names: TableNames): string {
  return `WITH k AS (
  INSERT INTO ${names.keys} AS k (project_key, session_id, subpath, mtime)
  VALUES ($1, $2, $3, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
  ON CONFLICT (project_key, session_id, subpath)
  DO UPDATE SET mtime = greatest(excluded.mtime, k.mtime + 1)
  RETURNING 1
)
INSERT INTO ${names.entries} (project_key, session_id, subpath, uuid, entry)
SELECT $1, $2, $3, b.item ->> 0, (b.item ->> 1)::json
FROM k, jsonb_array_elements($4::text::jsonb) WITH ORDINALITY AS b(item, ord)
ORDER BY b.ord
ON CONFLICT (project_key, session_id, subpath, uuid) DO NOTHING`;
}

/** A transcript's entries in append order. $1-$3: the key. */
export function loadQuery(names: TableNames): string {
  return `SELECT entry::text AS e FROM ${names.entries}
WHERE project_key = $1 AND session_id = $2 AND subpath = $3 ORDER BY seq`;
}

/** A project's main transcripts and their mtimes, newest first. $1: the project key. */
export function listSessionsQuery(names: TableNames): string {
  return `SELECT session_id AS sid, mtime::text AS mtime FROM ${names.keys}
WHERE project_key = $1 AND subpath = '' ORDER BY mtime DESC, session_id`;
}

/** A session's subpaths. $1, $2: project key and session id. */
export function listSubkeysQuery(names: TableNames): string {
  return `SELECT subpath AS sub FROM ${names.keys}
WHERE project_key = $1 AND session_id = $2 AND subpath <> '' ORDER BY subpath`;
}

/**
 * The first statement of a delete's transaction: waits for the appends in
 * flight on the keys table (and holds new ones until the delete commits).
 * Without it a delete misses the key row of an append not yet committed (a
 * new row is invisible, so nothing waits for it) and then, statement by
 * statement, deletes the entries that append committed meanwhile: a key
 * row without entries. Appends take only ROW EXCLUSIVE, so they never
 * wait for one another; deletes wait for each other.
 */
export function deleteLock(names: TableNames): string {
  return `LOCK TABLE ${names.keys} IN SHARE ROW EXCLUSIVE MODE`;
}

/**
 * A delete, after {@linkcode deleteLock}: the keys rows, then the entries.
 * $1, $2: project key, session id; $3: the subpath, for a subkey only (a
 * main transcript goes with its subkeys).
 */
export function deleteStatements(names: TableNames, withSubpath: boolean): string[] {
  const where = `WHERE project_key = $1 AND session_id = $2${
    withSubpath ? " AND subpath = $3" : ""
  }`;
  return [`DELETE FROM ${names.keys} ${where}`, `DELETE FROM ${names.entries} ${where}`];
}
