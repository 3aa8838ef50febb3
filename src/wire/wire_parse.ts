// This module is browser compatible.
/**
 * Typed parsers of the relay wire protocol (see `wire.ts`): text in, a
 * checked message out, or the reason it is not one. Every field a message
 * type has is checked; fields a message type does not have are left out of
 * the result, except in a spawn request, whose unknown options pass through
 * for the relay's policy to refuse by name.
 *
 * @module
 */

import type { TransportExit } from "../errors.ts";
import { isRecord } from "../_values.ts";
import { parseTraceContext } from "../telemetry/_trace_context.ts";
import {
  type ClientMessage,
  RELAY_ERROR_KINDS,
  type RelayErrorKind,
  type RelayMessage,
  type SpawnRequest,
} from "./wire.ts";

/** What a parser returns: the checked message, or why the text is not one. */
export type WireResult<T> =
  | { readonly ok: true; readonly message: T }
  | { readonly ok: false; readonly reason: string };

/**
 * Parses one client message (a text frame that is not a batch).
 *
 * @example Check what a client sent
 * ```ts
 * import { parseClientMessage } from "./wire_parse.ts";
 * import assert from "node:assert/strict";
 *
 * const parsed = parseClientMessage('{"t":"in","seq":1,"line":"{}"}');
 * assert.ok(parsed.ok);
 * assert.deepEqual(parsed.message, { t: "in", seq: 1, line: "{}" });
 * assert.equal(parseClientMessage('{"t":"in","seq":0}').ok, false);
 * ```
 *
 * @param text The frame's text.
 * @returns The message, or the reason it is not one.
 */
export function parseClientMessage(text: string): WireResult<ClientMessage> {
  const json = parseJson(text);
  return json.ok ? clientMessage(json.message) : json;
}

/**
 * Parses a client's text frame: one message, or a batch (a non-empty JSON
 * array of messages, to handle in order). A batch is checked whole: one bad
 * message refuses the frame.
 *
 * @param text The frame's text.
 * @returns The messages in order, or the reason the frame is refused.
 */
export function parseClientFrame(text: string): WireResult<readonly ClientMessage[]> {
  const json = parseJson(text);
  if (!json.ok) return json;
  const items = json.message;
  if (!Array.isArray(items)) {
    const one = clientMessage(items);
    return one.ok ? { ok: true, message: [one.message] } : one;
  }
  if (items.length === 0) return invalid("A batch must be a non-empty JSON array of messages");
  const messages: ClientMessage[] = [];
  for (const item of items) {
    const one = clientMessage(item);
    if (!one.ok) return one;
    messages.push(one.message);
  }
  return { ok: true, message: messages };
}

/**
 * Parses a relay's text frame (stdout travels in binary frames, see `decodeOutput`).
 *
 * @example Check what the relay sent
 * ```ts
 * import { parseRelayMessage } from "./wire_parse.ts";
 * import assert from "node:assert/strict";
 *
 * const parsed = parseRelayMessage('{"t":"exit","seq":3,"exit":{"code":0,"signal":null}}');
 * assert.ok(parsed.ok && parsed.message.t === "exit");
 * assert.equal(parsed.message.exit.stderrTail, "");
 * assert.equal(parseRelayMessage('{"t":"exit","seq":3}').ok, false);
 * ```
 *
 * @param text The frame's text.
 * @returns The message, or the reason it is not one.
 */
export function parseRelayMessage(text: string): WireResult<RelayMessage> {
  const json = parseJson(text);
  if (!json.ok) return json;
  const value = json.message;
  if (!isRecord(value) || typeof value.t !== "string") return notAMessage();
  switch (value.t) {
    case "ready": {
      const { session, resumed, inSeq, pid, graceMs, gone } = value;
      if (typeof session !== "string" || session === "") {
        return needs("ready", "session", "a non-empty string");
      }
      if (typeof resumed !== "boolean") return needs("ready", "resumed", "a boolean");
      if (!isSeq(inSeq)) return needs("ready", "inSeq", "an integer >= 0");
      if (pid !== undefined && !isSeq(pid)) return needs("ready", "pid", "an integer >= 0");
      if (graceMs !== null && !(typeof graceMs === "number" && graceMs >= 0)) {
        return needs("ready", "graceMs", "a number >= 0 or null");
      }
      const lost = gone === undefined ? undefined : cliGone(gone);
      if (gone !== undefined && lost === undefined) {
        return needs(
          "ready",
          "gone",
          "an object { inSeq: integer >= 0, outSeq: integer >= 0, uuids?: string[] }",
        );
      }
      return ok({
        t: "ready",
        session,
        resumed,
        inSeq,
        ...(pid !== undefined && { pid }),
        graceMs,
        ...(lost !== undefined && { gone: lost }),
      });
    }
    case "err":
      if (!isOutputSeq(value.seq)) return needs("err", "seq", "an integer >= 1");
      if (typeof value.line !== "string") return needs("err", "line", "a string");
      return ok({ t: "err", seq: value.seq, line: value.line });
    case "exit": {
      if (!isOutputSeq(value.seq)) return needs("exit", "seq", "an integer >= 1");
      const exit = transportExit(value.exit);
      return exit.ok ? ok({ t: "exit", seq: value.seq, exit: exit.message }) : exit;
    }
    case "ack":
      return ack(value);
    case "error": {
      const { kind, message } = value;
      if (!isRelayErrorKind(kind)) {
        return needs("error", "kind", `one of ${RELAY_ERROR_KINDS.join(", ")}`);
      }
      if (typeof message !== "string") return needs("error", "message", "a string");
      return ok({ t: "error", kind, message });
    }
    case "ping":
    case "pong":
      return beat(value.t, value.at);
    default:
      return unexpected(value.t);
  }
}

/**
 * Checks a spawn request: an object whose known options have their types
 * (`maxTurns` a positive integer). Unknown options pass through, for the
 * relay's policy to refuse by name.
 *
 * @param value The `spawn` field of a hello (unchecked).
 * @returns The request, or the reason it is malformed.
 */
export function parseSpawnRequest(value: unknown): WireResult<SpawnRequest> {
  return isSpawnRequest(value) ? ok(value) : invalid(spawnProblem(value) ?? "A bad spawn request");
}

/** True for a sequence number: a safe integer >= 0. */
function isSeq(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** True for the sequence number of an output entry or an input line (they start at 1). */
function isOutputSeq(value: unknown): value is number {
  return isSeq(value) && value >= 1;
}

function clientMessage(value: unknown): WireResult<ClientMessage> {
  if (!isRecord(value) || typeof value.t !== "string") return notAMessage();
  switch (value.t) {
    case "hello":
      return hello(value);
    case "in":
      if (!isOutputSeq(value.seq)) return needs("in", "seq", "an integer >= 1");
      if (typeof value.line !== "string" || value.line.includes("\n")) {
        return needs("in", "line", "a string without newlines");
      }
      return ok({ t: "in", seq: value.seq, line: value.line });
    case "ack":
      return ack(value);
    case "eof":
    case "close":
      return ok({ t: value.t });
    case "ping":
    case "pong":
      return beat(value.t, value.at);
    default:
      return unexpected(value.t);
  }
}

/** The messages both ends send: an acknowledgement, a ping or a pong. */
type Shared = Extract<ClientMessage, { t: "ack" | "ping" | "pong" }>;

function ack(value: Record<string, unknown>): WireResult<Shared> {
  return isSeq(value.seq)
    ? ok({ t: "ack", seq: value.seq })
    : needs("ack", "seq", "an integer >= 0");
}

function beat(t: "ping" | "pong", at: unknown): WireResult<Shared> {
  return typeof at === "number" ? ok({ t, at }) : needs(t, "at", "a number");
}

function unexpected(t: string): { readonly ok: false; readonly reason: string } {
  return invalid(`Unexpected message ${quoted(t)}`);
}

/** The most uuids a ready's `gone.uuids` may name. */
const MAX_GONE_UUIDS = 1024;

/* A ready's `gone`, checked. */
function cliGone(
  value: unknown,
): { inSeq: number; outSeq: number; uuids?: string[] } | undefined {
  if (!isRecord(value)) return undefined;
  const { inSeq, outSeq, uuids } = value;
  if (!isSeq(inSeq) || !isSeq(outSeq)) return undefined;
  if (uuids === undefined) return { inSeq, outSeq };
  const named = Array.isArray(uuids) && uuids.length <= MAX_GONE_UUIDS &&
    uuids.every(isLineUuid);
  return named ? { inSeq, outSeq, uuids: uuids as string[] } : undefined;
}

/** The longest user line uuid a resume may name (a UUID has 36; the CLI takes any string). */
const MAX_UUID_CHARS = 128;

function isLineUuid(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_UUID_CHARS;
}

function hello(value: Record<string, unknown>): WireResult<ClientMessage> {
  const { v, spawn, resume } = value;
  if (v !== 1) return invalid(`Unsupported protocol version ${quoted(v)}; this is version 1`);
  // A malformed trace context is dropped: it only ever names a parent span.
  const trace = parseTraceContext(value.trace);
  const traced = trace === undefined ? {} : { trace };
  if (resume !== undefined) {
    if (spawn !== undefined) return invalid("A hello has either spawn or resume, not both");
    if (
      !isRecord(resume) || typeof resume.session !== "string" || !isSeq(resume.after) ||
      (resume.applied !== undefined && !isSeq(resume.applied)) ||
      (resume.answered !== undefined && !isLineUuid(resume.answered))
    ) {
      return needs(
        "hello",
        "resume",
        "an object { session: string, after: integer >= 0, applied?: integer >= 0, " +
          `answered?: string of 1 to ${MAX_UUID_CHARS} characters }`,
      );
    }
    const { session, after, applied, answered } = resume;
    const point = {
      session,
      after,
      ...(applied === undefined ? {} : { applied }),
      ...(answered === undefined ? {} : { answered }),
    };
    return ok({ t: "hello", v: 1, resume: point, ...traced });
  }
  if (spawn === undefined) return ok({ t: "hello", v: 1, ...traced });
  const request = parseSpawnRequest(spawn);
  return request.ok ? ok({ t: "hello", v: 1, spawn: request.message, ...traced }) : request;
}

function transportExit(value: unknown): WireResult<TransportExit> {
  if (!isRecord(value)) return needs("exit", "exit", "an object");
  // A relay may leave out the stderr tail (empty) and `requested`: the client then takes the end
  // as its own close's when it asked for one (`requested` only says whether the relay's close of
  // the CLI, not the CLI itself, ended it).
  const { code, signal, closeCode, reason, stderrTail = "", requested = true } = value;
  if (code !== null && !(typeof code === "number" && Number.isSafeInteger(code))) {
    return needs("exit", "exit.code", "an integer or null");
  }
  if (signal !== null && typeof signal !== "string") {
    return needs("exit", "exit.signal", "a string or null");
  }
  if (closeCode !== undefined && !isSeq(closeCode)) {
    return needs("exit", "exit.closeCode", "an integer >= 0");
  }
  if (reason !== undefined && typeof reason !== "string") {
    return needs("exit", "exit.reason", "a string");
  }
  if (typeof stderrTail !== "string") return needs("exit", "exit.stderrTail", "a string");
  if (typeof requested !== "boolean") return needs("exit", "exit.requested", "a boolean");
  return ok({
    code,
    signal,
    ...(closeCode !== undefined && { closeCode }),
    ...(reason !== undefined && { reason }),
    stderrTail,
    requested,
  });
}

/** The type of each spawn option a client may name. */
const SPAWN_TYPES: ReadonlyMap<string, "string" | "number" | "boolean"> = new Map(
  [
    ["model", "string"],
    ["permissionMode", "string"],
    ["includePartialMessages", "boolean"],
    ["maxTurns", "number"],
    ["cwd", "string"],
    ["resume", "string"],
  ] as const,
);

/** The names of the spawn options a client may name (the relay's policy decides their values). */
export const SPAWN_OPTIONS: readonly string[] = [...SPAWN_TYPES.keys()];

function spawnProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return "The spawn request must be an object";
  for (const [name, type] of SPAWN_TYPES) {
    if (value[name] !== undefined && typeof value[name] !== type) {
      return `The spawn option ${name} must be a ${type}`;
    }
  }
  const turns = value.maxTurns;
  if (turns !== undefined && !(Number.isSafeInteger(turns) && Number(turns) > 0)) {
    return "The spawn option maxTurns must be a positive integer";
  }
  return undefined;
}

function isSpawnRequest(value: unknown): value is SpawnRequest {
  return spawnProblem(value) === undefined;
}

function isRelayErrorKind(value: unknown): value is RelayErrorKind {
  return RELAY_ERROR_KINDS.some((kind) => kind === value);
}

function parseJson(text: string): WireResult<unknown> {
  try {
    return ok(JSON.parse(text));
  } catch {
    return invalid("A message must be JSON");
  }
}

function ok<T>(message: T): WireResult<T> {
  return { ok: true, message };
}

function invalid(reason: string): { readonly ok: false; readonly reason: string } {
  return { ok: false, reason };
}

function notAMessage(): { readonly ok: false; readonly reason: string } {
  return invalid("A message must be a JSON object with a string t");
}

function needs(
  t: string,
  field: string,
  what: string,
): { readonly ok: false; readonly reason: string } {
  return invalid(`${/^[aeiou]/.test(t) ? "An" : "A"} ${t} message needs ${field}: ${what}`);
}

/* A value in a message: a string as its quoted first 40 characters, anything else as text. */
function quoted(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : String(value);
}
