// This module is browser compatible.
/**
 * Turns a {@linkcode FrameMatch} shorthand (`"user"`,
 * `"control_request:interrupt"`) into a matcher. Private to
 * `@duplex/claude/testing`.
 *
 * @module
 */

import { isRecord } from "../_values.ts";
import type { FrameMatch, FrameMatcher } from "./scripted_cli_options.ts";

/**
 * A matcher that takes every line.
 *
 * @returns Always true.
 */
export function matchAny(): boolean {
  return true;
}

/**
 * The matcher a {@linkcode FrameMatch} stands for.
 *
 * @param match A matcher (returned as is), or a `"type"` / `"type:subtype"` shorthand.
 * @returns The matcher.
 */
export function toMatcher(match: FrameMatch): FrameMatcher {
  if (typeof match === "function") return match;
  const colon = match.indexOf(":");
  const type = colon < 0 ? match : match.slice(0, colon);
  const subtype = colon < 0 ? undefined : match.slice(colon + 1);
  return (frame) => frame.type === type && (subtype === undefined || subtypeOf(frame) === subtype);
}

function subtypeOf(frame: Record<string, unknown>): unknown {
  if (frame.type === "control_request" && isRecord(frame.request)) return frame.request.subtype;
  if (frame.type === "control_response" && isRecord(frame.response)) return frame.response.subtype;
  return frame.subtype;
}
