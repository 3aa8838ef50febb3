// This module is browser compatible.
/*
 * What a transport that started `claude` tells the session about it
 * (`LaunchedCli`), and the refusals of a CLI whose own report disagrees.
 *
 * A transport that runs the CLI itself (the subprocess adapter) states, in
 * `info.cli`, the permission mode it asked for with `--permission-mode` and,
 * when it learned it, the CLI's version. The session compares the CLI's
 * first report of itself (its `initialize` reply, then the first
 * `system/init`) with it (`src/session/_cli_check.ts`). A CLI that runs in
 * another mode than the one asked for could run a tool that the host's
 * permission handler never sees: the session then ends with
 * `modeRefusal`'s error. A CLI below the supported window's floor gets
 * `floorRefusal`'s: from the transport (its `--version`) before the session
 * starts, else from the CLI's own report. A transport that states nothing
 * (scripted, replayed, remote) is not checked.
 *
 * `info.cli` (declared by `TransportInfo`) is read through `launchedCliOf`,
 * which keeps only well-formed fields: a third-party transport may set it.
 */

import { DuplexError } from "../errors.ts";
import { isRecord } from "../_values.ts";
import type { TransportInfo } from "../transport/transport.ts";
import { CLI_WINDOW, compareCliVersions, parseCliVersion } from "./cli_versions.ts";

/** What a transport that started the CLI asked of it and learned about it (`info.cli`). */
export interface LaunchedCli {
  /**
   * The permission mode the transport asked for (`--permission-mode`): the
   * session ends when the CLI reports another one before its first turn.
   */
  readonly permissionMode?: string;
  /** The CLI's version (`claude --version`), when the transport learned it. */
  readonly version?: string;
}

/**
 * Reads what a transport stated about the CLI it started.
 *
 * @param info The transport's info.
 * @returns Its `cli` field, or `undefined` when it states none.
 */
export function launchedCliOf(info: TransportInfo): LaunchedCli | undefined {
  const cli: unknown = info.cli;
  if (!isRecord(cli)) return undefined;
  return {
    ...(typeof cli.permissionMode === "string" && { permissionMode: cli.permissionMode }),
    ...(typeof cli.version === "string" && { version: cli.version }),
  };
}

/**
 * Whether two permission modes are the same: `"manual"` is the CLI's newer
 * name for `"default"` (asked for as `manual`, 2.1.300 reports `default`).
 *
 * @param a One mode.
 * @param b The other.
 * @returns True when they name the same mode.
 */
export function sameMode(a: string, b: string): boolean {
  return a === b || (a === "manual" ? "default" : a) === (b === "manual" ? "default" : b);
}

/**
 * The refusal of a CLI that runs in another permission mode than the one asked for.
 *
 * @param asked The modes asked for: the flag's first, then any the host set
 *   before the first turn (`setPermissionMode`, a claim).
 * @param reported The mode the CLI reports.
 * @param version The CLI's version, when known.
 * @param where Where the CLI reported it: `"initialize"` (its reply) or `"system/init"`.
 * @returns An `unsupported` error naming both modes and the version.
 */
export function modeRefusal(
  asked: readonly [string, ...string[]],
  reported: string,
  version: string | undefined,
  where: "initialize" | "system/init",
): DuplexError {
  const [flag, ...later] = asked;
  const also = later.length === 0
    ? ""
    : ` (then ${later.map((mode) => `"${mode}"`).join(", ")} before the first turn)`;
  const cli = version === undefined ? "claude (version unknown)" : `claude ${version}`;
  const source = where === "initialize" ? "its initialize reply" : "its system/init frame";
  return new DuplexError(
    "unsupported",
    `The session asked claude for permission mode "${flag}" (--permission-mode=${flag})${also}, ` +
      `and ${cli} reports "${reported}" in ${source}: in that mode a tool could run without ` +
      `the host's permission handler being asked, so the turn was interrupted and the session ` +
      `ended. Use a claude that honours --permission-mode (the library supports ` +
      `${CLI_WINDOW.floor} to ${CLI_WINDOW.newest}), and check the settings that set a mode ` +
      `(permissions.defaultMode, a managed policy)`,
    where === "initialize" ? { subtype: "initialize" } : {},
  );
}

/**
 * The refusal of a CLI below the supported window's floor.
 *
 * @param version The CLI's version, as it reported it.
 * @param what What cannot be done, for the message: `"start claude"`.
 * @returns An `unsupported` error naming the version and the floor, or
 *   `undefined` when the version is at or above the floor (or unreadable).
 */
export function floorRefusal(
  version: string | undefined,
  what = "start the session",
): DuplexError | undefined {
  const found = parseCliVersion(version);
  if (found === undefined || compareCliVersions(found, CLI_WINDOW.floor) >= 0) return undefined;
  return new DuplexError(
    "unsupported",
    `Cannot ${what}: claude ${found.text} is older than ${CLI_WINDOW.floor}, the oldest ` +
      `version this library supports (it is tested on ${CLI_WINDOW.floor} to ` +
      `${CLI_WINDOW.newest}); upgrade claude (npm install -g @anthropic-ai/claude-code)`,
  );
}
