// This module is browser compatible.
/* The store's tables: validated identifiers, always quoted. */

/** The default table of entries. */
export const DEFAULT_TABLE = "claude_session_entries";

/* Identifiers cannot be bound as parameters: only these reach SQL text. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/* PostgreSQL truncates names beyond 63 bytes; the other tables add "_keys" and "_proj". */
const MAX_TABLE = 63 - "_keys".length;
const MAX_SCHEMA = 63;

/** The quoted, qualified names of the store's three tables. */
export interface TableNames {
  /** The entries table, like `"claude_session_entries"` or `"app"."claude_session_entries"`. */
  readonly entries: string;
  /** The keys table (one row per transcript, with its mtime). */
  readonly keys: string;
  /** The projects table (one row per project: the last mtime stamped in it). */
  readonly projects: string;
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
    projects: `${prefix}"${table}_proj"`,
    label: schema === undefined ? table : `${schema}.${table}`,
    schema,
    table,
  };
}
