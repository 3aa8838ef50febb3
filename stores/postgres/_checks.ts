// This module is browser compatible.
/* What the store accepts from its caller, checked before any SQL: the
 * built-in stores' rules (src/store/_store_checks.ts), and text PostgreSQL
 * can hold in the key's columns. */

import { DuplexError } from "../../src/errors.ts";
import {
  checkKey,
  checkProjectKey,
  checkSessionKey,
  serializeEntries,
} from "../../src/store/_store_checks.ts";
import type { SessionStoreEntry } from "../../src/store/session_store.ts";

/** A key as SQL parameters: project key, session id, subpath ('' for the main transcript). */
export type KeyParams = [projectKey: string, sessionId: string, subpath: string];

/* Text PostgreSQL can hold: no NUL, no lone surrogate (UTF-8 has none). */
function storable(value: string): boolean {
  return !value.includes("\u0000") && value.isWellFormed();
}

function column(action: string, name: string, value: string): string {
  if (!storable(value)) {
    throw new TypeError(
      `Cannot ${action}: ${name} holds a NUL character or a lone surrogate, which PostgreSQL ` +
        `text cannot store, got ${JSON.stringify(value.slice(0, 80))}`,
    );
  }
  return value;
}

/**
 * Checks a key and gives its parameters.
 *
 * @throws {TypeError} For a key that is not one, or text PostgreSQL cannot hold.
 */
export function keyParams(action: string, key: unknown): KeyParams {
  const { projectKey, sessionId, subpath } = checkKey(key, action);
  return [
    column(action, "key.projectKey", projectKey),
    column(action, "key.sessionId", sessionId),
    subpath === undefined ? "" : column(action, "key.subpath", subpath),
  ];
}

/**
 * Checks the key of `listSubkeys` (project key and session id).
 *
 * @throws {TypeError} As {@linkcode keyParams}.
 */
export function sessionParams(action: string, key: unknown): [string, string] {
  const { projectKey, sessionId } = checkSessionKey(key, action);
  return [column(action, "key.projectKey", projectKey), column(action, "key.sessionId", sessionId)];
}

/**
 * Checks the argument of `listSessions`.
 *
 * @throws {TypeError} As {@linkcode keyParams}.
 */
export function projectParam(action: string, projectKey: unknown): string {
  return column(action, "projectKey", checkProjectKey(projectKey, action));
}

/**
 * Checks a batch and encodes it as the append statement's `$4`: a JSON
 * array of `[uuid or null, the entry's JSON text]`. A `uuid` PostgreSQL text
 * cannot hold (a NUL, a lone surrogate) is no idempotency key: that entry is
 * always appended, never refused, so the transcript line is kept.
 *
 * @returns The parameter, or `undefined` for an empty batch.
 * @throws {TypeError} As the built-in stores: entries that are not JSON
 *   objects with a string `type`, a `uuid` that is not a string.
 */
export function encodeBatch(action: string, entries: unknown): string | undefined {
  const serialized = serializeEntries(entries, action);
  if (serialized.length === 0) return undefined;
  return JSON.stringify(
    serialized.map(({ json, uuid }) => [uuid !== undefined && storable(uuid) ? uuid : null, json]),
  );
}

/**
 * Parses the store's text back into an entry.
 *
 * @throws {DuplexError} `protocol` when the client did not return text.
 */
export function decodeEntry(value: unknown): SessionStoreEntry {
  if (typeof value !== "string") {
    throw new DuplexError(
      "protocol",
      `Cannot load from the PostgreSQL session store: the client returned a ${typeof value} ` +
        `for an entry's text (a custom type parser for text?)`,
    );
  }
  return JSON.parse(value) as SessionStoreEntry;
}
