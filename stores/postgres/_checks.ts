// This module is browser compatible.
/* What the store accepts from its caller: keys and entries, checked before any SQL. */

import { DuplexError } from "../../src/errors.ts";
import type { SessionStoreEntry } from "../../src/store/session_store.ts";

/** A key as SQL parameters: project key, session id, subpath ('' for the main transcript). */
export type KeyParams = [projectKey: string, sessionId: string, subpath: string];

/* Text PostgreSQL can hold: no NUL, no lone surrogate (UTF-8 has none). */
function storable(value: string): boolean {
  return !value.includes("\u0000") && value.isWellFormed();
}

function text(verb: string, name: string, value: unknown): string {
  if (typeof value !== "string" || value === "" || !storable(value)) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : typeof value;
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${verb} the PostgreSQL session store: ${name} must be a non-empty string ` +
        `without NUL characters or lone surrogates, got ${shown}`,
    );
  }
  return value;
}

/**
 * Checks a key and gives its parameters. An empty subpath means the main
 * transcript, as the official SDK's stores take it.
 *
 * @throws {DuplexError} `invalid_argument` for a key that is not one.
 */
export function keyParams(verb: string, key: unknown, subpath = true): KeyParams {
  if (typeof key !== "object" || key === null) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${verb} the PostgreSQL session store: the key must be an object, got ${
        key === null ? "null" : typeof key
      }`,
    );
  }
  const { projectKey, sessionId } = key as Record<string, unknown>;
  const sub = subpath ? (key as Record<string, unknown>).subpath : undefined;
  return [
    text(verb, "projectKey", projectKey),
    text(verb, "sessionId", sessionId),
    sub === undefined || sub === "" ? "" : text(verb, "subpath", sub),
  ];
}

/**
 * Encodes a batch as the append statement's `$4`: a JSON array of
 * `[uuid or null, the entry's JSON text]`. An entry whose `uuid` is not a
 * string PostgreSQL text can hold has no idempotency key (it is always
 * appended, never refused: the transcript line is kept).
 *
 * @throws {DuplexError} `invalid_argument` for a batch that is not an array of
 *   objects, or an entry `JSON.stringify` refuses (a BigInt, a cycle).
 */
export function encodeBatch(entries: unknown): string | undefined {
  if (!Array.isArray(entries)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot append to the PostgreSQL session store: entries must be an array, got ${typeof entries}`,
    );
  }
  if (entries.length === 0) return undefined;
  const pairs: [string | null, string][] = [];
  for (const [index, entry] of entries.entries()) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot append to the PostgreSQL session store: entry ${index} is not an object`,
      );
    }
    let json: string;
    try {
      json = JSON.stringify(entry);
    } catch (error) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot append to the PostgreSQL session store: entry ${index} is not JSON (${
          error instanceof Error ? error.message : String(error)
        }); nothing of the batch was written`,
        { cause: error },
      );
    }
    const uuid = (entry as SessionStoreEntry).uuid;
    pairs.push([typeof uuid === "string" && storable(uuid) ? uuid : null, json]);
  }
  return JSON.stringify(pairs);
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
