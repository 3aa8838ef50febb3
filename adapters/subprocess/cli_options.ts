/**
 * The options that choose how `claude` runs (its flags, and the variables
 * and private files some of them need), named as in the official TypeScript
 * SDK wherever the SDK's option means the same thing. `buildArgs` checks and
 * maps them.
 *
 * One interface, because it is one catalogue: each field's JSDoc says what it
 * does and how it reaches the CLI.
 *
 * @module
 */

import type { PermissionMode } from "../../src/protocol/control.ts";
import type { PluginConfig } from "../../src/protocol/control_requests.ts";

export type { PluginConfig };

export type { PermissionMode };

/** A JSON object, for options that the CLI receives as JSON text. */
export type JsonObject = { readonly [key: string]: unknown };

/** An effort level of the CLI (`--effort`). */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max";

/** How thinking appears in the answer (`--thinking-display`). */
export type ThinkingDisplay = "summarized" | "omitted" | "highlights";

/**
 * Extended thinking, the official SDK's `ThinkingConfig`:
 * `{ type: "adaptive" }` (`--thinking=adaptive`), `{ type: "enabled",
 * budgetTokens }` (`--max-thinking-tokens=N`; without `budgetTokens` it is
 * adaptive), `{ type: "disabled" }` (`--thinking=disabled`); `display` adds
 * `--thinking-display`.
 */
export type ThinkingConfig =
  | { readonly type: "adaptive"; readonly display?: ThinkingDisplay }
  | { readonly type: "enabled"; readonly budgetTokens?: number; readonly display?: ThinkingDisplay }
  | { readonly type: "disabled" };

/**
 * What `thinking` takes: a {@linkcode ThinkingConfig}, or (deprecated, the
 * 0.1 forms, removed in the next minor version) `"adaptive"`, `"disabled"`
 * or `{ maxTokens }`.
 */
export type Thinking =
  | ThinkingConfig
  | "adaptive"
  | "disabled"
  | { readonly maxTokens: number };

/** A settings source the CLI can load (`--setting-sources`). */
export type SettingSource = "user" | "project" | "local";

/**
 * The built-in tools: names (`[]` for none), or the official SDK's preset
 * `{ type: "preset", preset: "claude_code" }` for the default set. The 0.1
 * form `"default"` still works, deprecated (removed in the next minor version).
 */
export type ToolsOption =
  | readonly string[]
  | { readonly type: "preset"; readonly preset: "claude_code" }
  | "default";

/** Structured output: the final result follows this JSON Schema (the official SDK's `OutputFormat`). */
export interface OutputFormat {
  /** The only format there is. */
  readonly type: "json_schema";
  /** The JSON Schema. */
  readonly schema: JsonObject;
}

/**
 * Sandbox settings for the commands tools run (the CLI's `sandbox`
 * settings): `enabled`, `failIfUnavailable`, `autoAllowBashIfSandboxed`,
 * `allowUnsandboxedCommands`, `network`, `filesystem`, `credentials`, as the
 * CLI documents them. Typed loosely: the CLI checks the values.
 */
export interface SandboxSettings {
  /** Run commands in the sandbox. */
  readonly enabled?: boolean;
  /**
   * Refuse to start when the sandbox cannot work (missing `bubblewrap` and
   * `socat` on Linux); with `enabled: true` this defaults to `true`, as in
   * the official SDK.
   */
  readonly failIfUnavailable?: boolean;
  /** Allow Bash without asking while it is sandboxed. */
  readonly autoAllowBashIfSandboxed?: boolean;
  /** Let a command ask to run outside the sandbox. */
  readonly allowUnsandboxedCommands?: boolean;
  /** Network rules (`allowedDomains`, `deniedDomains`, …). */
  readonly network?: JsonObject;
  /** File system rules (`allowWrite`, `denyRead`, …). */
  readonly filesystem?: JsonObject;
  /** Credentials withheld from commands (`files`, `envVars`). */
  readonly credentials?: JsonObject;
  /** Any other sandbox setting the CLI knows. */
  readonly [key: string]: unknown;
}

/** Per-tool configuration of built-in tools (the official SDK's `ToolConfig`). */
export interface ToolConfig {
  /** The `AskUserQuestion` tool. */
  readonly askUserQuestion?: {
    /**
     * The format the model writes option previews in (`markdown`, the CLI's
     * default, or self-contained `html` fragments for web UIs).
     */
    readonly previewFormat?: "markdown" | "html";
  };
}

/** The permission modes `buildArgs` accepts. */
export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "bypassPermissions",
  "plan",
  "dontAsk",
  "auto",
  "manual",
];

/** The effort levels `buildArgs` accepts. */
export const EFFORTS: readonly Effort[] = ["low", "medium", "high", "xhigh", "max"];

/** The setting sources `buildArgs` accepts. */
export const SETTING_SOURCES: readonly SettingSource[] = ["user", "project", "local"];

/**
 * How `claude` runs: each option maps to a CLI flag, an environment
 * variable or a private file; unset options add nothing.
 *
 * Nothing secret goes on the command line, where `ps` shows it to every
 * local user: `settings` (with `sandbox`), `agents` and `mcpConfig` given as
 * objects or JSON text are written to files that only this user can read
 * (`tempDir`), removed when the CLI has exited. `managedSettings` and
 * `extraArgs` do travel on the command line. System prompts, hooks and
 * in-process MCP servers are not here: the session sends them in its
 * `initialize` request.
 */
export interface CliOptions {
  /** `--model`: a model alias (`"sonnet"`) or full name. */
  readonly model?: string;
  /** `--fallback-model`: models to try when the main one is busy (comma-separated); not `model` itself. */
  readonly fallbackModel?: string;
  /**
   * `--permission-mode`. `"bypassPermissions"` also needs
   * `allowDangerouslySkipPermissions: true`, as in the official SDK.
   */
  readonly permissionMode?: PermissionMode;
  /**
   * `--allow-dangerously-skip-permissions`: lets the session run in (or
   * later switch to, with `setPermissionMode`) `"bypassPermissions"`.
   *
   * @default {false}
   */
  readonly allowDangerouslySkipPermissions?: boolean;
  /** `--allowedTools`: tool rules allowed without asking, for example `"Bash(git log:*)"`. */
  readonly allowedTools?: readonly string[];
  /** `--disallowedTools`: tool rules always denied. */
  readonly disallowedTools?: readonly string[];
  /** `--tools`: the built-in tools available; `[]` gives none (`--tools=`). */
  readonly tools?: ToolsOption;
  /**
   * `--mcp-config`: MCP servers the CLI runs or reaches, as an object
   * `{ mcpServers: { … } }` or JSON text (written to a private file: their
   * `env` and `headers` stay off the command line), or a file path.
   */
  readonly mcpConfig?: JsonObject | string;
  /** `--strict-mcp-config`: use only the servers of `mcpConfig` (and the session's). */
  readonly strictMcpConfig?: boolean;
  /** `--add-dir`, once per directory: more directories the tools may use. */
  readonly additionalDirectories?: readonly string[];
  /** @deprecated Use `additionalDirectories` (the official SDK's name); removed in the next minor version. */
  readonly addDirs?: readonly string[];
  /** `--max-turns`: a positive integer. */
  readonly maxTurns?: number;
  /** `--max-budget-usd`: a positive amount of dollars. */
  readonly maxBudgetUsd?: number;
  /**
   * `--task-budget`: an API-side budget of `total` tokens the model paces
   * itself by (`output_config.task_budget`).
   */
  readonly taskBudget?: { readonly total: number };
  /** `--effort`. */
  readonly effort?: Effort;
  /** `--thinking`, `--max-thinking-tokens` and `--thinking-display`. */
  readonly thinking?: Thinking;
  /** `--include-partial-messages`: emit `stream_event` frames. */
  readonly includePartialMessages?: boolean;
  /**
   * `--include-hook-events`: emit `hook_started`, `hook_progress` and
   * `hook_response` system frames for every hook event.
   */
  readonly includeHookEvents?: boolean;
  /**
   * `--forward-subagent-text`: forward sub-agents' text and thinking as
   * frames with `parent_tool_use_id` set (by default only their tool calls
   * and results).
   */
  readonly forwardSubagentText?: boolean;
  /**
   * `--prompt-suggestions`: after each turn but the first, the CLI predicts
   * the user's next prompt and emits a `prompt_suggestion` frame after the
   * `result`.
   */
  readonly promptSuggestions?: boolean;
  /** `--replay-user-messages`: echo user lines back on stdout. */
  readonly replayUserMessages?: boolean;
  /** `--resume`: the session id (or name) to continue. */
  readonly resume?: string;
  /** `--continue`: continue the most recent conversation of the working directory. */
  readonly continue?: boolean;
  /**
   * `--resume-session-at`: with `resume` (or `continue`), keep the
   * conversation only up to and including this chain entry (a message's
   * `uuid`).
   */
  readonly resumeSessionAt?: string;
  /**
   * `--resume-drops-turn`: with `resumeSessionAt`, the uuid of the user
   * line whose turn the truncation drops. The CLI refuses the resume (an
   * `error_during_execution` result starting with `Resume rejected by
   * --resume-drops-turn:`) when the dropped range holds anything else.
   */
  readonly resumeDropsTurn?: string;
  /**
   * `--await-claim`: start as a parked spare. The CLI loads, authenticates
   * and answers `initialize`, then waits to be bound to a folder and a
   * session with `session.claimSession()` (the `claim_session` request)
   * before its first turn. Start it in a neutral folder, never the
   * session's; `SessionPool` does all of this for you. Not with `resume`,
   * `continue` or `sessionId`.
   */
  readonly awaitClaim?: boolean;
  /**
   * `--session-mirror`: after each local transcript write, emit a
   * `transcript_mirror` frame with the lines. Set by `sessionStore`; alone it
   * only delivers the frames to subscribers.
   */
  readonly sessionMirror?: boolean;
  /** `--session-id`: the id (a UUID) of the new session. */
  readonly sessionId?: string;
  /** `--fork-session`: with `resume`/`continue`, start a new session id. */
  readonly forkSession?: boolean;
  /**
   * `false` adds `--no-session-persistence`: no session files are written,
   * so the session cannot be resumed.
   *
   * @default {true}
   */
  readonly persistSession?: boolean;
  /** @deprecated Use `persistSession: false` (the official SDK's name); removed in the next minor version. */
  readonly noSessionPersistence?: boolean;
  /**
   * `--name`: the session's title (listings, `/resume`). On `resume` it
   * renames the session (the official SDK, which sends it in `initialize`,
   * keeps a resumed session's title there).
   */
  readonly title?: string;
  /** `--setting-sources`: which settings files to load; `[]` loads none. */
  readonly settingSources?: readonly SettingSource[];
  /**
   * `--settings`: more settings (the flag layer, above user, project and
   * local settings), as an object or JSON text (written to a private file),
   * or the path of a settings file.
   */
  readonly settings?: JsonObject | string;
  /**
   * Sandbox settings, merged into `settings.sandbox` (this option's values
   * win; the deny lists of both are combined). Cannot be combined with a
   * `settings` file path. With `enabled: true`, `failIfUnavailable`
   * defaults to `true`: the CLI refuses to start rather than run commands
   * unsandboxed.
   */
  readonly sandbox?: SandboxSettings;
  /**
   * `--managed-settings`: policy-tier settings from the parent process (the
   * CLI keeps only their restrictive keys). They travel on the command line
   * as JSON: the CLI 2.1.332 takes them nowhere else but `initialize`.
   */
  readonly managedSettings?: JsonObject;
  /**
   * `--agents`: custom agents by name, as an object or JSON text (written
   * to a private file), or a file path. The session's own `agents` option
   * sends them in `initialize` instead.
   */
  readonly agents?: JsonObject | string;
  /** `--agent`: the agent the main thread runs as (defined in `agents` or in settings). */
  readonly agent?: string;
  /**
   * Skills for the main session: `"all"` adds `Skill` to `allowedTools`, a
   * list adds `Skill(name)` rules (so they run without asking). Which skills
   * the model is offered is chosen only by the `skills` field of
   * `initialize` in the CLI 2.1.332 (there is no flag): the transport hands
   * the list to the session for it.
   */
  readonly skills?: readonly string[] | "all";
  /** `--plugin-dir` (or `--plugin-dir-no-mcp`), once per plugin. */
  readonly plugins?: readonly PluginConfig[];
  /**
   * `--project-config-root`: read project settings, `.mcp.json` and the
   * `.claude` folders (agents, skills, commands…) from this folder instead
   * of the working directory (for a worktree of a trusted checkout).
   */
  readonly projectConfigRoot?: string;
  /**
   * `--debug`: write debug logs (to `~/.claude/debug/` unless `debugFile`);
   * a string is a category filter, for example `"hooks,mcp"` or `"!hooks"`.
   */
  readonly debug?: boolean | string;
  /** `--debug-file`: write debug logs to this file (implies `debug`). */
  readonly debugFile?: string;
  /**
   * Track file changes so `rewindFiles` can restore them (sets
   * `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true` for the CLI, as the
   * official SDK does). A managed `fileCheckpointingEnabled: false` keeps it off.
   *
   * @default {false}
   */
  readonly enableFileCheckpointing?: boolean;
  /**
   * Per-tool configuration: `askUserQuestion.previewFormat` sets
   * `CLAUDE_CODE_QUESTION_PREVIEW_FORMAT` for the CLI.
   */
  readonly toolConfig?: ToolConfig;
  /** `--json-schema`: structured output, the final result follows `schema`. */
  readonly outputFormat?: OutputFormat;
  /** @deprecated Use `outputFormat: { type: "json_schema", schema }` (the official SDK's name); removed in the next minor version. */
  readonly jsonSchema?: JsonObject;
  /** `--betas`: beta headers for API requests. */
  readonly betas?: readonly string[];
  /**
   * `--permission-prompt-tool`: an MCP tool that answers permission asks
   * instead of the host (by default the host answers, through `can_use_tool`
   * control requests: `--permission-prompt-tool=stdio`).
   */
  readonly permissionPromptToolName?: string;
  /**
   * `--permission-prompts`: `"host"` (the default: the host or
   * `permissionPromptToolName` answers) or `"none"`: nobody does, and
   * whatever would ask is denied at once.
   */
  readonly permissionPrompts?: "host" | "none";
  /**
   * @deprecated Use `permissionPromptToolName` (a tool) or
   * `permissionPrompts: "none"`; `false` omits the flag so that the CLI
   * denies every ask itself. Removed in the next minor version.
   */
  readonly permissionPromptTool?: string | false;
  /**
   * More flags, the official SDK's shape: `{ flag: value }` adds
   * `--flag=value`, `{ flag: null }` adds `--flag`, in insertion order,
   * after every other flag, unchecked. The 0.1 form, an array of raw
   * arguments, still works, deprecated (removed in the next minor version).
   */
  readonly extraArgs?: Readonly<Record<string, string | null>> | readonly string[];
}
