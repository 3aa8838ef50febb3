// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Control protocol envelopes, in both directions, and the payloads the
 * library reads or writes.
 *
 * @module
 */

/** A control request, either way: `{"type":"control_request","request_id":…,"request":{subtype,…}}`. */
export interface ControlRequestFrame {
  type: "control_request";
  request_id: string;
  request: ControlRequestBody;
}

/** The body of a control request: a `subtype` and its fields. */
export interface ControlRequestBody {
  subtype: string;
  [field: string]: unknown;
}

/** A successful control response payload. */
export interface ControlSuccess {
  subtype: "success";
  request_id: string;
  response?: Record<string, unknown>;
  [field: string]: unknown;
}

/** A failed control response payload. */
export interface ControlFailure {
  subtype: "error";
  request_id: string;
  error: string;
  error_code?: string;
  [field: string]: unknown;
}

/** A control response, either way. */
export interface ControlResponseFrame {
  type: "control_response";
  response: ControlSuccess | ControlFailure;
}

/** Withdraws a control request the sender made earlier; the receiver must not answer it. */
export interface ControlCancelRequestFrame {
  type: "control_cancel_request";
  request_id: string;
}

/** A liveness ping with no reply. */
export interface KeepAliveFrame {
  type: "keep_alive";
}

/** The `can_use_tool` request body the CLI sends when a tool needs permission. */
export interface CanUseToolRequest {
  subtype: "can_use_tool";
  tool_name: string;
  input: Record<string, unknown>;
  tool_use_id?: string;
  display_name?: string;
  description?: string;
  title?: string;
  permission_suggestions?: PermissionUpdate[];
  blocked_path?: string;
  decision_reason?: string;
  decision_reason_type?: string;
  mcp_server?: string;
  agent_id?: string;
  [field: string]: unknown;
}

/** Where a permission update is stored. */
export type PermissionUpdateDestination =
  | "userSettings"
  | "projectSettings"
  | "localSettings"
  | "session"
  | "cliArg";

/** A permission mode of the CLI. `"manual"` is the CLI's newer name for `"default"`. */
export type PermissionMode =
  | "default"
  | "acceptEdits"
  | "bypassPermissions"
  | "plan"
  | "dontAsk"
  | "auto"
  | "manual";

/** A rule naming a tool and, optionally, what it may be called with. */
export interface PermissionRuleValue {
  toolName: string;
  ruleContent?: string;
}

/** A change to the CLI's permission settings, suggested by the CLI or sent with an allow. */
export type PermissionUpdate =
  | {
    type: "addRules" | "replaceRules" | "removeRules";
    rules: PermissionRuleValue[];
    behavior: "allow" | "deny" | "ask";
    destination: PermissionUpdateDestination;
  }
  | { type: "setMode"; mode: PermissionMode; destination: PermissionUpdateDestination }
  | {
    type: "addDirectories" | "removeDirectories";
    directories: string[];
    destination: PermissionUpdateDestination;
  };
