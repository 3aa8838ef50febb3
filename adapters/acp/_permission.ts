/**
 * A permission request of the CLI as an ACP `session/request_permission`
 * (its options), and the client's outcome as the library's decision: allow
 * once, allow always (the CLI's suggested rules, else a session rule for the
 * tool), reject; `ExitPlanMode` offers the modes to leave plan mode for.
 * A cancelled outcome denies. The client may rewrite the input: an outcome
 * whose response carries `_meta.updatedInput` (an object) allows with it.
 *
 * @module
 */

import type { PermissionOption, RequestPermissionResponse } from "./_acp.ts";
import { allow, deny, type FinalPermissionDecision, type PermissionRequest } from "../../mod.ts";
import { isRecord } from "../../src/_values.ts";
import type { PermissionMode } from "../../src/protocol/control.ts";

/** Option ids of an ordinary request. */
export const ALLOW_ONCE = "allow";
/** Option id of "Always Allow". */
export const ALLOW_ALWAYS = "allow_always";
/** Option id of "Reject". */
export const REJECT = "reject";

/**
 * The options to offer.
 *
 * @param request The CLI's request.
 * @param bypass Whether bypassPermissions is one of the session's modes.
 * @returns The options, the most permissive first.
 */
export function permissionOptions(request: PermissionRequest, bypass: boolean): PermissionOption[] {
  if (request.toolName === "ExitPlanMode") {
    return [
      ...(bypass
        ? [{
          kind: "allow_always" as const,
          name: "Yes, and bypass permissions",
          optionId: "bypassPermissions",
        }]
        : []),
      { kind: "allow_always", name: "Yes, and auto-accept edits", optionId: "acceptEdits" },
      { kind: "allow_once", name: "Yes, and manually approve edits", optionId: "default" },
      { kind: "reject_once", name: "No, keep planning", optionId: "plan" },
    ];
  }
  return [
    ...(request.suppressAlwaysAllowRule === true
      ? []
      : [{ kind: "allow_always" as const, name: "Always Allow", optionId: ALLOW_ALWAYS }]),
    { kind: "allow_once", name: "Allow", optionId: ALLOW_ONCE },
    { kind: "reject_once", name: "Reject", optionId: REJECT },
  ];
}

/** The decision, and the mode the session moves to (leaving plan mode). */
export interface PermissionAnswer {
  readonly decision: FinalPermissionDecision;
  readonly mode?: PermissionMode;
}

/**
 * Reads the client's answer.
 *
 * @param request The CLI's request.
 * @param response What the client answered.
 * @returns The decision to send the CLI.
 */
export function permissionAnswer(
  request: PermissionRequest,
  response: RequestPermissionResponse,
): PermissionAnswer {
  const outcome = response.outcome;
  if (outcome.outcome !== "selected") {
    return { decision: deny("The client cancelled the permission request") };
  }
  const meta = isRecord(response._meta) ? response._meta : {};
  const input = isRecord(meta.updatedInput) ? { ...meta.updatedInput } : { ...request.input };
  if (request.toolName === "ExitPlanMode") {
    if (outcome.optionId === "plan" || !isPlanExit(outcome.optionId)) {
      return { decision: deny("User rejected request to exit plan mode.") };
    }
    const mode = outcome.optionId;
    return {
      decision: allow(input, {
        updatedPermissions: [{ type: "setMode", mode, destination: "session" }],
        decisionClassification: "user_temporary",
      }),
      mode,
    };
  }
  switch (outcome.optionId) {
    case ALLOW_ONCE:
      return { decision: allow(input, { decisionClassification: "user_temporary" }) };
    case ALLOW_ALWAYS:
      return {
        decision: allow(input, {
          updatedPermissions: request.suggestions.length > 0 ? [...request.suggestions] : [{
            type: "addRules",
            rules: [{ toolName: request.toolName }],
            behavior: "allow",
            destination: "session",
          }],
          decisionClassification: "user_permanent",
        }),
      };
    default:
      return {
        decision: deny("User refused permission to run tool", {
          decisionClassification: "user_reject",
        }),
      };
  }
}

function isPlanExit(id: string): id is "default" | "acceptEdits" | "bypassPermissions" {
  return id === "default" || id === "acceptEdits" || id === "bypassPermissions";
}
