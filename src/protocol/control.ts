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
  /** Always `"control_request"`. */
  type: "control_request";
  /** The sender's id for the request, echoed by the reply (CLI-sent ids are UUIDs). */
  request_id: string;
  /** The request: its `subtype` and fields. */
  request: ControlRequestBody;
}

/** The body of a control request: a `subtype` and its fields. */
export interface ControlRequestBody {
  /** Which request this is, for example `"can_use_tool"` or `"interrupt"`. */
  subtype: string;
  /** The subtype's own fields. */
  [field: string]: unknown;
}

/** A successful control response payload. */
export interface ControlSuccess {
  /** Always `"success"`. */
  subtype: "success";
  /** The `request_id` of the request this answers. */
  request_id: string;
  /** The reply payload; absent when the request has none (e.g. `set_max_thinking_tokens`). */
  response?: Record<string, unknown>;
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/** A failed control response payload. */
export interface ControlFailure {
  /** Always `"error"`. */
  subtype: "error";
  /** The `request_id` of the request this answers. */
  request_id: string;
  /** What went wrong, for example `"Unsupported control request subtype: X"`. */
  error: string;
  /** A machine-readable code, for example `"unsupported_request"`. */
  error_code?: string;
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/** A control response, either way. */
export interface ControlResponseFrame {
  /** Always `"control_response"`. */
  type: "control_response";
  /** The outcome, success or error, carrying the request's `request_id`. */
  response: ControlSuccess | ControlFailure;
}

/** Withdraws a control request the sender made earlier; the receiver must not answer it. */
export interface ControlCancelRequestFrame {
  /** Always `"control_cancel_request"`. */
  type: "control_cancel_request";
  /** The `request_id` of the request withdrawn. */
  request_id: string;
}

/** A liveness ping with no reply. */
export interface KeepAliveFrame {
  /** Always `"keep_alive"`. */
  type: "keep_alive";
}

/** The `can_use_tool` request body the CLI sends when a tool needs permission. */
export interface CanUseToolRequest {
  /** Always `"can_use_tool"`. */
  subtype: "can_use_tool";
  /** The tool's name, for example `"Bash"` or `"mcp__server__tool"`. */
  tool_name: string;
  /** The input the model gave the tool. */
  input: Record<string, unknown>;
  /** The id of the `tool_use` block asking to run. */
  tool_use_id?: string;
  /** The tool's name as the CLI shows it. */
  display_name?: string;
  /** What the call will do, for example the Bash command's description. */
  description?: string;
  /** A title for the prompt (typed in the SDK; not seen in recorded runs). */
  title?: string;
  /** Changes that would let such calls run without asking, offered for an "always allow" answer. */
  permission_suggestions?: PermissionUpdate[];
  /** The path that triggered the ask, when one did. */
  blocked_path?: string;
  /** Why the CLI asks, when it says. */
  decision_reason?: string;
  /** The kind of `decision_reason` (not documented further). */
  decision_reason_type?: string;
  /** The MCP server providing the tool, for MCP tools. */
  mcp_server?: string;
  /** The sub-agent making the call; absent in the main loop. */
  agent_id?: string;
  /** Other fields, as sent. */
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
  /** The tool the rule is about, for example `"Bash"`. */
  toolName: string;
  /** What the tool may be called with (for Bash, the command); absent for the whole tool. */
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
