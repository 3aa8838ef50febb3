// This module is browser compatible.
/* Checks the built-in stores make of what a caller hands them: a key of
 * non-empty strings, entries that are JSON objects with a string `type`. */

import { describe, isRecord, messageOf } from "../_values.ts";
import type { SessionKey, SessionStoreEntry } from "./session_store.ts";

/**
 * Checks a key: `projectKey` and `sessionId` non-empty strings, `subpath`
 * absent or a non-empty string.
 *
 * @param key What the caller passed.
 * @param action For the message: `append to the store`.
 * @returns The key, typed.
 * @throws {TypeError} Naming the field that is wrong.
 */
export function checkKey(key: unknown, action: string): SessionKey {
  checkSessionKey(key, action);
  const sub = (key as Record<string, unknown>).subpath;
  if (sub !== undefined && (typeof sub !== "string" || sub === "")) {
    throw new TypeError(
      `Cannot ${action}: key.subpath must be absent or a non-empty string, got ${describe(sub)}` +
        " (omit it for the main transcript)",
    );
  }
  return key as SessionKey;
}

/**
 * Checks the key of `listSubkeys`, a session: `projectKey` and `sessionId`
 * non-empty strings (a `subpath` beside them is not read).
 *
 * @param key What the caller passed.
 * @param action For the message: `list the store's subkeys`.
 * @returns The session's project key and id.
 * @throws {TypeError} Naming the field that is wrong.
 */
export function checkSessionKey(
  key: unknown,
  action: string,
): { readonly projectKey: string; readonly sessionId: string } {
  if (!isRecord(key)) {
    throw new TypeError(`Cannot ${action}: the key must be an object, got ${describe(key)}`);
  }
  const projectKey = checkProjectKey(key.projectKey, action, "key.projectKey");
  const sessionId = key.sessionId;
  if (typeof sessionId !== "string" || sessionId === "") {
    throw new TypeError(
      `Cannot ${action}: key.sessionId must be a non-empty string, got ${describe(sessionId)}`,
    );
  }
  return { projectKey, sessionId };
}

/**
 * Checks a project key (the argument of `listSessions`, a key's field).
 *
 * @param projectKey What the caller passed.
 * @param action For the message.
 * @param name The argument's name in the message.
 * @returns The project key.
 * @throws {TypeError} When it is not a non-empty string.
 */
export function checkProjectKey(projectKey: unknown, action: string, name = "projectKey"): string {
  if (typeof projectKey !== "string" || projectKey === "") {
    throw new TypeError(
      `Cannot ${action}: ${name} must be a non-empty string, got ${describe(projectKey)}`,
    );
  }
  return projectKey;
}

/** An entry as a store keeps it: its JSON text, and its uuid if it has one. */
export interface SerializedEntry {
  /** `JSON.stringify` of the entry (one line: JSON never holds a raw newline). */
  readonly json: string;
  /** Its `uuid`, the idempotency key. */
  readonly uuid: string | undefined;
}

/**
 * Checks a batch and serialises it: each entry a JSON object (not an array)
 * with a string `type`, a `uuid` that is a string when present, and nothing
 * `JSON.stringify` refuses (a cycle, a BigInt).
 *
 * @param entries What the caller passed.
 * @param action For the message.
 * @returns Each entry's JSON text and uuid, in order.
 * @throws {TypeError} Naming the first bad entry by its index.
 */
export function serializeEntries(entries: unknown, action: string): SerializedEntry[] {
  if (!Array.isArray(entries)) {
    throw new TypeError(`Cannot ${action}: entries must be an array, got ${describe(entries)}`);
  }
  return entries.map((entry: unknown, index) => {
    if (!isRecord(entry)) {
      throw new TypeError(
        `Cannot ${action}: entries[${index}] must be an object, got ${describe(entry)}`,
      );
    }
    const { type, uuid } = entry as Partial<SessionStoreEntry>;
    if (typeof type !== "string") {
      throw new TypeError(`Cannot ${action}: entries[${index}].type must be a string`);
    }
    if (uuid !== undefined && typeof uuid !== "string") {
      throw new TypeError(`Cannot ${action}: entries[${index}].uuid must be a string when present`);
    }
    let json: string;
    try {
      json = JSON.stringify(entry);
    } catch (error) {
      throw new TypeError(
        `Cannot ${action}: entries[${index}] is not JSON (${messageOf(error)})`,
        { cause: error },
      );
    }
    return { json, uuid };
  });
}

/**
 * The entries of a batch that are new: those without a uuid, and the first
 * of each uuid that `seen` does not hold yet (which it then holds).
 */
export function newEntries(
  batch: readonly SerializedEntry[],
  seen: Set<string>,
): SerializedEntry[] {
  return batch.filter((entry) => {
    if (entry.uuid === undefined) return true;
    if (seen.has(entry.uuid)) return false;
    seen.add(entry.uuid);
    return true;
  });
}
