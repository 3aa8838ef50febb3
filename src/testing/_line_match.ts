// This module is browser compatible.
/**
 * How the replay compares a line the session wrote with the recorded one,
 * learning recorded → actual ids on the way. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { excerptOf } from "../errors.ts";
import { isRecord } from "../_values.ts";
import { userText } from "./_echo.ts";

/** How closely lines must match. */
export type MatchMode = "loose" | "default" | "strict";

/** The outcome of a comparison: the ids learned, or why it failed. */
export type LineMatch =
  | { ok: true; learned: Map<string, string> }
  | { ok: false; why: string; path: string | undefined };

/**
 * Describes a frame in a few words: `control_request/interrupt`, `user "hi"`.
 *
 * @param frame A parsed line.
 * @returns The description.
 */
export function describeFrame(frame: Record<string, unknown>): string {
  const type = String(frame.type);
  if (type === "user") return `user "${excerptOf(userText(frame), 60)}"`;
  if (type === "control_request" && isRecord(frame.request)) {
    return `control_request/${String(frame.request.subtype)}`;
  }
  if (type === "control_response" && isRecord(frame.response)) {
    const inner = frame.response.response;
    const behavior = isRecord(inner) && typeof inner.behavior === "string"
      ? ` (${inner.behavior})`
      : "";
    return `control_response/${String(frame.response.subtype)}${behavior}`;
  }
  return typeof frame.subtype === "string" ? `${type}/${frame.subtype}` : type;
}

class Comparison {
  learned = new Map<string, string>();
  why: string | undefined = undefined;
  path: string | undefined = undefined;
  #ids: ReadonlyMap<string, string>;

  constructor(ids: ReadonlyMap<string, string>) {
    this.#ids = ids;
  }

  fail(path: readonly (string | number)[], expected: unknown, actual: unknown): false {
    this.path ??= formatPath(path);
    this.why ??= `differs at ${formatPath(path)}: expected ${show(expected)}, got ${show(actual)}`;
    return false;
  }

  /* A recorded id and the actual one: equal, or a new consistent mapping. */
  learn(path: readonly (string | number)[], expected: unknown, actual: unknown): boolean {
    if (typeof expected !== "string" || typeof actual !== "string") {
      return this.fail(path, expected, actual);
    }
    const known = this.learned.get(expected) ?? this.#ids.get(expected);
    if (known !== undefined && known !== actual) {
      this.path ??= formatPath(path);
      this.why ??= `differs at ${formatPath(path)}: recorded id ${show(expected)} was already ` +
        `replayed as ${show(known)}, got ${show(actual)}`;
      return false;
    }
    if (expected !== actual) this.learned.set(expected, actual);
    return true;
  }

  /* Deep comparison; `subset` ignores keys the recording does not have. */
  diff(path: (string | number)[], expected: unknown, actual: unknown, subset: boolean): boolean {
    if (isIdPath(path)) return this.learn(path, expected, actual);
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual) || actual.length !== expected.length) {
        return this.fail(path, expected, actual);
      }
      return expected.every((item, i) => this.diff([...path, i], item, actual[i], subset));
    }
    if (isRecord(expected)) {
      if (!isRecord(actual)) return this.fail(path, expected, actual);
      for (const key of Object.keys(expected)) {
        if (!(key in actual)) return this.fail([...path, key], expected[key], undefined);
        if (!this.diff([...path, key], expected[key], actual[key], subset)) return false;
      }
      if (!subset) {
        const extra = Object.keys(actual).find((key) => !(key in expected));
        if (extra !== undefined) return this.fail([...path, extra], undefined, actual[extra]);
      }
      return true;
    }
    return Object.is(expected, actual) || this.fail(path, expected, actual);
  }
}

/* Ids the session makes up: recorded and actual may differ. */
function isIdPath(path: readonly (string | number)[]): boolean {
  const last = path.at(-1);
  return (path.length === 1 && (last === "request_id" || last === "uuid")) ||
    last === "callback_id" || path.at(-2) === "hookCallbackIds";
}

function formatPath(path: readonly (string | number)[]): string {
  return path.map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("").slice(1) ||
    "(root)";
}

function show(value: unknown): string {
  return value === undefined ? "nothing" : excerptOf(JSON.stringify(value), 80);
}

/**
 * Compares a written line with the recorded one.
 *
 * @param expected The recorded stdin line.
 * @param actual The line the session wrote.
 * @param mode How closely they must match.
 * @param ids The ids learned so far (recorded → actual).
 * @returns The newly learned ids, or why the lines differ.
 */
export function matchLine(
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  mode: MatchMode,
  ids: ReadonlyMap<string, string>,
): LineMatch {
  const mismatch = `expected ${describeFrame(expected)}, got ${describeFrame(actual)}`;
  const sameKind = expected.type === actual.type &&
    subtypeOf(expected) === subtypeOf(actual);
  if (!sameKind) {
    const path = expected.type !== actual.type
      ? "type"
      : isRecord(expected.request)
      ? "request.subtype"
      : isRecord(expected.response)
      ? "response.subtype"
      : "subtype";
    return { ok: false, why: mismatch, path };
  }
  const c = new Comparison(ids);
  const ok = compare(c, expected, actual, mode);
  return ok ? { ok: true, learned: c.learned } : {
    ok: false,
    why: `${describeFrame(expected)} ${c.why ?? "differs"}`,
    path: c.path,
  };
}

function subtypeOf(frame: Record<string, unknown>): unknown {
  if (isRecord(frame.request)) return frame.request.subtype;
  if (isRecord(frame.response)) return frame.response.subtype;
  return undefined;
}

function compare(
  c: Comparison,
  expected: Record<string, unknown>,
  actual: Record<string, unknown>,
  mode: MatchMode,
): boolean {
  if (expected.type === "control_response") {
    const e = isRecord(expected.response) ? expected.response : {};
    const a = isRecord(actual.response) ? actual.response : {};
    const recordedId = typeof e.request_id === "string" ? e.request_id : "";
    const wanted = c.learned.get(recordedId) ?? recordedId;
    if (a.request_id !== wanted) {
      return c.fail(["response", "request_id"], wanted, a.request_id);
    }
    if (mode === "strict") return c.diff([], expected, actual, false);
    if (mode === "loose") return true;
    const inner = e.response;
    const got = isRecord(a.response) ? a.response : {};
    if (isRecord(inner) && "behavior" in inner) {
      for (const key of ["behavior", "updatedInput", "message", "interrupt"]) {
        if (key in inner && !c.diff(["response", "response", key], inner[key], got[key], false)) {
          return false;
        }
      }
      return true;
    }
    return inner === undefined || c.diff(["response", "response"], inner, a.response, true);
  }
  if ("uuid" in expected && "uuid" in actual && !c.learn(["uuid"], expected.uuid, actual.uuid)) {
    return false;
  }
  if (
    "request_id" in expected && !c.learn(["request_id"], expected.request_id, actual.request_id)
  ) {
    return false;
  }
  if (mode === "strict") return c.diff([], expected, actual, false);
  if (mode === "loose") return true;
  if (expected.type === "user") {
    const want = userText(expected);
    const got = userText(actual);
    return want === got || c.fail(["message", "content"], want, got);
  }
  if (expected.type === "control_request") {
    return c.diff(["request"], expected.request, actual.request, true);
  }
  const rest = { ...expected };
  delete rest.uuid;
  delete rest.request_id;
  return c.diff([], rest, actual, true);
}
