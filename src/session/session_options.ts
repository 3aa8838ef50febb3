// This module is browser compatible.
/**
 * The options and results of `DuplexSession`'s methods.
 *
 * @module
 */

import type { HooksOptions } from "../hooks/hooks.ts";
import type { SdkMcpServer } from "../mcp/mcp_server.ts";
import type { McpServers } from "./mcp_servers.ts";
import type { TelemetryOptions } from "../telemetry/telemetry_options.ts";
import type { PermissionHandler } from "../permissions/permission.ts";
import type { AgentDefinition, PluginConfig } from "../protocol/control_requests.ts";
import type { ContentBlock } from "../protocol/content.ts";
import type { MessageOrigin } from "../protocol/messages.ts";
import type { UserDialogHandler } from "../protocol/user_dialog.ts";
import type { SubscriptionOptions } from "../subscriptions/subscription.ts";
import type { Transport, TransportFactory } from "../transport/transport.ts";

/** Default of {@linkcode DuplexSessionOptions.controlTimeoutMs}. */
export const DEFAULT_CONTROL_TIMEOUT_MS = 60_000;
/** Default of {@linkcode DuplexSessionOptions.interruptGraceMs}. */
export const DEFAULT_INTERRUPT_GRACE_MS = 10_000;
/** Default of {@linkcode DuplexSessionOptions.closeTimeoutMs}. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;
import type { ElicitationHandler } from "./elicitation.ts";

/**
 * Options of `DuplexSession.start`. Every `…Ms` duration takes 1 to
 * 2^31-1 milliseconds, or `Infinity` for no bound at all; anything else is a
 * `RangeError` (runtimes clamp longer timers to about 1 ms).
 */
export interface DuplexSessionOptions {
  /** What carries the lines: a transport, or a factory that opens one (for example `subprocess()`). */
  transport: Transport | TransportFactory;
  /**
   * Decides on tool permission requests. Sync or async; may return
   * `{ behavior: "defer" }` and answer later with `respondToPermission`.
   *
   * @default {denies every request with a message saying no handler was set}
   */
  onPermission?: PermissionHandler;
  /**
   * Deny a permission request nobody decided on within this many
   * milliseconds. By default requests wait (they can be answered minutes or
   * hours later).
   */
  permissionTimeoutMs?: number;
  /**
   * The longest line accepted from the CLI, in bytes (a positive integer);
   * longer lines are skipped and reported.
   *
   * @default {67108864}
   */
  maxLineBytes?: number;
  /**
   * How long a control request of ours waits for the CLI's answer.
   *
   * @default {60000}
   */
  controlTimeoutMs?: number;
  /**
   * After a turn is aborted or times out, how long to wait for the CLI to end
   * it (after the interrupt) before giving up on it.
   *
   * @default {10000}
   */
  interruptGraceMs?: number;
  /**
   * What to do when the CLI does not even acknowledge the interrupt of an
   * aborted or timed-out turn within `interruptGraceMs`: `"close"` the
   * session (and so end the process), or `"keep"` it.
   *
   * @default {"close"}
   */
  onUnresponsive?: "close" | "keep";
  /**
   * A bound on `close()`, over the transport's own bounded shutdown.
   *
   * @default {30000}
   */
  closeTimeoutMs?: number;
  /**
   * Keep each turn's events in `turn.events`: `true` keeps every event but
   * the `stream_event` frames (partial deltas: a long answer sends them by
   * the hundred thousand, and subscribers get them anyway); `"all"` keeps
   * those too.
   *
   * @default {true}
   */
  collectTurnEvents?: boolean | "all";
  /**
   * Queue every `send` made while a turn runs (the default of
   * {@linkcode SendOptions.queue}).
   *
   * @default {false}
   */
  queue?: boolean;
  /**
   * Send every prompt as written: no `@`-mention or slash-command expansion
   * by the CLI (`client_composed` on each user line; the official SDK's
   * option of this name). {@linkcode SendOptions.verbatim} overrides it for
   * one turn.
   *
   * @default {false}
   */
  verbatimPrompts?: boolean;
  /**
   * OpenTelemetry spans and metrics of the session, its turns, permission
   * waits, hooks, tool calls and control requests (see
   * {@linkcode TelemetryOptions}). Off by default, and free when off.
   */
  telemetry?: TelemetryOptions;
  /** Aborts the start; aborting it after the start closes the session (an owner signal). */
  signal?: AbortSignal;
  /**
   * The system prompt (sent in `initialize`), in the official SDK's shapes:
   * a string or strings replace the CLI's prompt; `{ type: "custom", prompt,
   * snapshot }` does too, and says whether the CLI records it once for the
   * conversation (`snapshot`, the CLI's default) or renders it fresh every
   * request; `{ type: "preset", preset: "claude_code", append,
   * excludeDynamicSections, snapshot }` keeps Claude Code's own prompt,
   * appends text, and can leave out its session- and machine-specific
   * sections (skills guidance, the memory folder's path; observed on
   * 2.1.332) so the prompt caches across machines.
   */
  systemPrompt?: string | readonly string[] | SystemPromptCustom | SystemPromptPreset;
  /** Appended to the system prompt (sent in `initialize`; the preset's `append` does the same). */
  appendSystemPrompt?: string;
  /** Sub-agents, by name (sent in `initialize`). */
  agents?: Record<string, AgentDefinition>;
  /**
   * Hooks as functions, by event (registered in `initialize`, answered on
   * `hook_callback`). When a matcher asks for `onFailure: "block"`, no user
   * line goes out (every `send`, queued ones too, and `interrupt` wait) until
   * the CLI's `initialize` reply confirms it honours that
   * (`hook_on_failure_supported: true`); a reply that does not, or an
   * `initialize` that fails or times out, refuses every `send` (an
   * `unsupported` DuplexError naming the events, for a reply that does not
   * confirm) and ends the session, so no turn runs unprotected. Without such
   * a matcher nothing waits.
   */
  hooks?: HooksOptions;
  /**
   * MCP servers by name, the official SDK's shape: in-process servers made
   * with `mcpServer()` (registered in `initialize`; their tools run in this
   * process when the model calls `mcp__<server>__<tool>`, after the usual
   * permission request) and external ones (`{ command, args, env }`, or
   * `{ type: "http" | "sse", url, headers }`), which the CLI starts or
   * reaches itself. External configs travel over the control channel
   * (`mcp_set_servers`, before the first turn), never on the command line,
   * so their secrets stay out of `ps`; a server that fails to connect is a
   * `diagnostic` event of kind `mcp_server_failed`. The array of
   * `mcpServer()`s that 0.1 took still works, deprecated.
   */
  mcpServers?: McpServers | readonly SdkMcpServer[];
  /** A JSON schema the final answer must follow (structured output; sent in `initialize`). */
  jsonSchema?: Record<string, unknown>;
  /**
   * Send `initialize` even when no option above needs it (`true`), or add
   * raw fields to it. It is written before the first user line without
   * waiting for the reply (unless a hook asks for `onFailure: "block"`, see
   * `hooks`); `session.initialized` resolves with the reply.
   */
  initialize?: boolean | Record<string, unknown>;
  /**
   * Answers MCP elicitation requests (a server asks the user for input).
   *
   * @default {declines every elicitation}
   */
  onElicitation?: ElicitationHandler;
  /**
   * Answers the CLI's user dialogs (`request_user_dialog`): blocking
   * dialogs such as `"refusal_fallback_prompt"`. The CLI sends only the
   * kinds in {@linkcode DuplexSessionOptions.supportedDialogKinds}; answer
   * a kind you do not know `{ behavior: "cancelled" }`. Throwing, or an
   * answer of another shape, replies with an error, which the CLI discards
   * (the dialog stays up until its deadline).
   *
   * @default {`onControlRequest` serves the request; without it, answered "unsupported" at once}
   */
  onUserDialog?: UserDialogHandler;
  /**
   * The dialog kinds `onUserDialog` renders (`supportedDialogKinds` in
   * `initialize`), for example `["refusal_fallback_prompt"]`. The CLI sends
   * no other kind: without the kind declared, the flow behind it takes its
   * no-dialog path (for a refusal, the classic refusal error). A non-empty
   * list needs `onUserDialog`.
   */
  supportedDialogKinds?: readonly string[];
  /**
   * Declares that the UI stops background tasks one by one (`stop_task`,
   * `stopTask()`), so an interrupt spares running background agents and
   * workflows and only ends the turn (`perTaskStopAffordance` in
   * `initialize`). Without it an interrupt kills them too.
   *
   * @default {false}
   */
  perTaskStopAffordance?: boolean;
  /**
   * Tool-name aliases (`toolAliases` in `initialize`): when the model calls
   * a tool by a key of this record, the CLI runs the tool the value names,
   * for example `{ Shell: "Bash" }`, or `{ Bash: "mcp__workspace__bash" }`
   * to route a built-in name to your own tool. One hop, no chains.
   */
  toolAliases?: Readonly<Record<string, string>>;
  /**
   * The workflow of plan mode (`planModeInstructions` in `initialize`):
   * replaces the default implementation phases of the plan-mode reminder,
   * which the CLI still wraps with its read-only rules and the
   * `ExitPlanMode` protocol.
   */
  planModeInstructions?: string;
  /**
   * Periodic short summaries of what each running sub-agent does
   * (`agentProgressSummaries` in `initialize`), written by the model about
   * every 30 s and delivered as `summary` on `system/task_progress` frames.
   *
   * @default {false}
   */
  agentProgressSummaries?: boolean;
  /**
   * Answers any other control request the CLI sends (and
   * `request_user_dialog` when `onUserDialog` is not set). Return the reply
   * payload, or `undefined` to answer "unsupported". Throwing answers with
   * the error.
   */
  onControlRequest?: (
    subtype: string,
    request: Readonly<Record<string, unknown>>,
    context: { signal: AbortSignal },
  ) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;
}

/** A system prompt of the caller's own (see {@linkcode DuplexSessionOptions.systemPrompt}). */
export interface SystemPromptCustom {
  /** Always `"custom"`. */
  readonly type: "custom";
  /** The prompt, or its parts. */
  readonly prompt: string | readonly string[];
  /** Record the prompt once and reuse it on every later request (the CLI's default: true). */
  readonly snapshot?: boolean;
}

/** Claude Code's own system prompt, extended (see {@linkcode DuplexSessionOptions.systemPrompt}). */
export interface SystemPromptPreset {
  /** Always `"preset"`. */
  readonly type: "preset";
  /** Always `"claude_code"`. */
  readonly preset: "claude_code";
  /** Text appended to the preset. */
  readonly append?: string;
  /** Leave out the session- and machine-specific sections (skills guidance, memory path, …). */
  readonly excludeDynamicSections?: boolean;
  /** Record the prompt once and reuse it on every later request (the CLI's default: true). */
  readonly snapshot?: boolean;
}

/** Options of `DuplexSession.send`. */
export interface SendOptions {
  /** Aborting interrupts the turn in the CLI; `send` then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Interrupts the turn after this many milliseconds; `send` then rejects with a `timeout` DuplexError. */
  timeoutMs?: number;
  /** The user line's uuid (default: a random one). Results are matched to turns by it. */
  uuid?: string;
  /** Keep this turn's events in `turn.events` (overrides the session option `collectTurnEvents`). */
  collectEvents?: boolean | "all";
  /**
   * While another turn runs, write the line at once and let the CLI queue it
   * (instead of rejecting with `turn_in_flight`); `send` resolves with the
   * turn that ran it. Lines queued together with the default priority run as
   * ONE turn (the CLI batches them; each `send` gets that turn's result). The
   * turn reports `turn_queued` and `turn_started` events. Aborting `signal`
   * before the line ran withdraws it (`cancel_async_message`); after, it
   * interrupts the turn as usual.
   *
   * @default {the session option `queue`, else false}
   */
  queue?: boolean;
  /**
   * Where the CLI puts a queued line (observed on 2.1.332): `"now"` cancels
   * the running turn and runs this line at once; `"next"` runs it alone
   * before the other queued lines; `"later"` runs it alone after them.
   * Without a priority, queued lines are batched into one turn.
   */
  priority?: "now" | "next" | "later";
  /**
   * Send the text as written: no `@`-mention or slash-command expansion by
   * the CLI (`client_composed` on the line; the SDK's `verbatimPrompts`).
   *
   * @default {the session option `verbatimPrompts`, else false}
   */
  verbatim?: boolean;
  /**
   * `false` appends the content to the conversation without asking the
   * model: the CLI answers with an empty `result` (no API request), and the
   * next turn sees the content.
   *
   * @default {true}
   */
  shouldQuery?: boolean;
  /**
   * Who the message comes from (`origin` on the line), for example
   * `{ kind: "human" }` for what a person typed: the CLI treats a message
   * without an origin as unattributed, and records the origin in the
   * transcript (2.1.332 drops a `"peer"` origin a host sends). `kind` is a
   * non-empty string; `"channel"` needs `server`, `"peer"` needs `from`
   * (strings).
   */
  origin?: MessageOrigin;
  /**
   * When the message was written, as an ISO 8601 string (`timestamp` on the
   * line; the CLI records it as the transcript entry's `sentAtMs`, observed
   * on 2.1.332). A `Date` is sent as its `toISOString()`.
   */
  timestamp?: string | Date;
  /**
   * What the user pasted rather than typed (`pasted_content` on the line):
   * each entry one paste, a string or text blocks. The CLI appends each
   * after the typed text, in order (and may wrap it in `<pasted_content>`
   * tags); it ignores blocks other than text (send images in the content)
   * and a list of more than 1,000 entries and blocks in all, which is
   * refused here instead.
   */
  pastedContent?: readonly (string | readonly ContentBlock[])[];
  /**
   * Pastes still inside the content where the user put them
   * (`inline_pastes` on the line): each entry the text of one paste.
   */
  inlinePastes?: readonly string[];
  /**
   * Marks the line as written by the program, not a person (`isSynthetic`
   * on the line): 2.1.332 tells the model so (a `[MESSAGE FROM NON-USER
   * SOURCE - NOT USER INPUT]` line), records the origin as `unclassified`
   * and does not replay the line.
   *
   * @default {false}
   */
  isSynthetic?: boolean;
}

/** Options of one control request (`request()` and the methods built on it). */
export interface ControlRequestOptions {
  /** Aborting withdraws the request (a `control_cancel_request` is sent) and rejects with the reason. */
  signal?: AbortSignal;
  /**
   * Rejects with a `timeout` DuplexError after this many milliseconds (1 to
   * 2^31-1, or `Infinity` for no bound). Default: the session's `controlTimeoutMs`.
   */
  timeoutMs?: number;
}

/** Options of waits that take a bound. */
export interface WaitOptions {
  /** Stop waiting after this many milliseconds. */
  timeoutMs?: number;
  /** Stop waiting when aborted (rejects with the reason). */
  signal?: AbortSignal;
}

/** Options of `DuplexSession.subscribe`. */
export interface SubscribeOptions extends SubscriptionOptions {
  /** Start with the events of the turn in flight (up to `capacity`), for late subscribers. */
  replayTurn?: boolean;
  /**
   * Start with a `permission_request` event for every request still waiting
   * for a decision (deferred ones included), oldest first: the way a UI that
   * reconnects (or a client after a relay resume) gets back the questions it
   * has to answer. With `replayTurn`, they come after the turn's events that
   * do not already hold them.
   */
  replayPending?: boolean;
}

/** Options of `DuplexSession.interrupt`. */
export interface InterruptOptions extends ControlRequestOptions {
  /**
   * Also cancel the queued lines (their `send`s reject with an `aborted`
   * DuplexError); without it they run next, batched into one turn.
   *
   * @default {false}
   */
  cancelQueued?: boolean;
}

/** The CLI's acknowledgement of an interrupt. */
export interface InterruptReceipt {
  /** Queued user lines the CLI kept (their uuids): they run next. */
  readonly stillQueued: readonly string[];
  /** Queued user lines the CLI cancelled (with `cancelQueued`). */
  readonly cancelled: readonly string[];
  /** Whether a turn of ours was running when the interrupt was sent. */
  readonly turnWasRunning: boolean;
  /** The CLI's reply payload. */
  readonly raw: Record<string, unknown>;
}

/** The options of `reloadPlugins`: the SDK's, and a signal and a timeout. */
export interface ReloadPluginsOptions extends ControlRequestOptions {
  /** Apply nothing when the reload would change the tool list the prompt cache depends on. */
  readonly holdOnCacheImpact?: boolean;
  /** Plugins to load as well (absolute paths); those loaded stay. */
  readonly addPlugins?: readonly PluginConfig[];
  /** Refuse (`reload_plugins_busy`) while the session is busy, instead of reloading in a turn. */
  readonly refuseIfBusy?: boolean;
}
