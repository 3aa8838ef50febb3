// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Control protocol envelopes, in both directions, and the payloads the
 * library reads or writes.
 *
 * @module
 */

import type { McpServerProvenance } from "../hooks/hook_inputs.ts";

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

/** The user-configured ask rule (`permissions.ask`) that forced a `can_use_tool` prompt. */
export interface MatchedAskRuleWire {
  /** Where the rule is configured, for example `"userSettings"` or `"flagSettings"`. */
  source: string;
  /** The tool the rule names, for example `"Bash"`. */
  tool_name: string;
  /** What the rule matches (`"rm:*"`); absent for a rule on the whole tool. */
  rule_content?: string;
}

/**
 * The `can_use_tool` request body the CLI sends when a tool needs permission.
 * Every field but `tool_name`, `input` and `tool_use_id` may be absent; those
 * marked internal are sent by the CLI's own hosts' features and are typed as
 * the official SDK (0.3.333) reads them.
 */
export interface CanUseToolRequest {
  /** Always `"can_use_tool"`. */
  subtype: "can_use_tool";
  /** The tool's name, for example `"Bash"` or `"mcp__server__tool"`. */
  tool_name: string;
  /** The input the model gave the tool. */
  input: Record<string, unknown>;
  /** The id of the `tool_use` block asking to run. */
  tool_use_id?: string;
  /** A short name of the tool's action (`"Read file"`), for a button label. */
  display_name?: string;
  /** A subtitle: what the call will do, for example the Bash command's description. */
  description?: string;
  /** The whole prompt sentence (`"Claude wants to read foo.txt"`), when the CLI words one. */
  title?: string;
  /** Changes that would let such calls run without asking, offered for an "always allow" answer. */
  permission_suggestions?: PermissionUpdate[];
  /** The path that triggered the ask, when one did. */
  blocked_path?: string;
  /** Why the CLI asks, when it says (may carry ANSI escapes: sanitize before display). */
  decision_reason?: string;
  /** The kind of reason: `"rule"`, `"safetyCheck"`, `"workingDir"`, `"hook"`, `"classifier"`, …. */
  decision_reason_type?: string;
  /** A closed-set code a host can act on, beside the type (internal), e.g. `"org_ask_ceiling"`. */
  decision_reason_code?: string;
  /** With a `"rule"` reason or an MCP tool: nothing but the default prompt asked (internal). */
  server_policy_ask_only?: boolean;
  /** Whether the plan-mode floor alone asked (internal; read by the SDK, not sent by 2.1.332). */
  plan_floor_ask_only?: boolean;
  /** Why an `*_ask_only` field is false (internal; read by the SDK, not sent by 2.1.332). */
  ask_only_false_cause?: string;
  /** With a safety check: `false` when one needs a person's approval, `true` when none does. */
  classifier_approvable?: boolean;
  /** The MCP server serving an `mcp__*` tool, and where its definition came from. */
  mcp_server?: McpServerProvenance;
  /** The ask must not be approvable by a single stray keystroke: open on Deny. */
  default_to_no?: boolean;
  /** Offer no persistent "always allow": its rule would grant more than this call. */
  suppress_always_allow_rule?: boolean;
  /** Only managed (administrator) rules decide this call (internal). */
  managed_rules_only?: boolean;
  /** The plugin whose run made the call (internal; untrusted text). */
  plugin?: string;
  /** One-tap Approve/Deny must not be offered: the person has to open the session. */
  requires_user_interaction?: boolean;
  /** Which of the session service's own prompts this is (internal; a claim, not proof). */
  server_prompt?: string;
  /** A folder on one of the person's computers, beside `server_prompt` (internal; untrusted). */
  computer_folder?: { path: string; computer_name: string };
  /** The `permissions.ask` rule that forced the prompt while the ask kept the tool's own reason. */
  matched_ask_rule?: MatchedAskRuleWire;
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
