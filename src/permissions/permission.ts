// This module is browser compatible.
/**
 * Permission requests the CLI makes before running a tool, and the decisions
 * a host gives.
 *
 * @module
 */

import type { CanUseToolRequest, PermissionUpdate } from "../protocol/control.ts";
import { describe, isRecord } from "../_values.ts";

/** A tool the CLI wants to run, waiting for the host's decision. */
export interface PermissionRequest {
  /** The control request id; pass it to `respondToPermission`. */
  readonly requestId: string;
  /** The tool's name, for example `"Bash"` or `"mcp__server__tool"`. */
  readonly toolName: string;
  /** The tool's name as the CLI shows it, when it sent one. */
  readonly displayName: string | undefined;
  /** The tool's input. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The `tool_use` block id, when the CLI sent one. */
  readonly toolUseId: string | undefined;
  /** A description of what the tool will do, when the CLI sent one. */
  readonly description: string | undefined;
  /** Changes the CLI suggests for "always allow" answers (pass back in `updatedPermissions`). */
  readonly suggestions: readonly PermissionUpdate[];
  /** The path outside the allowed directories that caused the ask, if any. */
  readonly blockedPath: string | undefined;
  /** Why the CLI asks, when it said. */
  readonly decisionReason: string | undefined;
  /** The sub-agent asking, if not the main loop. */
  readonly agentId: string | undefined;
  /** Aborted when the CLI withdraws the request or the session ends: stop asking then. */
  readonly signal: AbortSignal;
  /** When the request arrived (milliseconds since the epoch). */
  readonly receivedAt: number;
  /** The request as the CLI sent it. */
  readonly raw: Readonly<CanUseToolRequest>;
}

/** Lets the tool run, optionally with a rewritten input and new permission rules. */
export interface AllowDecision {
  /** Always `"allow"`. */
  behavior: "allow";
  /** The input the tool runs with. Defaults to the original input. */
  updatedInput?: Record<string, unknown>;
  /** Permission changes to apply (typically from `request.suggestions`). */
  updatedPermissions?: PermissionUpdate[];
}

/** Refuses the tool; the model sees `message`. */
export interface DenyDecision {
  /** Always `"deny"`. */
  behavior: "deny";
  /** What the model is told. */
  message: string;
  /** Also interrupt the turn. */
  interrupt?: boolean;
}

/** Answers later, through `session.respondToPermission(requestId, decision)`. */
export interface DeferDecision {
  /** Always `"defer"`. */
  behavior: "defer";
}

/** What a permission handler decides. */
export type PermissionDecision = AllowDecision | DenyDecision | DeferDecision;

/** A final decision: what `respondToPermission` takes. */
export type FinalPermissionDecision = AllowDecision | DenyDecision;

/** Decides on a permission request, now or (with `defer`) later. */
export type PermissionHandler = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

/**
 * Allows a tool.
 *
 * @param updatedInput The input to run the tool with, if rewritten.
 * @returns An allow decision.
 *
 * @example Allow reads, deny the rest
 * ```ts
 * import { allow, deny, type PermissionHandler } from "@duplex/claude";
 * import assert from "node:assert/strict";
 *
 * const handler: PermissionHandler = (req) =>
 *   req.toolName === "Read" ? allow() : deny(`${req.toolName} is not allowed here`);
 * assert.equal(typeof handler, "function");
 * assert.deepEqual(allow({ command: "ls" }), { behavior: "allow", updatedInput: { command: "ls" } });
 * ```
 */
export function allow(updatedInput?: Record<string, unknown>): AllowDecision {
  return updatedInput === undefined ? { behavior: "allow" } : { behavior: "allow", updatedInput };
}

/**
 * Denies a tool.
 *
 * @param message What the model is told.
 * @param options `interrupt: true` also ends the turn.
 * @returns A deny decision.
 */
export function deny(message: string, options: { interrupt?: boolean } = {}): DenyDecision {
  return options.interrupt ? { behavior: "deny", message, interrupt: true } : {
    behavior: "deny",
    message,
  };
}

/**
 * Defers a decision, to be given later with `respondToPermission`.
 *
 * @returns A defer decision.
 */
export function defer(): DeferDecision {
  return { behavior: "defer" };
}

/** The outcome of checking a value that should be a decision. */
export type DecisionCheck =
  | { ok: true; decision: PermissionDecision }
  | { ok: false; reason: string };

/**
 * Checks that a value returned by a handler is a valid decision.
 *
 * @param value What the handler returned.
 * @returns The decision, or why it is not one.
 */
export function checkDecision(value: unknown): DecisionCheck {
  if (!isRecord(value)) {
    return { ok: false, reason: `expected a decision object, got ${describe(value)}` };
  }
  switch (value.behavior) {
    case "defer":
      return { ok: true, decision: { behavior: "defer" } };
    case "deny": {
      if (value.message !== undefined && typeof value.message !== "string") {
        return {
          ok: false,
          reason: `deny.message must be a string, got ${describe(value.message)}`,
        };
      }
      if (value.interrupt !== undefined && typeof value.interrupt !== "boolean") {
        return { ok: false, reason: `deny.interrupt must be a boolean` };
      }
      const message = value.message || "Denied by the host";
      return { ok: true, decision: deny(message, { interrupt: value.interrupt === true }) };
    }
    case "allow": {
      const decision: AllowDecision = { behavior: "allow" };
      if (value.updatedInput !== undefined) {
        if (!isRecord(value.updatedInput)) {
          return { ok: false, reason: `allow.updatedInput must be an object` };
        }
        if (!encodable(value.updatedInput)) {
          return { ok: false, reason: `allow.updatedInput cannot be encoded as JSON` };
        }
        decision.updatedInput = value.updatedInput;
      }
      if (value.updatedPermissions !== undefined) {
        if (!Array.isArray(value.updatedPermissions) || !value.updatedPermissions.every(isRecord)) {
          return { ok: false, reason: `allow.updatedPermissions must be an array of objects` };
        }
        if (!encodable(value.updatedPermissions)) {
          return { ok: false, reason: `allow.updatedPermissions cannot be encoded as JSON` };
        }
        decision.updatedPermissions = value.updatedPermissions as PermissionUpdate[];
      }
      return { ok: true, decision };
    }
    default:
      return {
        ok: false,
        reason: `behavior must be "allow", "deny" or "defer", got ${describe(value.behavior)}`,
      };
  }
}

/**
 * The wire payload of a final decision, as the CLI expects it: an allow always
 * carries `updatedInput` (the original input unless rewritten).
 *
 * @param decision The final decision.
 * @param request The request it answers.
 * @returns The `response` object of the success control response.
 */
export function decisionPayload(
  decision: FinalPermissionDecision,
  request: Pick<PermissionRequest, "input" | "toolUseId">,
): Record<string, unknown> {
  const payload: Record<string, unknown> = decision.behavior === "allow"
    ? {
      behavior: "allow",
      updatedInput: decision.updatedInput ?? request.input,
      ...(decision.updatedPermissions ? { updatedPermissions: decision.updatedPermissions } : {}),
    }
    : {
      behavior: "deny",
      message: decision.message,
      ...(decision.interrupt ? { interrupt: true } : {}),
    };
  if (request.toolUseId !== undefined) payload.toolUseID = request.toolUseId;
  return payload;
}

/**
 * Builds the {@linkcode PermissionRequest} a handler sees from the CLI's request.
 *
 * @param requestId The control request id.
 * @param body The `can_use_tool` request body.
 * @param signal The request's abort signal.
 * @returns The permission request.
 */
export function permissionRequestFrom(
  requestId: string,
  body: CanUseToolRequest,
  signal: AbortSignal,
): PermissionRequest {
  return {
    requestId,
    toolName: typeof body.tool_name === "string" ? body.tool_name : "",
    displayName: str(body.display_name),
    input: isRecord(body.input) ? body.input : {},
    toolUseId: str(body.tool_use_id),
    description: str(body.description),
    suggestions: Array.isArray(body.permission_suggestions)
      ? body.permission_suggestions.filter(isRecord) as PermissionUpdate[]
      : [],
    blockedPath: str(body.blocked_path),
    decisionReason: str(body.decision_reason),
    agentId: str(body.agent_id),
    signal,
    receivedAt: Date.now(),
    raw: body,
  };
}

function encodable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
