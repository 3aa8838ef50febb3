// This module is browser compatible.
/**
 * The control frames a scripted CLI sends: a `can_use_tool` request, the
 * success and error responses to the session's requests, and the withdrawal
 * of a request. Part of the frame builders catalogue (`frames.ts`).
 *
 * @module
 */

import type {
  ControlCancelRequestFrame,
  ControlRequestFrame,
  ControlResponseFrame,
  PermissionUpdate,
} from "../protocol/control.ts";
import { nextId } from "./_frame_defaults.ts";

/** Options of {@linkcode canUseToolRequest}. */
export interface CanUseToolRequestOptions {
  /** The request id. @default {a random UUID, like the CLI's} */
  requestId?: string;
  /** The tool asking, for example `"Bash"`. */
  toolName: string;
  /** The tool input. */
  input: Record<string, unknown>;
  /** The tool use id. @default {a fresh "toolu_scripted_N"} */
  toolUseId?: string;
  /** `permission_suggestions`. Absent unless given. */
  suggestions?: PermissionUpdate[];
  /** `blocked_path`. Absent unless given. */
  blockedPath?: string;
}

/**
 * Builds the `can_use_tool` control request the CLI sends when a tool needs
 * permission.
 *
 * @param options Request id, tool name and input, tool use id, suggestions, blocked path.
 * @returns A `control_request` frame.
 *
 * @example Ask for permission
 * ```ts
 * import { canUseToolRequest } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = canUseToolRequest({ requestId: "r1", toolName: "Bash", input: { command: "ls" } });
 * assert.equal(frame.request.subtype, "can_use_tool");
 * assert.equal(frame.request.tool_name, "Bash");
 * ```
 */
export function canUseToolRequest(options: CanUseToolRequestOptions): ControlRequestFrame {
  const description = options.input.description;
  return {
    type: "control_request",
    request_id: options.requestId ?? crypto.randomUUID(),
    request: {
      subtype: "can_use_tool",
      tool_name: options.toolName,
      display_name: options.toolName,
      input: options.input,
      ...(typeof description === "string" ? { description } : {}),
      ...(options.suggestions ? { permission_suggestions: options.suggestions } : {}),
      ...(options.blockedPath === undefined ? {} : { blocked_path: options.blockedPath }),
      tool_use_id: options.toolUseId ?? nextId("toolu_scripted"),
    },
  };
}

/**
 * Builds a successful control response.
 *
 * @param requestId The id of the request answered.
 * @param response The response payload; absent when not given (as for `set_max_thinking_tokens`).
 * @returns A `control_response` frame.
 *
 * @example Acknowledge an interrupt
 * ```ts
 * import { controlSuccess } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = controlSuccess("ctl_1", { still_queued: [] });
 * assert.equal(frame.response.subtype, "success");
 * assert.equal(frame.response.request_id, "ctl_1");
 * ```
 */
export function controlSuccess(
  requestId: string,
  response?: Record<string, unknown>,
): ControlResponseFrame {
  return {
    type: "control_response",
    response: {
      subtype: "success",
      request_id: requestId,
      ...(response === undefined ? {} : { response }),
    },
  };
}

/**
 * Builds a failed control response.
 *
 * @param requestId The id of the request answered.
 * @param error The error text.
 * @param errorCode The CLI's `error_code`, for example `"unsupported_request"`.
 * @returns A `control_response` frame.
 *
 * @example Refuse an unknown request
 * ```ts
 * import { controlError } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const frame = controlError("ctl_2", "Unsupported control request subtype: x", "unsupported_request");
 * assert.equal(frame.response.subtype, "error");
 * ```
 */
export function controlError(
  requestId: string,
  error: string,
  errorCode?: string,
): ControlResponseFrame {
  return {
    type: "control_response",
    response: {
      subtype: "error",
      request_id: requestId,
      error,
      ...(errorCode === undefined ? {} : { error_code: errorCode }),
    },
  };
}

/**
 * Builds the frame by which the CLI withdraws a control request it sent
 * (for example a `can_use_tool` when the turn is interrupted).
 *
 * @param requestId The id of the withdrawn request.
 * @returns A `control_cancel_request` frame.
 *
 * @example Withdraw a permission request
 * ```ts
 * import { controlCancel } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(controlCancel("r1"), { type: "control_cancel_request", request_id: "r1" });
 * ```
 */
export function controlCancel(requestId: string): ControlCancelRequestFrame {
  return { type: "control_cancel_request", request_id: requestId };
}
