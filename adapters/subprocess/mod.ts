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
 * - closes the CLI when the host program gets SIGINT/SIGTERM/SIGHUP or
 *   exits (see `hostSignal`).
 *
 * Permissions: `--allow-run=<path of claude>` and `--allow-env`. Full
 * `--allow-run` lets `close()` signal the CLI's whole process group, and
 * `--allow-all` also lets it find the CLI's tool processes in `/proc`.
 * Without a permission the error (kind `not_permitted`) names the flag.
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
export { resolveBinary, type ResolveBinaryOptions } from "./_find_binary.ts";
