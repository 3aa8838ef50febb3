// This module is browser compatible.
/*
 * The store's SQL. Values are always bound parameters ($1, …); only the
 * validated, quoted table names of _names.ts are spliced into the text.
 * Result columns have one-word lower-case names (e, sid, sub, mtime) so that
 * a client's column transform (postgres.camel and the like) leaves them alone,
 * and every value is selected as text so that a client's type parsers do too.
 */

import type { TableNames } from "./_names.ts";

/**
 * The DDL, one statement per item, idempotent (IF NOT EXISTS, ON CONFLICT DO
 * NOTHING). The projects table came after the other two: on a database made
 * before it, the last statement starts each project's clock at the newest
 * mtime its keys hold, so that later stamps come after every earlier one.
 */
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
    `CREATE TABLE IF NOT EXISTS ${names.projects} (
  project_key text   NOT NULL PRIMARY KEY,
  mtime       bigint NOT NULL      -- the last mtime stamped in the project: the next is past it
)`,
    `INSERT INTO ${names.projects} (project_key, mtime)
SELECT project_key, max(mtime) FROM ${names.keys} GROUP BY project_key
ON CONFLICT (project_key) DO NOTHING`,
  ];
}

/** The three tables exist: `ok` is 't' (to_regclass of a missing table is NULL). */
export function existsQuery(names: TableNames): string {
  const exists = (name: string) => `to_regclass('${name.replaceAll("'", "''")}') IS NOT NULL`;
  const all = [names.entries, names.keys, names.projects].map(exists).join(" AND ");
  return `SELECT (${all})::text AS ok`;
}

/**
 * Serialises concurrent schema creations (CREATE TABLE IF NOT EXISTS races
 * on the catalog's unique index otherwise): a transaction-scoped advisory
 * lock on the hash of the qualified name. $1: the qualified name.
 */
export const LOCK = "SELECT pg_advisory_xact_lock(hashtext('@duplex/claude store'), hashtext($1))";

/* The server's clock, in integer Unix epoch milliseconds. */
const NOW_MS = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * One append, one statement (atomic on its own). First the project's row:
 * its row lock orders the appends of one project (to any of its keys, from
 * any host) and is held to the commit, and its mtime moves to the server's
 * clock or one past its last stamp (past the key's own too), so mtimes are
 * strictly increasing across the project, in commit order. Then the key's
 * row takes that stamp (one past its own at least: a writer of the
 * previous version does not move the project's row), then the batch is
 * inserted in array order, a uuid already stored skipped; sequence order is
 * commit order.
 * $1-$3: project key, session id, subpath; $4: a JSON array of
 * [uuid or null, the entry's JSON text] pairs.
 */
export function appendStatement(names: TableNames): string {
  return `WITH p AS (
  INSERT INTO ${names.projects} AS p (project_key, mtime)
  VALUES ($1, greatest(${NOW_MS}, (SELECT mtime + 1 FROM ${names.keys}
    WHERE project_key = $1 AND session_id = $2 AND subpath = $3)))
  ON CONFLICT (project_key) DO UPDATE SET mtime = greatest(excluded.mtime, p.mtime + 1)
  RETURNING p.mtime
), k AS (
  INSERT INTO ${names.keys} AS k (project_key, session_id, subpath, mtime)
  SELECT $1, $2, $3, p.mtime FROM p
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

/**
 * A project's main transcripts and their mtimes, newest first. Stamps of
 * this version never tie within a project; rows of the previous version
 * can (two keys appended in one millisecond), and go by their last entry's
 * sequence number (append order), then by session id. $1: the project key.
 */
export function listSessionsQuery(names: TableNames): string {
  return `SELECT k.session_id AS sid, k.mtime::text AS mtime FROM ${names.keys} AS k
WHERE k.project_key = $1 AND k.subpath = ''
ORDER BY k.mtime DESC, (SELECT max(e.seq) FROM ${names.entries} AS e
  WHERE e.project_key = k.project_key AND e.session_id = k.session_id AND e.subpath = '')
  DESC NULLS LAST, k.session_id`;
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
