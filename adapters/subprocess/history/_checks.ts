/* Checks of the history functions' arguments: page bounds, titles and tags. */

import { DuplexError } from "../../../src/errors.ts";

/**
 * Checks a page bound: a whole number of at least 0 (or `Infinity`).
 *
 * @returns The value, or `fallback` when it is undefined.
 * @throws {TypeError} When it is not a number.
 * @throws {DuplexError} `invalid_argument` when it is negative or fractional.
 */
export function pageBound(
  name: "limit" | "offset",
  value: number | undefined,
  fallback: number,
  action: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot ${action}: ${name} must be a number, got ${typeof value}`);
  }
  if (!(value === Infinity || Number.isSafeInteger(value)) || value < 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: ${name} must be a whole number of at least 0, got ${value}`,
    );
  }
  return value;
}

/** Control and invisible format characters, which a title or tag shows as one space. */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]+/gu;

/**
 * Cleans a title or tag: control and invisible characters become one space,
 * then it is trimmed.
 *
 * @throws {TypeError} When it is not a string.
 * @throws {DuplexError} `invalid_argument` when nothing is left.
 */
export function cleanText(value: unknown, what: "title" | "tag", action: string): string {
  if (typeof value !== "string") {
    throw new TypeError(`Cannot ${action}: the ${what} must be a string, got ${typeof value}`);
  }
  const clean = value.replace(INVISIBLE, " ").trim();
  if (!clean) {
    const hint = what === "tag" ? " (pass null to clear the tag)" : "";
    throw new DuplexError("invalid_argument", `Cannot ${action}: the ${what} is empty${hint}`);
  }
  return clean;
}
