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
 * Its parts (in `adapters/subprocess/`):
 *
 * | File | What it owns |
 * | --- | --- |
 * | `subprocess_transport.ts` | `subprocess()` and the transport: the input side (one stdin writer, its state), the output pipes, `close()` |
 * | `subprocess_options.ts` | `SubprocessOptions`, their defaults, `checkSubprocessOptions` (pure: the options, the launch plan, the close settings) |
 * | `cli_options.ts` | `CliOptions`: the CLI's flags as typed options, named as in the official SDK |
 * | `build_args.ts` | `buildArgs`, `planLaunch`; the `LaunchPlan` made once per factory |
 * | `_option_args.ts` | the options whose mapping takes more than a line (thinking, tools, settings with sandbox, plugins, JSON arguments) |
 * | `_sandbox.ts` | the `sandbox` option merged into the settings' `sandbox` block |
 * | `_arg_checks.ts` | the value checks of the argument builder, worded alike |
 * | `find_binary.ts` | `resolveBinary`: finding `claude`; spawn failures explained |
 * | `cli_version.ts` | `cliVersion`: `claude --version`, asked once per binary (cached by path, size, mtime); a launch the version cannot run refused |
 * | `doctor.ts`, `doctor_main.ts` | `doctor()`: why a session would not start, one line per check; `deno task doctor` |
 * | `_doctor_local.ts`, `_doctor_credentials.ts`, `_doctor_bubblewrap.ts`, `_doctor_relay.ts` | the doctor's checks: the binary, version, permissions, folders; credentials; bwrap; a relay |
 * | `_doctor_run.ts`, `_doctor_context.ts` | the doctor's bounded runs of a program; what its checks share |
 * | `_spawn.ts` | one spawn: the child's environment, the private files, the working directory, `Deno.Command` |
 * | `_private_files.ts` | the private folder (0700) of the settings, agents and MCP files of one launch |
 * | `_cli_process.ts` | `CliProcess`: the child's life (running / closing / exited) and its signals |
 * | `_close_ladder.ts` | the bounded close: EOF, grace, SIGTERM, SIGKILL, the tool processes |
 * | `_process_tree.ts` | the CLI's descendants, read from `/proc` |
 * | `_marked_processes.ts` | the processes carrying the CLI's marker variable |
 * | `_host_exit.ts` | the host's signals and `unload`: every open CLI ended with the host |
 * | `_pipes.ts` | stdout as bytes, stderr as bounded lines; the bounded drain after the exit |
 * | `_stderr_tail.ts` | the last lines of stderr, bounded in bytes and lines |
 * | `_bubblewrap.ts`, `_isolation.ts` | `isolation: "bubblewrap"`: the `bwrap` command line (pure), and the host side |
 * | `_store_link.ts`, `_store_resume.ts` | `sessionStore`: the mirror target; resuming a session the store holds |
 * | `_moved.ts` | the names that moved to `./pool` and `./history`, deprecated here until 0.4 |
 *
 * The session pool (`pool/`) is `@duplex/claude/pool`; the history
 * functions (`history/`) and the directory store (`store/`) are
 * `@duplex/claude/history`. Their names are still exported here, deprecated,
 * through 0.3.
 *
 * @example A stand-in for claude: any program, over the same transport
 * ```ts
 * import { subprocess } from "@duplex/claude/subprocess";
 * import assert from "node:assert/strict";
 *
 * // Deno itself, echoing its input: what a session writes comes back as its output.
 * const open = subprocess({
 *   pathToClaudeCodeExecutable: Deno.execPath(),
 *   executableArgs: ["eval", "await Deno.stdin.readable.pipeTo(Deno.stdout.writable)"],
 * });
 * // What DuplexSession.start({ transport: open }) does first.
 * await using transport = await open({ signal: AbortSignal.timeout(10_000) });
 * await transport.write('{"type":"keep_alive"}');
 * await transport.endInput();
 * assert.equal(await new Response(transport.readable).text(), '{"type":"keep_alive"}\n');
 * assert.equal((await transport.closed).code, 0);
 * ```
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
export {
  doctor,
  DOCTOR_CHECKS,
  type DoctorCheck,
  type DoctorCheckName,
  type DoctorOptions,
  type DoctorReport,
  type DoctorStatus,
  formatDoctorReport,
} from "./doctor.ts";
export { type CliIdentity, cliVersion } from "./cli_version.ts";
export type { CliVersion } from "../../src/compat/cli_versions.ts";
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
export * from "./_moved.ts";
