// This module is browser compatible.
/**
 * Narrowing of parsed JSON into {@linkcode CliFrame}s, by checks, never casts
 * of unchecked data.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import type {
  CanUseToolRequest,
  ControlCancelRequestFrame,
  ControlFailure,
  ControlRequestBody,
  ControlRequestFrame,
  ControlResponseFrame,
  ControlSuccess,
} from "./control.ts";
import { FLAT_FIELDS, type FlatFrameMap, hasFields, SYSTEM_FIELDS } from "./_frame_checks.ts";
import type {
  AssistantFrame,
  CliFrame,
  ResultFrame,
  StreamEventFrame,
  UnknownFrame,
  UserFrame,
} from "./messages.ts";
import type { SystemFrame, SystemFrameMap, SystemSubtype } from "./system_frame.ts";
import type { SystemInitFrame } from "./system_frames.ts";

function isKnownSubtype(subtype: string): subtype is SystemSubtype {
  return Object.hasOwn(SYSTEM_FIELDS, subtype);
}

/* A known subtype must carry its required fields; any other subtype is kept as sent. */
function isWellFormedSystem(
  o: Record<string, unknown>,
): o is SystemFrame & Record<string, unknown> {
  const subtype = o.subtype;
  if (typeof subtype !== "string") return false;
  return !isKnownSubtype(subtype) || hasFields(o, SYSTEM_FIELDS[subtype]);
}

function isFlatType(type: unknown): type is keyof FlatFrameMap {
  return typeof type === "string" && Object.hasOwn(FLAT_FIELDS, type);
}

function isFlatFrame(
  o: Record<string, unknown>,
): o is FlatFrameMap[keyof FlatFrameMap] & Record<string, unknown> {
  return isFlatType(o.type) && hasFields(o, FLAT_FIELDS[o.type]);
}

function isAssistantFrame(
  o: Record<string, unknown>,
): o is AssistantFrame & Record<string, unknown> {
  const m = o.message;
  return isRecord(m) && Array.isArray(m.content);
}

function isUserFrame(o: Record<string, unknown>): o is UserFrame & Record<string, unknown> {
  const m = o.message;
  return isRecord(m) && (typeof m.content === "string" || Array.isArray(m.content));
}

function isStreamEventFrame(
  o: Record<string, unknown>,
): o is StreamEventFrame & Record<string, unknown> {
  return isRecord(o.event) && typeof o.event.type === "string";
}

/* A result always ends a turn, so only `type` is required; readers default the rest. */
function isResultFrame(o: Record<string, unknown>): o is ResultFrame & Record<string, unknown> {
  return o.type === "result";
}

function isControlRequest(
  o: Record<string, unknown>,
): o is ControlRequestFrame & Record<string, unknown> {
  return typeof o.request_id === "string" && isRecord(o.request) &&
    typeof o.request.subtype === "string";
}

function isControlResponse(
  o: Record<string, unknown>,
): o is ControlResponseFrame & Record<string, unknown> {
  const r = o.response;
  if (!isRecord(r) || typeof r.request_id !== "string") return false;
  return r.subtype === "success" || (r.subtype === "error" && typeof r.error === "string");
}

function isControlCancel(
  o: Record<string, unknown>,
): o is ControlCancelRequestFrame & Record<string, unknown> {
  return typeof o.request_id === "string";
}

function unknownFrame(o: Record<string, unknown>): UnknownFrame {
  return { type: "unknown", frameType: typeof o.type === "string" ? o.type : "", frame: o };
}

/**
 * Classifies a parsed JSON object as a {@linkcode CliFrame}. Known frames are
 * returned as the same object (no copy); a frame of an unknown type, or a
 * known type (or known `system` subtype) missing one of its required fields,
 * comes back as an {@linkcode UnknownFrame} that keeps the object. A `system`
 * frame of an unknown subtype stays a `system` frame
 * (`SystemOtherFrame`).
 *
 * @param o A parsed JSON object.
 * @returns The classified frame.
 *
 * @example Classify parsed lines
 * ```ts
 * import { classifyFrame } from "@duplex/claude/protocol";
 * import assert from "node:assert/strict";
 *
 * const frame = classifyFrame(JSON.parse('{"type":"keep_alive"}'));
 * assert.equal(frame.type, "keep_alive");
 * const later = classifyFrame({ type: "hologram", beam: 1 });
 * assert.equal(later.type, "unknown");
 * assert.equal(later.type === "unknown" && later.frameType, "hologram");
 * ```
 */
export function classifyFrame(o: Record<string, unknown>): CliFrame {
  switch (o.type) {
    case "stream_event":
      return isStreamEventFrame(o) ? o : unknownFrame(o);
    case "assistant":
      return isAssistantFrame(o) ? o : unknownFrame(o);
    case "user":
      return isUserFrame(o) ? o : unknownFrame(o);
    case "system":
      return isWellFormedSystem(o) ? o : unknownFrame(o);
    case "result":
      return isResultFrame(o) ? o : unknownFrame(o);
    case "control_request":
      return isControlRequest(o) ? o : unknownFrame(o);
    case "control_response":
      return isControlResponse(o) ? o : unknownFrame(o);
    case "control_cancel_request":
      return isControlCancel(o) ? o : unknownFrame(o);
    case "keep_alive":
      return { type: "keep_alive" };
    default:
      return isFlatFrame(o) ? o : unknownFrame(o);
  }
}

/**
 * Narrows a frame to `system/init`.
 *
 * @param frame Any frame.
 * @returns True for a `system` frame of subtype `init` with a session id.
 */
export function isSystemInit(frame: CliFrame): frame is SystemInitFrame {
  return frame.type === "system" && frame.subtype === "init" &&
    typeof frame.session_id === "string";
}

/**
 * Narrows a frame to a `system` frame of one known subtype, with the fields
 * that subtype requires (checked again, so a hand-made frame is safe too).
 *
 * @typeParam S The subtype.
 * @param frame Any frame, or any session event.
 * @param subtype The subtype, for example `"task_started"`.
 * @returns True for a well-formed `system` frame of that subtype.
 *
 * @example Follow sub-agent tasks
 * ```ts
 * import { classifyFrame, isSystemFrame } from "@duplex/claude/protocol";
 * import assert from "node:assert/strict";
 *
 * const frame = classifyFrame({
 *   type: "system",
 *   subtype: "task_started",
 *   task_id: "a6cc720b8891b10c3",
 *   description: "sub task",
 * });
 * assert.ok(isSystemFrame(frame, "task_started"));
 * assert.equal(frame.task_id, "a6cc720b8891b10c3");
 * assert.ok(!isSystemFrame(frame, "task_updated"));
 * ```
 */
export function isSystemFrame<S extends SystemSubtype>(
  frame: { readonly type: string },
  subtype: S,
): frame is SystemFrameMap[S] {
  const fields: unknown = frame;
  return isRecord(fields) && fields.type === "system" && fields.subtype === subtype &&
    hasFields(fields, SYSTEM_FIELDS[subtype]);
}

/**
 * Narrows a control response payload to a failure.
 *
 * @param response The `response` of a `control_response` frame.
 * @returns True for the `error` subtype.
 */
export function isControlFailure(
  response: ControlSuccess | ControlFailure,
): response is ControlFailure {
  return response.subtype === "error";
}

/**
 * Narrows a control request body to a well-formed `can_use_tool` request:
 * its subtype, a string `tool_name` and an object `input`.
 *
 * @param body The `request` of a `control_request` frame.
 * @returns True for a `can_use_tool` request with its required fields.
 */
export function isCanUseToolRequest(body: ControlRequestBody): body is CanUseToolRequest {
  return body.subtype === "can_use_tool" && typeof body.tool_name === "string" &&
    isRecord(body.input);
}

/**
 * Reads a `can_use_tool` request body, giving a missing or mistyped
 * `tool_name` or `input` a neutral value (`""`, `{}`), so that even a
 * malformed request reaches the permission handler and gets an answer.
 *
 * @param body The `request` of a `control_request` frame of subtype `can_use_tool`.
 * @returns The request, well-formed.
 */
export function readCanUseToolRequest(body: ControlRequestBody): CanUseToolRequest {
  if (isCanUseToolRequest(body)) return body;
  return {
    ...body,
    subtype: "can_use_tool",
    tool_name: typeof body.tool_name === "string" ? body.tool_name : "",
    input: isRecord(body.input) ? body.input : {},
  };
}
