// This module is browser compatible.
/*
 * The store's SQL. Values are always bound parameters ($1, …); only the
 * validated, quoted table names of _names.ts are spliced into the text.
 * Result columns have one-word lower-case names (e, sid, sub, mtime) so that
 * a client's column transform (postgres.camel and the like) leaves them alone,
 * and every value is selected as text so that a client's type parsers do too.
 */

import type { TableNames } from "./_names.ts";

/* A literal of a quoted, qualified name, for to_regclass and the like. */
function literal(name: string): string {
  return `'${name.replaceAll("'", "''")}'`;
}

/* The entries table's bigserial sequence: its numbers order the keys' appends too. */
function serial(names: TableNames): string {
  return `pg_get_serial_sequence(${literal(names.entries)}, 'seq')`;
}

/**
 * The DDL, one statement per item, idempotent (IF NOT EXISTS, WHERE seq IS
 * NULL). A keys table of an earlier version has no `summary` (a main
 * transcript's summary, NULL until its next append folds it from the whole
 * transcript) and may have no `seq`: they are added; a missing `seq`
 * makes each transcript take its last entry's sequence number (the order of
 * the appends, in the same numbering as the new stamps), so that sessions
 * stamped in one millisecond list in append order from then on.
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
  seq         bigint,              -- the last append's number (the entries' sequence)
  summary     json,                -- a main transcript's foldSessionSummary, at mtime
  PRIMARY KEY (project_key, session_id, subpath)
)`,
    `ALTER TABLE ${names.keys} ADD COLUMN IF NOT EXISTS seq bigint`,
    `ALTER TABLE ${names.keys} ADD COLUMN IF NOT EXISTS summary json`,
    `UPDATE ${names.keys} AS k SET seq = (SELECT max(e.seq) FROM ${names.entries} AS e
  WHERE e.project_key = k.project_key AND e.session_id = k.session_id AND e.subpath = k.subpath)
WHERE k.seq IS NULL`,
    `CREATE INDEX IF NOT EXISTS ${names.indexName}
ON ${names.keys} (project_key, mtime DESC, seq DESC NULLS LAST) WHERE subpath = ''`,
  ];
}

/**
 * The schema is this version's: `ok` is 't' when both tables, the keys'
 * `seq` and `summary` columns and its index exist (to_regclass of a missing
 * one is NULL).
 */
export function existsQuery(names: TableNames): string {
  const exists = (name: string) => `to_regclass(${literal(name)}) IS NOT NULL`;
  const all = [names.entries, names.keys, names.index].map(exists).join(" AND ");
  const column = (name: string) =>
    `EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(${
      literal(names.keys)
    }) AND attname = '${name}' AND NOT attisdropped)`;
  return `SELECT (${all} AND ${column("seq")} AND ${column("summary")})::text AS ok`;
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
 * One append, one statement (atomic on its own), which locks no row but
 * its key's. The key's row first: its mtime is the server's clock, or
 * the newest mtime of the project's main transcripts when that is ahead
 * (a plain read of the index, no lock: it sees every append that
 * committed before this one started), or one past its own: strictly
 * increasing per key, and never below an earlier append's of the project.
 * Its seq is a number of the entries' sequence (nextval neither waits nor
 * rolls back: an append that finished before another started has the
 * smaller one), so sessions of one millisecond list in append order. The
 * key's row lock orders concurrent appends to one key, so its entries'
 * sequence order is commit order. Then the batch, in array order, a uuid
 * already stored skipped.
 * $1-$3: project key, session id, subpath; $4: a JSON array of
 * [uuid or null, the entry's JSON text] pairs.
 */
export function appendStatement(names: TableNames): string {
  return `WITH k AS (
${keyUpsert(names)}
  RETURNING 1
)
${entriesInsert(names)}`;
}

/* The key's row of an append (see appendStatement), without its RETURNING. */
function keyUpsert(names: TableNames): string {
  return `  INSERT INTO ${names.keys} AS k (project_key, session_id, subpath, mtime, seq)
  VALUES ($1, $2, $3, greatest(${NOW_MS}, (SELECT max(n.mtime) FROM ${names.keys} AS n
    WHERE n.project_key = $1 AND n.subpath = '')), nextval(${serial(names)}))
  ON CONFLICT (project_key, session_id, subpath)
  DO UPDATE SET mtime = greatest(excluded.mtime, k.mtime + 1), seq = excluded.seq`;
}

/* The entries of an append (see appendStatement), after the CTE k. */
function entriesInsert(names: TableNames): string {
  return `INSERT INTO ${names.entries} (project_key, session_id, subpath, uuid, entry)
SELECT $1, $2, $3, b.item ->> 0, (b.item ->> 1)::json
FROM k, jsonb_array_elements($4::text::jsonb) WITH ORDINALITY AS b(item, ord)
ORDER BY b.ord
ON CONFLICT (project_key, session_id, subpath, uuid) DO NOTHING`;
}

/**
 * The append of a main transcript, before the summary's update
 * ({@linkcode summaryStatement}): {@linkcode appendStatement}'s two writes,
 * returning the key's new mtime, its summary so far, its mtime before
 * (`prev`; read from the statement's snapshot, so possibly older than the
 * summary when another host appended meanwhile: the caller then folds the
 * whole transcript), whether this append made the key (`fresh`), and the
 * entries inserted, in order (none: one row, `e` NULL). $1-$4: as
 * {@linkcode appendStatement}.
 */
export function appendReturningStatement(names: TableNames): string {
  return `WITH prev AS (
  SELECT mtime FROM ${names.keys} WHERE project_key = $1 AND session_id = $2 AND subpath = $3
), k AS (
${keyUpsert(names)}
  RETURNING k.mtime, k.summary, k.xmax::text = '0' AS fresh
), ins AS (
${entriesInsert(names)}
RETURNING seq, entry
)
SELECT k.mtime::text AS mtime, k.summary::text AS summary, (SELECT mtime FROM prev)::text AS prev,
  k.fresh::text AS fresh, ins.entry::text AS e
FROM k LEFT JOIN ins ON true ORDER BY ins.seq`;
}

/**
 * Sets a main transcript's summary, if no append moved its mtime since (a
 * compare-and-set: mtime strictly increases per key). $1, $2: project key,
 * session id; $3: the summary's JSON; $4: the mtime it was folded at.
 */
export function summaryStatement(names: TableNames): string {
  return `UPDATE ${names.keys} SET summary = $3::text::json
WHERE project_key = $1 AND session_id = $2 AND subpath = '' AND mtime = $4::bigint`;
}

/** A project's summaries. $1: the project key. */
export function listSummariesQuery(names: TableNames): string {
  return `SELECT summary::text AS summary FROM ${names.keys}
WHERE project_key = $1 AND subpath = '' AND summary IS NOT NULL ORDER BY mtime DESC, seq DESC NULLS LAST`;
}

/** A transcript's entries in append order. $1-$3: the key. */
export function loadQuery(names: TableNames): string {
  return `SELECT entry::text AS e FROM ${names.entries}
WHERE project_key = $1 AND session_id = $2 AND subpath = $3 ORDER BY seq`;
}

/**
 * A project's main transcripts and their mtimes, newest first: by mtime,
 * then, among sessions of one millisecond, by their last append's number
 * (append order); rows a writer of the previous version added (no seq)
 * after those, then by session id. $1: the project key.
 */
export function listSessionsQuery(names: TableNames): string {
  return `SELECT session_id AS sid, mtime::text AS mtime FROM ${names.keys}
WHERE project_key = $1 AND subpath = '' ORDER BY mtime DESC, seq DESC NULLS LAST, session_id`;
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
