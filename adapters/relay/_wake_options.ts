/**
 * The options of a resume in a new process (`claude --resume`), whether the
 * conversation was hibernated on this relay or recorded in the shared store:
 * its spawn request checked again against the RESUMING credential's policy,
 * every time, so that a narrower token of the same owner gets what that
 * token allows or a refusal, never what the first token had.
 *
 * @module
 */

import { isAbsolute, relative, resolve, sep } from "node:path";
import type { SpawnRequest } from "../../src/wire/wire.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { resumeOptions } from "./_hibernation.ts";
import { type CheckedPolicy, Refusal, resolveCwd, spawnOptions } from "./_policy.ts";

/** What a resume in a new process continues. */
export interface Resumed {
  /** The spawn request the conversation was started with. */
  readonly spawn: SpawnRequest;
  /** The CLI's session id (`--resume`). */
  readonly cliSessionId: string;
  /**
   * The folder it ran in, relative to the workspace (`""`: the workspace);
   * undefined for a record written before relays kept it (then the spawn
   * request's `cwd` is resolved again in the credential's folder).
   */
  readonly cwd: string | undefined;
}

/** The relay's spawn settings (its `Config`). */
export interface SpawnSettings {
  readonly cli: SubprocessOptions;
  /** The real path of the workspace. */
  readonly workspace: string;
}

/**
 * Checks a conversation's spawn request again against the resuming
 * credential's policy, as a new spawn is checked (what the policy does not
 * allow is refused, `maxTurns` it does not name is its own), and keeps its
 * folder, which must be inside the credential's folder (a scoped token's
 * `cwd`).
 *
 * @param resumed The conversation.
 * @param policy The resuming credential's policy.
 * @param settings The relay's base options and workspace.
 * @returns The options of `claude --resume`.
 * @throws {Refusal} `not_permitted` when the policy no longer allows the spawn request or the
 *   folder; `protocol` for a malformed stored request.
 */
export async function wakeOptions(
  resumed: Resumed,
  policy: CheckedPolicy,
  settings: SpawnSettings,
): Promise<SubprocessOptions> {
  const { spawn, cliSessionId, cwd } = resumed;
  const { cli, workspace } = settings;
  if (cwd === undefined) {
    return resumeOptions(await spawnOptions(spawn, policy, cli, workspace), cliSessionId);
  }
  const { cwd: _asked, ...rest } = spawn;
  const checked = await spawnOptions(rest, policy, cli, workspace);
  // Without a cwd of its own, the request runs in the credential's folder: the root it allows.
  const root = checked.cwd as string;
  const within = relative(root, resolve(workspace, cwd));
  if (isAbsolute(within) || within === ".." || within.startsWith(".." + sep)) {
    throw new Refusal(
      "not_permitted",
      `Cannot resume the session: it runs in the folder ${
        JSON.stringify(cwd.slice(0, 80) || ".")
      } of the workspace, which this credential's cwd does not allow`,
    );
  }
  const real = await resolveCwd(root, within, "the session's folder");
  return resumeOptions({ ...checked, cwd: real }, cliSessionId);
}

/**
 * The folder a session runs in, relative to the workspace (what
 * {@linkcode Resumed.cwd} keeps).
 *
 * @param options The options its CLI started with.
 * @param workspace The real path of the workspace.
 */
export function workspaceFolder(options: SubprocessOptions, workspace: string): string | undefined {
  return typeof options.cwd === "string" ? relative(workspace, options.cwd) : undefined;
}
