/* The checks of `buildArgs`: each returns the checked value or throws a TypeError (wrong type)
 * or a DuplexError `invalid_argument` (a value the CLI would refuse), worded alike. */

import { describe, messageOf } from "../../src/_values.ts";
import { DuplexError } from "../../src/errors.ts";

const WHAT = "Cannot build the claude arguments";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const NO_VALUE = Symbol("no value");

export function invalid(what: string, value: unknown = NO_VALUE): DuplexError {
  const got = value === NO_VALUE ? "" : `, got ${describe(value)}`;
  return new DuplexError("invalid_argument", `${WHAT}: ${what}${got}`);
}

export function wrongType(name: string, expected: string, value: unknown): TypeError {
  return new TypeError(`${WHAT}: ${name} must be ${expected}, got ${describe(value)}`);
}

export function noNul(name: string, value: string): string {
  if (value.includes("\0")) throw invalid(`${name} must not contain a NUL character`, value);
  return value;
}

export function text(name: string, value: unknown): string {
  if (typeof value !== "string") throw wrongType(name, "a string", value);
  if (value.length === 0) throw invalid(`${name} must not be empty`, value);
  return noNul(name, value);
}

export function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw wrongType(name, "a boolean", value);
  return value;
}

export function list(name: string, value: unknown): readonly unknown[] {
  if (!Array.isArray(value)) throw wrongType(name, "an array", value);
  return value;
}

export function texts(name: string, value: unknown): string[] {
  return list(name, value).map((item, i) => text(`${name}[${i}]`, item));
}

export function record(name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw wrongType(name, "an object", value);
  }
  return value as Record<string, unknown>;
}

export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${name} must be one of ${allowed.join(", ")}`, value);
  }
  return value as T;
}

export function positiveInteger(name: string, value: unknown): number {
  if (typeof value !== "number") throw wrongType(name, "a number", value);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`${name} must be a positive integer`, value);
  }
  return value;
}

export function positiveNumber(name: string, value: unknown): number {
  if (typeof value !== "number") throw wrongType(name, "a number", value);
  if (!Number.isFinite(value) || value <= 0) {
    throw invalid(`${name} must be a finite number greater than 0`, value);
  }
  return value;
}

export function uuid(name: string, value: unknown): string {
  const id = text(name, value);
  if (!UUID.test(id)) {
    throw invalid(`${name} must be a UUID (like 123e4567-e89b-42d3-a456-426614174000)`, id);
  }
  return id;
}

/** An object encoded as JSON text. */
export function json(name: string, value: unknown): string {
  record(name, value);
  let encoded: string;
  try {
    encoded = JSON.stringify(value);
  } catch (error) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: ${name} cannot be encoded as JSON; pass plain data`,
      { cause: error },
    );
  }
  return noNul(name, encoded);
}

/** JSON text that must hold an object, parsed. */
export function parseObject(name: string, value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new DuplexError(
      "invalid_argument",
      `${WHAT}: ${name} looks like JSON text but does not parse (${
        messageOf(error)
      }); pass an object, valid JSON text, or a file path`,
      { cause: error },
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalid(`${name} as JSON text must hold an object`);
  }
  return parsed as Record<string, unknown>;
}

/** Whether a string option is JSON text rather than a file path. */
export function isJsonText(value: string): boolean {
  return value.trimStart().startsWith("{");
}

/** The one of an option and its deprecated alias that is set; both set is an error. */
export function either<T>(
  [name, alias]: readonly [string, string],
  value: T | undefined,
  old: T | undefined,
): T | undefined {
  if (value !== undefined && old !== undefined) {
    throw invalid(`pass ${name} or its deprecated name ${alias}, not both`);
  }
  return value ?? old;
}
