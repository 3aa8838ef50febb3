// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The host-to-CLI control request subtypes, with the fields each takes and
 * the reply it documents: `session.request(subtype, fields)` is typed by
 * this map. It holds 39: all 37 host-sent members of the official SDK's
 * (0.3.332) `SDKControlRequestInner`, and `claim_session` and
 * `set_mcp_permission_mode_override`, which the SDK sends with no public
 * type. It does not type the other 27 subtypes the SDK's bundle (`sdk.mjs`)
 * sends with no public type: `channel_enable`, `claude_authenticate`,
 * `claude_oauth_callback`, `claude_oauth_wait_for_completion`,
 * `export_conversation`, `generate_session_title`, `get_chrome_browsers`,
 * `get_chrome_dialog`, `get_memory_dialog`, `get_plan`, `get_sandbox_dialog`,
 * `get_skills_dialog`, `get_status`, `mcp_authenticate`, `mcp_clear_auth`,
 * `mcp_oauth_callback_url`, `message_rated`, `prompt_draft_activity`,
 * `remote_control`, `select_chrome_browser`, `set_chrome_browser_hints`,
 * `set_cwd`, `set_prompt_suggestions_paused`, `side_question`,
 * `submit_feedback`, `submit_survey_feedback`, `ultrareview_launch`
 * (`request` still sends any of them, untyped). Nor does it hold the four
 * subtypes the CLI sends to the host (`can_use_tool`, `hook_callback`,
 * `elicitation`, `request_user_dialog`): this map types what the host sends
 * (`can_use_tool`'s body is `CanUseToolRequest`, in `control.ts`).
 *
 * Replies are typed as the official SDK documents them and as the CLI
 * (2.1.332) sent them offline (every reply of a subtype the SDK wraps was
 * seen, `mcp_reconnect` of a live server excepted), not validated: fields
 * may be missing on other CLI versions.
 *
 * @module
 */

import type { PermissionMode } from "./control.ts";
import type {
  ClaimSessionResponse,
  InitializeResponse,
  McpReadResourceResponse,
  McpServerStatus,
  McpSetServersResult,
  NoPayload,
  ReadFileResponse,
  ReloadPluginsResponse,
  SlashCommandInfo,
  UsageResponse,
} from "./control_replies.ts";

export type * from "./control_replies.ts";

/** A sub-agent definition, as `initialize.agents` takes it. */
export interface AgentDefinition {
  /** When to use the agent (the model reads this to pick it). */
  description: string;
  /** The agent's system prompt. */
  prompt: string;
  /** The tools the agent may use; all when absent. */
  tools?: string[];
  /** The model the agent runs on, for example `"sonnet"`. */
  model?: string;
  /** Other fields the CLI accepts, passed as given. */
  [field: string]: unknown;
}

/** A plugin to load for this session (the official SDK's `SdkPluginConfig`). */
export interface PluginConfig {
  /** Only local plugins exist. */
  readonly type: "local";
  /** Its folder (or a `.zip`); a folder of plugins loads each child. */
  readonly path: string;
  /** Load its skills, hooks, agents and commands but not its MCP servers (`--plugin-dir-no-mcp`). */
  readonly skipMcpDiscovery?: boolean;
}

/**
 * The fields of `claim_session`, which binds a parked spare (a CLI started
 * with `--await-claim`) to its session: relocates it to `cwd` as if it had
 * been spawned there, applies the per-session prompt options, starts the
 * folder's SessionStart hooks and registers the session. Accepted once, only
 * on a parked spare, only before any turn.
 */
export interface ClaimSessionRequest {
  /** The session's working directory (tilde-expanded, canonicalised by the CLI). */
  cwd: string;
  /**
   * Per-session environment additions: only the CLI's claim allow-list
   * (`CLAUDE_CODE_OAUTH_TOKEN`, `CLAUDE_CODE_SESSION_ACCESS_TOKEN`,
   * `CLAUDE_CODE_HOST_SESSION_ID`); any other key refuses the claim.
   */
  env?: Record<string, string>;
  /** Extra directories the session may access, as `--add-dir`. */
  additional_directories?: string[];
  /** The permission mode, as `--permission-mode`; one the spare cannot take refuses the claim. */
  permission_mode?: PermissionMode;
  /** As `initialize.systemPrompt`. */
  system_prompt?: string[];
  /** As `initialize.appendSystemPrompt`. */
  append_system_prompt?: string;
  /** As `initialize.agents`. */
  agents?: Record<string, unknown>;
  /** As `initialize.title`. */
  title?: string;
  /** The session's final set of in-process MCP server names. */
  sdk_mcp_servers?: string[];
  /** Also reply with an `initialize` payload computed for the claimed folder. */
  include_initialize?: boolean;
  /** The host's attestation that the user trusts the folder. */
  workspace_trust?: { accepted: boolean; directory: string };
}

/** Control request subtypes: the request fields and the reply. */
export interface ControlRequestMap {
  /**
   * Configures the session (system prompt, hooks, agents, SDK MCP servers,
   * …); replies with what the CLI offers. Sent again to a running CLI (the
   * SDK's `reinitialize`), it re-registers the hooks and its control
   * response carries, beside `response`, the CLI's requests still waiting
   * for an answer (`pending_permission_requests`,
   * `pending_user_dialog_requests`: whole `control_request` frames), which
   * the session serves as if they had just come.
   */
  initialize: { request: Record<string, unknown>; response: InitializeResponse };
  /** Binds a parked spare (`--await-claim`) to its folder and session; see {@linkcode ClaimSessionRequest}. */
  claim_session: { request: ClaimSessionRequest; response: ClaimSessionResponse };
  /** Interrupts the running turn; replies with the user lines still queued (and, with `cancel_queued`, those dropped). */
  interrupt: {
    request: { cancel_queued?: boolean };
    response: { still_queued: string[]; cancelled?: string[] };
  };
  /** Changes the permission mode; replies with the new mode. */
  set_permission_mode: { request: { mode: PermissionMode }; response: { mode: PermissionMode } };
  /** Changes the model (`null` or `"default"` resets it); replies with the resolved model id. */
  set_model: { request: { model?: string | null }; response: { model?: string } };
  /** Sets the thinking-token budget; observed to reply with no payload (`{}` from `request`). */
  set_max_thinking_tokens: {
    request: { max_thinking_tokens?: number | null; thinking_display?: string };
    response: Record<string, unknown>;
  };
  /** Lists the MCP servers and their status. */
  mcp_status: { request: { liveReply?: boolean }; response: { mcpServers: McpServerStatus[] } };
  /** Reports how the context window is used, by category, in tokens. */
  get_context_usage: {
    request: { detail?: "summary" | "full" };
    response: {
      categories?: unknown[];
      totalTokens?: number;
      maxTokens?: number;
      [k: string]: unknown;
    };
  };
  /** Reports the effective settings, their sources, and what was applied (model, effort, …). */
  get_settings: {
    request: Record<string, never>;
    response: {
      effective?: Record<string, unknown>;
      sources?: unknown[];
      applied?: Record<string, unknown>;
      [k: string]: unknown;
    };
  };
  /** Rewinds files to the given user message; `dry_run` only reports (not exercised here). */
  rewind_files: {
    request: { user_message_id: string; dry_run?: boolean };
    response: Record<string, unknown>;
  };
  /** Sends a JSON-RPC message to the named MCP server. */
  mcp_message: {
    request: { server_name: string; message: unknown };
    response: Record<string, unknown>;
  };
  /**
   * Replaces the MCP servers added at run time, as configs keyed by server
   * name (`{ type: "sdk", name }` for an in-process one); replies with what
   * changed. Seen: a server that cannot start is still `added`, its error
   * in `errors`.
   */
  mcp_set_servers: {
    request: { servers: Record<string, unknown> };
    response: McpSetServersResult;
  };
  /** Reconnects the named MCP server; no payload (an unknown server is an error reply). */
  mcp_reconnect: { request: { serverName: string }; response: NoPayload };
  /** Enables or disables the named MCP server; no payload. */
  mcp_toggle: { request: { serverName: string; enabled: boolean }; response: NoPayload };
  /**
   * Sets (or with `null` clears) how the named MCP server's tools are
   * approved: `"default"` asks per call, `"auto"` lets the auto-mode
   * classifier decide. Replies with a `warning` when no server of that name
   * is known (the override is still stored).
   */
  set_mcp_permission_mode_override: {
    request: { serverName: string; mode: "default" | "auto" | null };
    response: { warning?: string };
  };
  /**
   * Reads a file of the session (relative to its working directory), under
   * the Read tool's permission rules; a denied or missing file is an error
   * reply (`read denied: <path>`).
   */
  read_file: {
    request: { path: string; max_bytes?: number; encoding?: "utf-8" | "base64" };
    response: ReadFileResponse;
  };
  /** Calls an MCP tool with `arguments` (not exercised here). */
  mcp_call: {
    request: { tool: string; arguments?: Record<string, unknown>; [k: string]: unknown };
    response: Record<string, unknown>;
  };
  /**
   * Reads one MCP Apps `ui://` resource from a server the CLI itself dialed
   * (a stdio, http or sse server; not an in-process one), with
   * `resources/read`; another scheme, an unknown, in-process or unconnected
   * server is an error reply naming the cause.
   */
  mcp_read_resource: {
    request: { serverName: string; uri: string };
    response: McpReadResourceResponse;
  };
  /** Sets the session's title. */
  rename_session: {
    request: { title: string; source?: string; session_id?: string };
    response: Record<string, unknown>;
  };
  /** Sets the session's color (fields not documented here). */
  set_color: { request: Record<string, unknown>; response: Record<string, unknown> };
  /** Tells the CLI whether the host has subscribers (fields not documented here). */
  set_has_subscribers: { request: Record<string, unknown>; response: Record<string, unknown> };
  /**
   * Tells the CLI that `path` was read at `mtime` (floored milliseconds), so
   * an Edit works after the Read left the context; skipped when the file
   * changed since. No payload.
   */
  seed_read_state: { request: { path: string; mtime: number }; response: NoPayload };
  /** Registers a repository root (fields not documented here). */
  register_repo_root: { request: Record<string, unknown>; response: Record<string, unknown> };
  /** Reloads plugins from disk; replies with the refreshed commands, agents, plugins and servers. */
  reload_plugins: {
    request: {
      hold_on_cache_impact?: boolean;
      add_plugins?: { type: "local"; path: string; skipMcpDiscovery?: boolean }[];
      refuse_if_busy?: boolean;
    };
    response: ReloadPluginsResponse;
  };
  /** Reloads skills from disk; replies with the skills now available. */
  reload_skills: { request: Record<string, never>; response: { skills: SlashCommandInfo[] } };
  /** Re-reads the output styles; replies with every style's name. */
  reload_output_styles: {
    request: Record<string, never>;
    response: { available_output_styles: string[] };
  };
  /** Stops a running task (a `task_notification` with `"stopped"` follows); replies `{}`. */
  stop_task: { request: { task_id: string }; response: NoPayload };
  /**
   * Sends running foreground tasks (Bash, sub-agents) to the background, or
   * only the one started by `tool_use_id`. Replies `{}` without an id, and
   * `{ backgrounded }` with one (`false`: no such foreground task).
   */
  background_tasks: { request: { tool_use_id?: string }; response: { backgrounded?: boolean } };
  /** Fetches the output of the given background task. */
  get_task_output: { request: { task_id: string }; response: Record<string, unknown> };
  /** Merges `settings` into the session's flag settings (`null` removes a key); no payload. */
  apply_flag_settings: {
    request: { settings: Record<string, unknown> };
    response: NoPayload;
  };
  /**
   * Writes settings to a settings file through the CLI's own writer and
   * applies them: `localSettings` takes `outputStyle`, `userSettings`
   * `effortLevel`; another key is an error reply. Replies `{}`.
   */
  update_settings: {
    request: { source: "localSettings" | "userSettings"; settings: Record<string, unknown> };
    response: NoPayload;
  };
  /** Lists the configured hooks. */
  get_hooks_listing: { request: Record<string, never>; response: Record<string, unknown> };
  /** Lists the permission rules in force. */
  list_permission_rules: { request: Record<string, never>; response: Record<string, unknown> };
  /** Lists the models available. */
  list_models: { request: Record<string, never>; response: Record<string, unknown> };
  /** Reports the session's cost and usage, and plan rate limits where they apply (experimental). */
  get_usage: { request: { skip_behaviors?: boolean }; response: UsageResponse };
  /** Reports the session's cost. */
  get_session_cost: { request: Record<string, never>; response: Record<string, unknown> };
  /** Reports the CLI binary's version. */
  get_binary_version: { request: Record<string, never>; response: Record<string, unknown> };
  /** Suggests files matching `query`. */
  file_suggestions: { request: { query: string }; response: Record<string, unknown> };
  /** Withdraws a queued user line before it runs (observed reply: `{cancelled, message_uuid}`). */
  cancel_async_message: {
    request: { message_uuid: string };
    response: { cancelled?: boolean; message_uuid?: string };
  };
}

/** A known control request subtype. */
export type ControlSubtype = keyof ControlRequestMap;
