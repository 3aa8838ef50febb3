// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * Every host-to-CLI control request subtype the CLI (2.1.332) knows, with
 * the fields it takes and the reply it documents. `session.request(subtype,
 * fields)` is typed by this map. Replies are typed as documented, not
 * validated: fields may be missing on other CLI versions.
 *
 * @module
 */

import type { PermissionMode } from "./control.ts";

/** A slash command the CLI offers. */
export interface SlashCommandInfo {
  name: string;
  description: string;
  argumentHint?: string;
  builtin?: boolean;
}

/** A model the CLI offers. */
export interface ModelInfo {
  value: string;
  resolvedModel?: string;
  displayName?: string;
  description?: string;
  supportsEffort?: boolean;
  supportedEffortLevels?: string[];
  [field: string]: unknown;
}

/** The `initialize` reply. */
export interface InitializeResponse {
  commands?: SlashCommandInfo[];
  agents?: { name: string; [field: string]: unknown }[];
  output_style?: string;
  available_output_styles?: string[];
  models?: ModelInfo[];
  account?: { tokenSource?: string; apiKeySource?: string; apiProvider?: string };
  pid?: number;
  claude_code_version?: string;
  current_permission_mode?: PermissionMode;
  capabilities?: string[];
  [field: string]: unknown;
}

/** The status of one MCP server. */
export interface McpServerStatus {
  name: string;
  status: "connected" | "failed" | "needs-auth" | "pending" | "disabled" | string;
  serverInfo?: { name: string; version: string };
  error?: string;
  [field: string]: unknown;
}

/** A sub-agent definition, as `initialize.agents` takes it. */
export interface AgentDefinition {
  description: string;
  prompt: string;
  tools?: string[];
  model?: string;
  [field: string]: unknown;
}

type Fields = Record<string, unknown>;
type Empty = Record<string, never>;

/** Control request subtypes: the request fields and the reply. */
export interface ControlRequestMap {
  initialize: { request: Fields; response: InitializeResponse };
  interrupt: {
    request: { cancel_queued?: boolean };
    response: { still_queued: string[]; cancelled?: string[] };
  };
  set_permission_mode: { request: { mode: PermissionMode }; response: { mode: PermissionMode } };
  set_model: { request: { model?: string | null }; response: { model?: string } };
  set_max_thinking_tokens: {
    request: { max_thinking_tokens?: number | null; thinking_display?: string };
    response: Fields;
  };
  mcp_status: { request: { liveReply?: boolean }; response: { mcpServers: McpServerStatus[] } };
  get_context_usage: {
    request: { detail?: "summary" | "full" };
    response: {
      categories?: unknown[];
      totalTokens?: number;
      maxTokens?: number;
      [k: string]: unknown;
    };
  };
  get_settings: {
    request: Empty;
    response: { effective?: Fields; sources?: unknown[]; applied?: Fields; [k: string]: unknown };
  };
  rewind_files: { request: { user_message_id: string; dry_run?: boolean }; response: Fields };
  mcp_message: { request: { server_name: string; message: unknown }; response: Fields };
  mcp_set_servers: { request: { servers: Record<string, unknown> }; response: Fields };
  mcp_reconnect: { request: { serverName: string }; response: Fields };
  mcp_toggle: { request: { serverName: string; enabled: boolean }; response: Fields };
  mcp_call: {
    request: { tool: string; arguments?: Fields; [k: string]: unknown };
    response: Fields;
  };
  mcp_read_resource: {
    request: { serverName: string; uri: string };
    response: { contents: unknown[] };
  };
  rename_session: {
    request: { title: string; source?: string; session_id?: string };
    response: Fields;
  };
  set_color: { request: Fields; response: Fields };
  set_has_subscribers: { request: Fields; response: Fields };
  seed_read_state: { request: { path: string; mtime: number }; response: Fields };
  register_repo_root: { request: Fields; response: Fields };
  reload_plugins: { request: Empty; response: Fields };
  reload_skills: { request: Empty; response: Fields };
  reload_output_styles: { request: Empty; response: Fields };
  stop_task: { request: { task_id: string }; response: Fields };
  background_tasks: { request: { tool_use_id?: string }; response: Fields };
  get_task_output: { request: { task_id: string }; response: Fields };
  apply_flag_settings: { request: { settings: Fields }; response: Fields };
  update_settings: { request: { source: string; settings: Fields }; response: Fields };
  get_hooks_listing: { request: Empty; response: Fields };
  list_permission_rules: { request: Empty; response: Fields };
  list_models: { request: Empty; response: Fields };
  get_usage: { request: Empty; response: Fields };
  get_session_cost: { request: Empty; response: Fields };
  get_binary_version: { request: Empty; response: Fields };
  file_suggestions: { request: { query: string }; response: Fields };
  cancel_async_message: { request: { message_uuid: string }; response: Fields };
}

/** A known control request subtype. */
export type ControlSubtype = keyof ControlRequestMap;
