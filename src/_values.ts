// This module is browser compatible.
/*
 * The ground floor: small facts about plain values that every part of the
 * library asks, written once. Nothing here imports anything.
 *
 * - `isRecord` tells a JSON object from everything else (arrays and null too).
 * - `jsonEqual` compares JSON values deeply, ignoring key order.
 * - `messageOf` is an error's message, or any other thrown value as text;
 *   `errorOf` is the thrown value as an `Error` (itself if it is one).
 * - `describe` names a value for an error message without echoing it whole:
 *   `null`, `an array`, `a function`, a string as a quoted excerpt, otherwise
 *   its type (`number 5`, `an object`).
 */

/**
 * Tells whether a value is a plain JSON object (not an array, not null).
 *
 * @param value Anything.
 * @returns True for a non-null, non-array object.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deep equality of JSON values (object key order ignored).
 *
 * @param a One value.
 * @param b The other.
 * @returns True when both are the same JSON.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The message of a thrown value: `error.message` for an `Error`, otherwise
 * the value as text.
 *
 * @param error What was thrown or a promise rejected with.
 * @returns Text for a message or a log line.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A thrown value as an `Error`: the value itself if it is one, otherwise an
 * `Error` whose message is the value as text.
 *
 * @param error What was thrown or a promise rejected with.
 * @returns An `Error`, for an event or a report that carries one.
 */
export function errorOf(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Names a value for an error message, without echoing it whole: `null`,
 * `undefined`, `an array`, `a function`, `a symbol`, `an object`, a string
 * as its first 40 characters quoted (`an empty string` for ""), a number,
 * bigint or boolean as its type and value (`number 5`).
 *
 * @param value What the caller passed.
 * @returns A short description.
 */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "string":
      return value === "" ? "an empty string" : JSON.stringify(value.slice(0, 40));
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    case "object":
      return "an object";
    default:
      return `${typeof value} ${String(value)}`;
  }
}
