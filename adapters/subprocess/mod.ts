/**
 * Runs a real `claude` (Claude Code CLI) as a subprocess with `Deno.Command`
 * and connects a `DuplexSession` to it over its stdin and stdout.
 *
 * {@linkcode subprocess} checks its options and returns a transport factory;
 * the session calls it to spawn the CLI. The transport:
 *
 * - passes stdout through as bytes (the session splits and parses lines) and
 *   writes one line at a time to stdin, in call order; after the CLI has
 *   gone, writes reject with a `DuplexError` of kind `process_exited`;
 * - always drains stderr, keeps its last 64 KiB for the exit report and
 *   offers its lines on `transport.stderr` (bounded, oldest dropped);
 * - closes in bounded time: stdin EOF and `closeGraceMs` (2 s), SIGTERM to
 *   the CLI's process group and `terminateGraceMs` (3 s), then SIGTERM and
 *   SIGKILL for the tool processes recorded while the CLI ran (they run in
 *   their own process groups) and SIGKILL for the group;
 * - ends the CLI when the host program gets SIGINT/SIGTERM/SIGHUP or exits
 *   (see below, and `hostSignal`).
 *
 * What the adapter installs in the host program, only while at least one
 * transport is open:
 *
 * - `Deno.addSignalListener` for SIGINT, SIGTERM and SIGHUP (those the
 *   platform has): added with the first open transport whose `hostSignal` is
 *   not `"ignore"`, removed when the last such transport has closed or its
 *   CLI has exited. A signal listener replaces Deno's default action (dying
 *   from the signal). With the default `hostSignal: "close-and-exit"`, a
 *   signal ends every open CLI synchronously (SIGTERM to its process group,
 *   its known tool processes and the processes carrying its marker variable;
 *   up to 1 s, polled, for them to go; SIGKILL to the rest) and exits with
 *   128 + the signal number (130, 143, 129), as dying from it looks to a
 *   shell: no code of the program runs in between. With `"close"`, the CLIs
 *   are closed with `close()` and the program's own listener decides when
 *   to exit.
 * - One `unload` listener on `globalThis` (`Deno.exit()` or the end of the
 *   program): added with the first open transport, removed with the last;
 *   it ends every open CLI synchronously in the same way.
 *
 * Nothing else: no `unhandledrejection` or `error` listener, no change to how
 * the program's own errors end it. To opt out of the signal listeners, pass
 * `hostSignal: "ignore"` (a signal then kills the host as Deno's default
 * does, and the detached CLI is left running: close it yourself), or
 * `"close"` when the program has a signal listener of its own. The `unload`
 * listener has no opt-out: it is what keeps `Deno.exit()` from leaving the
 * CLI and its tools running.
 *
 * Permissions: `--allow-run=<path of claude>` and `--allow-env`. Full
 * `--allow-run` lets `close()` signal the CLI's whole process group, and
 * `--allow-all` also lets it find the CLI's tool processes in `/proc`.
 * Without a permission the error (kind `not_permitted`) names the flag.
 * Where `Deno.Command` does not exist (Deno Deploy and other edge runtimes),
 * opening fails with `not_permitted` too: run `claude` behind a relay
 * (`@duplex/claude/relay`) and connect with `@duplex/claude/remote`.
 *
 * @example Run one turn on a local claude
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { subprocess } from "@duplex/claude/subprocess";
 * import assert from "node:assert/strict";
 *
 * await using session = await DuplexSession.start({
 *   transport: subprocess({
 *     model: "sonnet",
 *     permissionMode: "default",
 *     cwd: "/path/to/project",
 *   }),
 *   onPermission: (request) =>
 *     request.toolName === "Read"
 *       ? { behavior: "allow" }
 *       : { behavior: "deny", message: "Only reading is allowed" },
 * });
 * const turn = await session.send("Summarise README.md in one line.");
 * assert.equal(turn.result.isError, false);
 * ```
 *
 * @module
 */

export { subprocess } from "./subprocess_transport.ts";
export {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_STDERR_TAIL_BYTES,
  DEFAULT_TERMINATE_GRACE_MS,
  type HostSignalMode,
  STRIPPED_ENV,
  type SubprocessOptions,
} from "./subprocess_options.ts";
export {
  buildArgs,
  type CliOptions,
  type Effort,
  EFFORTS,
  type JsonObject,
  PERMISSION_MODES,
  type PermissionMode,
  SETTING_SOURCES,
  type SettingSource,
  type Thinking,
} from "./build_args.ts";
export { resolveBinary, type ResolveBinaryOptions } from "./find_binary.ts";
export { listSessions, type ListSessionsOptions } from "./history/list_sessions.ts";
export { getSessionInfo, type StoredSessionInfo } from "./history/stored_session_info.ts";
export {
  getSessionMessages,
  type GetSessionMessagesOptions,
  type SessionAssistantMessage,
  type SessionMessage,
  type SessionMessageBase,
  type SessionSystemMessage,
  type SessionUserMessage,
} from "./history/session_messages.ts";
export { renameSession, tagSession } from "./history/session_metadata.ts";
export { deleteSession } from "./history/delete_session.ts";
export {
  forkSession,
  type ForkSessionOptions,
  type ForkSessionResult,
} from "./history/fork_session.ts";
export type { HistoryOptions, SkippedLine } from "./history/history_options.ts";
export {
  DirectorySessionStore,
  type DirectorySessionStoreOptions,
  type DirectoryStoreSkip,
} from "./store/directory_session_store.ts";
export {
  type ImportSessionOptions,
  type ImportSessionResult,
  importSessionToStore,
} from "./store/import_session.ts";
export {
  type MaterializedSession,
  materializeSession,
  type MaterializeSessionOptions,
} from "./store/materialize_session.ts";
export { type CliLaunch, planLaunch } from "./build_args.ts";
export type {
  OutputFormat,
  PluginConfig,
  SandboxSettings,
  ThinkingConfig,
  ThinkingDisplay,
  ToolConfig,
  ToolsOption,
} from "./cli_options.ts";
export { type ConversationState, SessionPool } from "./pool/session_pool.ts";
export type {
  AcquireOptions,
  ConversationOptions,
  PoolPermissionContext,
  PoolPermissionHandler,
  PoolSessionOptions,
  SessionPoolOptions,
} from "./pool/pool_options.ts";
export type {
  HibernateReason,
  PoolEvent,
  PoolHealth,
  SpareKind,
  StartVia,
  WaitTimes,
} from "./pool/pool_events.ts";
