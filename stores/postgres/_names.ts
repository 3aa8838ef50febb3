// This module is browser compatible.
/* The store's tables: validated identifiers, always quoted. */

/** The default table of entries. */
export const DEFAULT_TABLE = "claude_session_entries";

/* Identifiers cannot be bound as parameters: only these reach SQL text. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/* PostgreSQL truncates names beyond 63 bytes; the keys table and its index add "_keys", "_kidx". */
const MAX_TABLE = 63 - "_keys".length;
const MAX_SCHEMA = 63;

/** The quoted, qualified names of the store's two tables and its index. */
export interface TableNames {
  /** The entries table, like `"claude_session_entries"` or `"app"."claude_session_entries"`. */
  readonly entries: string;
  /** The keys table (one row per transcript, with its mtime and its last append's seq). */
  readonly keys: string;
  /** The keys table's index of a project's main transcripts, newest first. */
  readonly index: string;
  /** The index's name alone, quoted (CREATE INDEX takes no schema: the table's). */
  readonly indexName: string;
  /** Unquoted `schema.table`, for messages and the advisory lock. */
  readonly label: string;
  /** The schema, unquoted, if one was given. */
  readonly schema: string | undefined;
  /** The entries table, unquoted. */
  readonly table: string;
}

function check(what: string, value: unknown, max: number): string {
  if (typeof value !== "string" || !IDENTIFIER.test(value) || value.length > max) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : typeof value;
    throw new TypeError(
      `Cannot use ${shown} as the PostgreSQL ${what}: use letters, digits and _, not starting with a digit, ` +
        `at most ${max} characters`,
    );
  }
  return value;
}

/**
 * Validates the table and schema names and quotes them.
 *
 * @throws {TypeError} For a name that is not a plain identifier.
 */
export function tableNames(options: { table?: unknown; schema?: unknown }): TableNames {
  const table = check("table name", options.table ?? DEFAULT_TABLE, MAX_TABLE);
  const schema = options.schema === undefined
    ? undefined
    : check("schema name", options.schema, MAX_SCHEMA);
  const prefix = schema === undefined ? "" : `"${schema}".`;
  return {
    entries: `${prefix}"${table}"`,
    keys: `${prefix}"${table}_keys"`,
    index: `${prefix}"${table}_kidx"`,
    indexName: `"${table}_kidx"`,
    label: schema === undefined ? table : `${schema}.${table}`,
    schema,
    table,
  };
}
