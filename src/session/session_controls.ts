// This module is browser compatible.
/**
 * {@linkcode SessionControls}: the runtime controls of a session, each a
 * typed one-liner over `request()`, named as the official SDK names them
 * where the meaning is the same.
 *
 * @module
 */

import type { PermissionMode } from "../protocol/control.ts";
import type {
  AccountInfo,
  AgentInfo,
  ControlRequestMap,
  ControlSubtype,
  InitializeResponse,
  McpReadResourceResponse,
  McpServerStatus,
  ModelInfo,
} from "../protocol/control_requests.ts";
import { isRecord } from "../_values.ts";
import { reloadFields } from "./_reload_plugins.ts";
import type { ControlRequestOptions, ReloadPluginsOptions } from "./session_options.ts";

/** The reply of a subtype (exported for the docs). */
export type Reply<K extends ControlSubtype> = ControlRequestMap[K]["response"];

/**
 * The runtime controls of a {@linkcode DuplexSession} (its base class): each
 * sends one control request and resolves with the CLI's typed reply, or
 * rejects with a `control_failed` (the CLI's `errorCode` kept), `timeout`,
 * `closed` or `process_exited` DuplexError. Every method takes a signal and
 * a timeout last.
 */
export abstract class SessionControls {
  /**
   * Sends a control request; see {@linkcode DuplexSession.request}.
   *
   * @param subtype The request subtype.
   * @param fields The request's other fields.
   * @param options A signal and a timeout.
   * @returns The CLI's reply payload.
   */
  abstract request<K extends ControlSubtype>(
    subtype: K,
    fields?: ControlRequestMap[K]["request"],
    options?: ControlRequestOptions,
  ): Promise<ControlRequestMap[K]["response"]>;
  /**
   * Sends a control request of a subtype this library does not type; see
   * {@linkcode DuplexSession.request}.
   *
   * @param subtype The request subtype.
   * @param fields The request's other fields.
   * @param options A signal and a timeout.
   * @returns The CLI's reply payload.
   */
  abstract request(
    subtype: string,
    fields?: Record<string, unknown>,
    options?: ControlRequestOptions,
  ): Promise<Record<string, unknown>>;

  /**
   * The CLI's `initialize` reply; see {@linkcode DuplexSession.initializationResult}.
   *
   * @param options A signal and a timeout.
   * @returns The reply payload.
   */
  abstract initializationResult(options?: ControlRequestOptions): Promise<InitializeResponse>;

  /**
   * The models the CLI offers for `setModel`, from its `initialize` reply.
   *
   * @param options A signal and a timeout (see `initializationResult`).
   * @returns The models (`[]` when the reply lists none).
   */
  async supportedModels(options: ControlRequestOptions = {}): Promise<ModelInfo[]> {
    const { models } = await this.initializationResult(options);
    return Array.isArray(models) ? models.filter((m) => isRecord(m)) : [];
  }

  /**
   * The sub-agents the session can run (built-in, configured and from the
   * `agents` option), from the CLI's `initialize` reply.
   *
   * @param options A signal and a timeout (see `initializationResult`).
   * @returns The agents with their descriptions and models.
   */
  async supportedAgents(options: ControlRequestOptions = {}): Promise<AgentInfo[]> {
    const { agents } = await this.initializationResult(options);
    return Array.isArray(agents)
      ? agents.filter((a) => isRecord(a) && typeof a.name === "string")
      : [];
  }

  /**
   * The account the CLI runs as and where its credentials come from (no
   * e-mail or organization with an API key), from its `initialize` reply.
   *
   * @param options A signal and a timeout (see `initializationResult`).
   * @returns The account info (`{}` when the reply has none).
   */
  async accountInfo(options: ControlRequestOptions = {}): Promise<AccountInfo> {
    const { account } = await this.initializationResult(options);
    return isRecord(account) ? account : {};
  }

  /**
   * Reads one MCP Apps (SEP-1865) UI resource from an MCP server the CLI
   * itself dialed (stdio, http or sse; an in-process `mcpServer()` is
   * refused: read it directly), so a host can render a tool's widget. The
   * contents are untrusted third-party content: render them sandboxed.
   *
   * @param serverName The server's name, as `mcpServerStatus()` reports it.
   * @param uri A `ui://` URI (typically a tool's `_meta.ui.resourceUri`); another scheme is refused.
   * @param options A signal and a timeout.
   * @returns The server's `resources/read` contents.
   * @throws {DuplexError} `control_failed` naming the cause: another scheme, an unknown,
   *   in-process or unconnected server, or the server's own error.
   */
  readMcpResource(
    serverName: string,
    uri: string,
    options: ControlRequestOptions = {},
  ): Promise<McpReadResourceResponse> {
    return this.request("mcp_read_resource", { serverName, uri }, options);
  }

  /**
   * Changes the permission mode for the rest of the session.
   *
   * @param mode The new mode.
   * @param options A signal and a timeout.
   * @returns The mode the CLI now uses.
   */
  async setPermissionMode(
    mode: PermissionMode,
    options: ControlRequestOptions = {},
  ): Promise<PermissionMode> {
    return (await this.request("set_permission_mode", { mode }, options)).mode ?? mode;
  }

  /**
   * Switches the model for the next turns; `null` goes back to the default.
   *
   * @param model A model name or alias (`"sonnet"`), or `null`.
   * @param options A signal and a timeout.
   * @returns The resolved model name the CLI reports, if any.
   */
  async setModel(
    model: string | null,
    options: ControlRequestOptions = {},
  ): Promise<string | undefined> {
    const { model: now } = await this.request("set_model", { model }, options);
    return typeof now === "string" ? now : undefined;
  }

  /**
   * Sets the thinking budget for the next turns; `null` resets it.
   *
   * @param tokens The most thinking tokens, or `null`.
   * @param options A signal and a timeout.
   */
  async setMaxThinkingTokens(
    tokens: number | null,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("set_max_thinking_tokens", { max_thinking_tokens: tokens }, options);
  }

  /**
   * Reports the MCP servers the CLI knows and their state.
   *
   * @param options A signal and a timeout.
   * @returns The servers' statuses.
   */
  async mcpServerStatus(options: ControlRequestOptions = {}): Promise<McpServerStatus[]> {
    const { mcpServers } = await this.request("mcp_status", {}, options);
    return Array.isArray(mcpServers) ? mcpServers : [];
  }

  /**
   * Same as {@linkcode SessionControls.mcpServerStatus}.
   *
   * @deprecated Use `mcpServerStatus()` (the official SDK's name); this alias goes in 0.3.
   * @param options A signal and a timeout.
   * @returns The servers' statuses.
   */
  mcpStatus(options: ControlRequestOptions = {}): Promise<McpServerStatus[]> {
    return this.mcpServerStatus(options);
  }

  /**
   * Reports how the context window is used.
   *
   * @param options `detail` and a signal and a timeout.
   * @returns The CLI's breakdown (categories, totalTokens, maxTokens, …).
   */
  getContextUsage(
    options: ControlRequestOptions & { detail?: "summary" | "full" } = {},
  ): Promise<Reply<"get_context_usage">> {
    const { detail, ...rest } = options;
    return this.request("get_context_usage", detail ? { detail } : {}, rest);
  }

  /**
   * Same as {@linkcode SessionControls.getContextUsage}.
   *
   * @deprecated Use `getContextUsage()` (the official SDK's name); this alias goes in 0.3.
   * @param options `detail` and a signal and a timeout.
   * @returns The CLI's breakdown.
   */
  contextUsage(
    options: ControlRequestOptions & { detail?: "summary" | "full" } = {},
  ): Promise<Reply<"get_context_usage">> {
    return this.getContextUsage(options);
  }

  /**
   * Reports the settings in force and where they come from (`get_settings`;
   * the official SDK does not expose it).
   *
   * @param options A signal and a timeout.
   * @returns The effective settings, their sources and what was applied.
   */
  settings(options: ControlRequestOptions = {}): Promise<Reply<"get_settings">> {
    return this.request("get_settings", {}, options);
  }

  /**
   * Restores files the CLI changed since a user message (needs file
   * checkpointing: the subprocess option `enableFileCheckpointing`).
   *
   * @param userMessageId The `uuid` of the user message to rewind to (`turn.uuid`).
   * @param options `dryRun` to only report, and a signal and a timeout.
   * @returns The CLI's report.
   */
  rewindFiles(
    userMessageId: string,
    options: ControlRequestOptions & { dryRun?: boolean } = {},
  ): Promise<Reply<"rewind_files">> {
    const { dryRun, ...rest } = options;
    const dry = dryRun === undefined ? {} : { dry_run: dryRun };
    return this.request("rewind_files", { user_message_id: userMessageId, ...dry }, rest);
  }

  /**
   * Reconnects an MCP server (for example after its process died).
   *
   * @param serverName The server's name.
   * @param options A signal and a timeout.
   */
  async reconnectMcpServer(serverName: string, options: ControlRequestOptions = {}): Promise<void> {
    await this.request("mcp_reconnect", { serverName }, options);
  }

  /**
   * Enables or disables an MCP server for the rest of the session.
   *
   * @param serverName The server's name.
   * @param enabled Whether its tools are offered.
   * @param options A signal and a timeout.
   */
  async toggleMcpServer(
    serverName: string,
    enabled: boolean,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("mcp_toggle", { serverName, enabled }, options);
  }

  /**
   * Stops a background task (a background shell, a sub-agent).
   *
   * @param taskId The task's id (from a `system` task frame).
   * @param options A signal and a timeout.
   */
  async stopTask(taskId: string, options: ControlRequestOptions = {}): Promise<void> {
    await this.request("stop_task", { task_id: taskId }, options);
  }

  /**
   * Sends running foreground tasks to the background (all, or the one of a tool use).
   *
   * @param toolUseId The tool use whose task to background, or all when left out.
   * @param options A signal and a timeout.
   * @returns The CLI's reply.
   */
  backgroundTasks(
    toolUseId?: string,
    options: ControlRequestOptions = {},
  ): Promise<Reply<"background_tasks">> {
    return this.request("background_tasks", toolUseId ? { tool_use_id: toolUseId } : {}, options);
  }

  /**
   * Reloads the plugins from disk (the SDK's `reloadPlugins`, same options).
   * `holdOnCacheImpact` applies nothing when the reload would change the
   * tool list the conversation's prompt cache depends on (the reply then has
   * `held: true`); `addPlugins` loads more plugins as launch-time `plugins`
   * would (absolute paths); `refuseIfBusy` refuses while a turn, queued line
   * or background agent runs: `control_failed` with `errorCode`
   * `reload_plugins_busy` (honoured by a CLI whose `system/init`
   * capabilities list `reload_plugins_refuse_if_busy_v1`).
   *
   * @param options The reload's options, a signal and a timeout.
   * @returns The CLI's report.
   * @throws {DuplexError} `invalid_argument` for an `addPlugins` entry that is not a local
   *   plugin with an absolute path; `control_failed`, `timeout`, `closed`, `process_exited`.
   */
  reloadPlugins(options: ReloadPluginsOptions = {}): Promise<Reply<"reload_plugins">> {
    const { holdOnCacheImpact, addPlugins, refuseIfBusy, ...rest } = options;
    try {
      const fields = reloadFields(holdOnCacheImpact, addPlugins, refuseIfBusy);
      return this.request("reload_plugins", fields, rest);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Reloads the skills from disk.
   *
   * @param options A signal and a timeout.
   * @returns The CLI's report.
   */
  reloadSkills(options: ControlRequestOptions = {}): Promise<Reply<"reload_skills">> {
    return this.request("reload_skills", {}, options);
  }

  /**
   * Reloads the output styles from disk.
   *
   * @param options A signal and a timeout.
   * @returns The CLI's report.
   */
  reloadOutputStyles(options: ControlRequestOptions = {}): Promise<Reply<"reload_output_styles">> {
    return this.request("reload_output_styles", {}, options);
  }

  /**
   * Applies settings as if they came from command-line flags, for the rest of the session.
   *
   * @param settings The settings (the CLI's settings-file shape).
   * @param options A signal and a timeout.
   */
  async applyFlagSettings(
    settings: Record<string, unknown>,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("apply_flag_settings", { settings }, options);
  }

  /**
   * Writes settings into a settings file (`localSettings` or `userSettings`).
   *
   * @param source Which file.
   * @param settings The settings to merge into it.
   * @param options A signal and a timeout.
   */
  async updateSettings(
    source: "localSettings" | "userSettings",
    settings: Record<string, unknown>,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("update_settings", { source, settings }, options);
  }

  /**
   * Tells the CLI that a file was read at a modification time (so its Edit
   * tool accepts edits of a file the host showed the model).
   *
   * @param path The file's path.
   * @param mtime Its modification time, in milliseconds since the epoch.
   * @param options A signal and a timeout.
   */
  async seedReadState(
    path: string,
    mtime: number,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("seed_read_state", { path, mtime }, options);
  }

  /**
   * Reads a file of the session (relative to its working folder) under the
   * Read tool's permission rules: a denied or missing file rejects with a
   * `control_failed` DuplexError.
   *
   * @param path The file.
   * @param options `maxBytes` and `encoding` (`"base64"` for binary files), a signal and a timeout.
   * @returns The contents and where they came from.
   */
  readFile(
    path: string,
    options: ControlRequestOptions & { maxBytes?: number; encoding?: "utf-8" | "base64" } = {},
  ): Promise<Reply<"read_file">> {
    const { maxBytes, encoding, ...rest } = options;
    return this.request("read_file", {
      path,
      ...(maxBytes === undefined ? {} : { max_bytes: maxBytes }),
      ...(encoding === undefined ? {} : { encoding }),
    }, rest);
  }

  /**
   * Overrides the permission mode for one MCP server's tools (`"auto"`
   * allows them without asking); `null` removes the override.
   *
   * @param serverName The server's name (stored even before it connects).
   * @param mode The mode, or `null`.
   * @param options A signal and a timeout.
   * @returns A `warning` when no known server has that name.
   */
  setMcpPermissionModeOverride(
    serverName: string,
    mode: "default" | "auto" | null,
    options: ControlRequestOptions = {},
  ): Promise<Reply<"set_mcp_permission_mode_override">> {
    return this.request("set_mcp_permission_mode_override", { serverName, mode }, options);
  }

  /**
   * Reports the session's cost and usage and the plan's rate limits
   * (`get_usage`; the SDK's experimental
   * `usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET`, same
   * parameters). `rate_limits_available` is false (and `rate_limits` null)
   * with an API key and third-party providers.
   *
   * @param options `skipBehaviors` to skip the scan of local transcripts that fills
   *   `behaviors` (then null), and a signal and a timeout.
   * @returns The CLI's report.
   */
  getUsage(
    options: ControlRequestOptions & { skipBehaviors?: boolean } = {},
  ): Promise<Reply<"get_usage">> {
    const { skipBehaviors, ...rest } = options;
    return this.request("get_usage", skipBehaviors ? { skip_behaviors: true } : {}, rest);
  }
}
