/**
 * The environment of the relay's CLIs: never the relay's own. Of the host's
 * environment only an allow-list is passed on (`PATH`, the `ANTHROPIC_*` and
 * `CLAUDE_*` variables the CLI reads, less those that name the relay's own
 * folders or session, and `HOME` when the tenants share the relay's); the
 * operator's `cli.env` replaces that list, `cli.extraEnv` goes over it. The
 * relay's tokens, secrets, database URLs and whatever else its environment
 * holds never reach a child.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";
import { STRIPPED_ENV, type SubprocessOptions } from "../subprocess/mod.ts";

/** The host variables passed on by name. */
export const HOST_ENV_NAMES: readonly string[] = ["PATH"];
/** The host variables passed on by prefix (less {@linkcode HOST_ENV_NEVER}). */
export const HOST_ENV_PREFIXES: readonly string[] = ["ANTHROPIC_", "CLAUDE_"];
/**
 * Host variables of those prefixes that are never passed on: the subprocess
 * adapter's stripped ones, the relay's own binary, and those that tie the CLI
 * to the relay's own Claude Code session (an env file its Bash tool would
 * source, an IDE's port).
 */
export const HOST_ENV_NEVER: readonly string[] = [
  ...STRIPPED_ENV,
  "CLAUDE_CLI",
  "CLAUDE_ENV_FILE",
  "CLAUDE_CODE_SSE_PORT",
];
/**
 * The variables that name the CLI's own folders: each owner's with tenancy
 * `"per-owner"` (never the relay's), the relay's with `"shared"`.
 */
export const TENANT_ENV: readonly string[] = [
  "HOME",
  "CLAUDE_CONFIG_DIR",
  "TMPDIR",
  "CLAUDE_CODE_TMPDIR",
];

/**
 * The environment every CLI of the relay starts from, read once: `cli.env`
 * if given (it replaces the host's, as in `subprocess()`), else nothing with
 * the deprecated `cli.clearEnv`, else the allow-listed host variables; then
 * `cli.extraEnv` over it. With `perOwner`, the host's {@linkcode TENANT_ENV}
 * are left out (each owner's folders take their place).
 *
 * @param cli The relay's subprocess options.
 * @param perOwner Whether each owner gets folders of its own.
 * @returns The variables.
 * @throws {DuplexError} `not_permitted` when the host's environment cannot be read.
 */
export function relayCliEnv(cli: SubprocessOptions, perOwner: boolean): Record<string, string> {
  let env: Record<string, string> = {};
  if (cli.env !== undefined) {
    for (const [name, value] of Object.entries(cli.env)) {
      if (value !== undefined) env[name] = value;
    }
  } else if (cli.clearEnv !== true) {
    env = allowListed(readHostEnv(), perOwner);
  }
  for (const [name, value] of Object.entries(cli.extraEnv ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * The allow-listed part of an environment.
 *
 * @param host The host's variables.
 * @param perOwner Whether {@linkcode TENANT_ENV} are left out (else `HOME` is kept too).
 * @returns The variables passed on.
 */
export function allowListed(
  host: Readonly<Record<string, string>>,
  perOwner: boolean,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    const listed = HOST_ENV_NAMES.includes(name) || (!perOwner && name === "HOME") ||
      HOST_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (!listed || HOST_ENV_NEVER.includes(name)) continue;
    if (perOwner && TENANT_ENV.includes(name)) continue;
    env[name] = value;
  }
  return env;
}

function readHostEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      throw new DuplexError(
        "not_permitted",
        "Cannot serve the relay: passing PATH and the ANTHROPIC_* / CLAUDE_* variables on to " +
          "the CLIs needs --allow-env; run again with --allow-env, or pass cli.env: the " +
          "variables the CLIs get",
        { cause: error },
      );
    }
    throw error;
  }
}
