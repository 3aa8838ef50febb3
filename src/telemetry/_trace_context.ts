// This module is browser compatible.
/*
 * W3C Trace Context (Level 1): reading a `traceparent` and a `tracestate`
 * that come from another process, so that a malformed one is dropped and
 * never passed on as something else.
 */

import { isRecord } from "../_values.ts";

/** W3C trace context of a span, for a child process or a remote peer. */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The fields of a W3C `traceparent`. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero: the parent span. */
  readonly spanId: string;
  /** The trace flags (bit 0: sampled). */
  readonly traceFlags: number;
}

/** version-traceid-parentid-flags, and what a later version may add after a `-`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;
/** A tracestate key: `name`, or `tenant@system`. */
const TRACESTATE_KEY =
  /^(?:[a-z][a-z0-9_*\/-]{0,255}|[a-z0-9][a-z0-9_*\/-]{0,240}@[a-z][a-z0-9_*\/-]{0,13})$/;
/** A tracestate value: printable ASCII but `,` and `=`, up to 256, not ending in a space. */
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
/** The most list members of a tracestate, and the most characters kept (W3C: at least 512). */
const TRACESTATE_MEMBERS = 32;
const TRACESTATE_CHARS = 512;
/** The longest traceparent taken (a later version may add fields). */
const TRACEPARENT_CHARS = 512;
const ALL_ZERO = /^0+$/;

/**
 * Reads a W3C `traceparent` (Trace Context Level 1): version 00 exactly, or
 * a later version's first four fields; never version `ff`, an all-zero trace
 * or parent id, or uppercase hex.
 *
 * @param text The header value.
 * @returns Its fields, or undefined when it is not one.
 */
export function parseTraceparent(text: unknown): TraceParent | undefined {
  if (typeof text !== "string" || text.length > TRACEPARENT_CHARS) return undefined;
  const match = TRACEPARENT.exec(text);
  if (match === null) return undefined;
  const [, version, traceId = "", spanId = "", flags = "", rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}

/** A tracestate as W3C defines it (at most 32 members, keys once each), or undefined. */
function checkTracestate(text: unknown): string | undefined {
  if (typeof text !== "string" || text.length > TRACESTATE_CHARS) return undefined;
  const keys = new Set<string>();
  const members: string[] = [];
  for (const item of text.split(",")) {
    const member = item.replace(/^[ \t]+|[ \t]+$/g, "");
    if (member === "") continue;
    const at = member.indexOf("=");
    const key = member.slice(0, at);
    if (at < 0 || !TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(at + 1))) {
      return undefined;
    }
    if (keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > TRACESTATE_MEMBERS) return undefined;
  return members.join(",");
}

/**
 * Checks a trace context from another process (a relay client's hello): a
 * valid `traceparent`, rewritten as version 00 from its checked fields, and
 * its `tracestate` when that is valid too (a bad tracestate is dropped, the
 * traceparent kept, as W3C says). Anything else is not a trace context.
 *
 * @param value The unchecked value: `{ traceparent, tracestate? }`.
 * @returns The checked context, or undefined.
 */
export function parseTraceContext(value: unknown): TraceContext | undefined {
  if (!isRecord(value)) return undefined;
  const parent = parseTraceparent(value.traceparent);
  if (parent === undefined) return undefined;
  const traceparent = formatTraceparent(parent);
  const tracestate = checkTracestate(value.tracestate);
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

function formatTraceparent({ traceId, spanId, traceFlags }: TraceParent): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}
