// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * What the CLI answers the host's control requests: the `initialize` reply
 * and what it lists (commands, models, agents, the account), MCP status and
 * resources, and each other subtype's reply payload. Typed as the official
 * SDK documents them and as the CLI (2.1.332) sent them offline, not
 * validated: fields may be missing on other CLI versions.
 * `control_requests.ts` (the map of subtypes) re-exports every name.
 *
 * @module
 */

import type { PermissionMode } from "./control.ts";

/** A slash command the CLI offers. */
export interface SlashCommandInfo {
  /** The command's name, without the `/`. */
  name: string;
  /** What the command does. */
  description: string;
  /** A hint for the command's arguments (often `""`). */
  argumentHint?: string;
  /** Whether the command ships with the CLI. */
  builtin?: boolean;
}

/** A model the CLI offers. */
export interface ModelInfo {
  /** What to pass to `set_model`, for example `"sonnet"` or `"default"`. */
  value: string;
  /** The model id `value` currently resolves to, for example `"claude-sonnet-5-5"`. */
  resolvedModel?: string;
  /** A name to show, for example `"Sonnet"`. */
  displayName?: string;
  /** A one-line description, with prices when the CLI knows them. */
  description?: string;
  /** Whether the model takes an effort level. */
  supportsEffort?: boolean;
  /** The effort levels it takes, for example `["low", "medium", "high"]`. */
  supportedEffortLevels?: string[];
  /** Other capability flags (`supportsFastMode`, `supportsAdaptiveThinking`, …), as sent. */
  [field: string]: unknown;
}

/** The account the CLI runs as (the SDK's `AccountInfo`). */
export interface AccountInfo {
  /** The account's e-mail, with a claude.ai login. */
  email?: string;
  /** The organization, with a claude.ai login. */
  organization?: string;
  /** The claude.ai plan (`"pro"`, `"max"`, …). */
  subscriptionType?: string;
  /** Where the OAuth token comes from (`"none"` with an API key). */
  tokenSource?: string;
  /** Where the API key comes from, for example `"ANTHROPIC_API_KEY"` or `"none"`. */
  apiKeySource?: string;
  /** The API backend: `"firstParty"`, `"bedrock"`, `"vertex"`, `"foundry"`, `"gateway"`, … */
  apiProvider?: string;
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/** A sub-agent the CLI offers (the SDK's `AgentInfo`). */
export interface AgentInfo {
  /** The agent type, for example `"Explore"` or `"general-purpose"`. */
  name: string;
  /** When to use it. */
  description?: string;
  /** Its model: an alias, a model id or `"inherit"`; the default sub-agent model when absent. */
  model?: string;
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/**
 * The `initialize` reply (the SDK's `SDKControlInitializeResponse`, with the
 * fields the CLI sends that it leaves out). The CLI 2.1.332 sends every
 * field listed but the `*_applied` ones it sends only when the request
 * carried what they confirm; read them all as optional on other versions.
 */
export interface InitializeResponse {
  /** The slash commands (and skills) available. */
  commands?: SlashCommandInfo[];
  /** The sub-agents available. */
  agents?: AgentInfo[];
  /** The active output style, for example `"default"`. */
  output_style?: string;
  /** The names of every output style available. */
  available_output_styles?: string[];
  /** The models the CLI offers for `set_model`. */
  models?: ModelInfo[];
  /** The account the CLI runs as, and where its credentials come from. */
  account?: AccountInfo;
  /** The CLI's process id. */
  pid?: number;
  /** The CLI's version, for example `"2.1.332"`. */
  claude_code_version?: string;
  /** The permission mode in force. */
  current_permission_mode?: PermissionMode;
  /** Feature flags the CLI advertises (`mcp_read_resource_v1`, `interrupt_cancel_queued_v1`, …). */
  capabilities?: string[];
  /**
   * Whether this request's `hooks` were registered: true on the first
   * `initialize`, and on a repeated one from the process that owns the CLI's
   * stdin (its set replaces the earlier one); absent without hooks.
   */
  hooks_applied?: boolean;
  /** True from a CLI that honours `onFailure` on hook matchers. */
  hook_on_failure_supported?: boolean;
  /** Whether every plugin the request listed is loaded (absent when it listed none). */
  plugins_applied?: boolean;
  /** Whether the request's `mcpServers` are the set read at launch (absent when it named none). */
  mcp_servers_applied?: boolean;
  /** Whether the request's `managedSettings` were applied (absent when it sent none). */
  managed_settings_applied?: boolean;
  /** Whether the request's `settings` were applied (absent when it sent none). */
  settings_applied?: boolean;
  /** Whether the request's `disallowedTools` were applied (absent when it sent none). */
  disallowed_tools_applied?: boolean;
  /** What became of each `sdkMcpServerManifests` entry, by server name. */
  sdk_mcp_manifests_parked?: Record<string, string>;
  /** Fast mode: `"off"`, `"cooldown"` or `"on"`. */
  fast_mode_state?: "off" | "cooldown" | "on" | string;
  /** Why fast mode is off, for example `"not_first_party"`. */
  fast_mode_disabled_reason?: string;
  /** Other fields (`session_state`, `user_output_styles_dir`, …), as sent. */
  [field: string]: unknown;
}

/** The SDK's name of {@linkcode InitializeResponse}. */
export type SDKControlInitializeResponse = InitializeResponse;

/** One content item of an MCP resource, as `resources/read` returns it. */
export interface McpResourceContents {
  /** The resource's URI. */
  uri: string;
  /** Its MIME type, for example `"text/html;profile=mcp-app"`. */
  mimeType?: string;
  /** The text, for a text item. */
  text?: string;
  /** Base64, for a binary item. */
  blob?: string;
  /** The item's own `_meta`, as the server sent it (minus keys the CLI reserves). */
  _meta?: Record<string, unknown>;
}

/** The `mcp_read_resource` reply (the SDK's `SDKControlMcpReadResourceResponse`). */
export interface McpReadResourceResponse {
  /** The server's `resources/read` contents: untrusted third-party content. */
  contents: McpResourceContents[];
}

/** The status of one MCP server. */
export interface McpServerStatus {
  /** The server's name, as configured. */
  name: string;
  /** Its connection status. */
  status: "connected" | "failed" | "needs-auth" | "pending" | "disabled" | string;
  /** The name and version the server reported, once connected. */
  serverInfo?: { name: string; version: string };
  /** What went wrong, when it failed. */
  error?: string;
  /** Other fields, as sent. */
  [field: string]: unknown;
}

/** A reply without a payload (the CLI sends `{}` or no `response` at all). */
export type NoPayload = Record<string, never>;

/** The `mcp_set_servers` reply. */
export type McpSetServersResult = {
  /** Servers that were added. */
  added: string[];
  /** Servers that were removed. */
  removed: string[];
  /** Why a server failed to connect, by name. */
  errors: Record<string, string>;
};

/** The `read_file` reply. */
export type ReadFileResponse = {
  /** The contents, as text or (with `encoding: "base64"`) base64. */
  contents: string;
  /** The file's absolute path. */
  absPath: string;
  /** `true` when `max_bytes` cut it short. */
  truncated?: boolean;
  /** `"base64"` when asked for; absent for UTF-8. */
  encoding?: "base64";
  /** For UTF-8: `true` when bytes were not valid UTF-8 (replaced by U+FFFD). */
  lossy?: boolean;
  /** The path as asked for. */
  requested_path?: string;
};

/** The `reload_plugins` reply. */
export type ReloadPluginsResponse = {
  /** The slash commands now available. */
  commands: SlashCommandInfo[];
  /** The sub-agents now available. */
  agents: { name: string; description?: string; model?: string }[];
  /** The plugins now loaded. */
  plugins: { name: string; path: string; source?: string; version?: string }[];
  /** The MCP servers and their status. */
  mcpServers: McpServerStatus[];
  /** How many plugins failed to load. */
  error_count: number;
  /** With `hold_on_cache_impact`: `true` when nothing was applied. */
  held?: boolean;
};

/** The `get_usage` reply (experimental in the SDK: its shape may change). */
export type UsageResponse = {
  /** Cost and usage of this session. */
  session: {
    total_cost_usd: number;
    total_api_duration_ms: number;
    total_duration_ms: number;
    total_lines_added: number;
    total_lines_removed: number;
    model_usage: Record<string, Record<string, unknown>>;
  };
  /** The claude.ai plan (`"pro"`, `"max"`, …), or `null` with an API key. */
  subscription_type: string | null;
  /** `false` when plan rate limits do not apply (an API key). */
  rate_limits_available: boolean;
  /** Plan rate-limit windows, or `null`. */
  rate_limits: Record<string, unknown> | null;
  /** What drove usage, from local transcripts, or `null`. */
  behaviors: Record<string, unknown> | null;
};

/** The reply to a successful `claim_session` (a refusal is a control error whose message starts with its reason). */
export interface ClaimSessionResponse {
  /** Always `"ok"`. */
  status: "ok";
  /** The canonical working directory the session now runs in. */
  cwd: string;
  /** The session id the claimed process registered. */
  session_id: string;
  /** How long the spare was parked, in milliseconds. */
  parked_ms?: number;
  /** Whether the in-process MCP servers have settled. */
  sdk_mcp_settled?: boolean;
  /** With `include_initialize`: what `initialize` would reply for the claimed folder. */
  initialize?: InitializeResponse;
  /** With `workspace_trust`: whether the folder is now recorded as trusted. */
  workspace_trust_recorded?: boolean;
}
