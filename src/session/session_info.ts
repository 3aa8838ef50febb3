// This module is browser compatible.
/**
 * {@linkcode SessionInfo}: what the CLI tells about itself in its answer to
 * `initialize`.
 *
 * @module
 */

import type { PermissionMode } from "../protocol/control.ts";
import type {
  InitializeResponse,
  ModelInfo,
  SlashCommandInfo,
} from "../protocol/control_requests.ts";
import { isRecord } from "../_values.ts";

/** The CLI's description of the session, from its `initialize` reply. */
export interface SessionInfo {
  /** Slash commands available. */
  readonly commands: readonly SlashCommandInfo[];
  /** Sub-agents available, by name. */
  readonly agents: readonly string[];
  /** Models the CLI offers. */
  readonly models: readonly ModelInfo[];
  /** How the CLI authenticates. */
  readonly account: Readonly<Record<string, unknown>>;
  /** The CLI's process id, as it reports it. */
  readonly pid: number | undefined;
  /** The CLI's version, for example `"2.1.332"`. */
  readonly version: string | undefined;
  /** The permission mode in force. */
  readonly permissionMode: PermissionMode | undefined;
  /** Capability flags the CLI reports. */
  readonly capabilities: readonly string[];
  /** The output style in force. */
  readonly outputStyle: string | undefined;
  /** The reply as the CLI sent it. */
  readonly raw: Readonly<InitializeResponse>;
}

/**
 * Reads an `initialize` reply; missing fields become empty values.
 *
 * @param raw The reply payload.
 * @returns The session info.
 *
 * @example Read a reply
 * ```ts
 * import { readSessionInfo } from "./session_info.ts";
 * import assert from "node:assert/strict";
 *
 * const info = readSessionInfo({ claude_code_version: "2.1.332", pid: 42, agents: [{ name: "Plan" }] });
 * assert.equal(info.version, "2.1.332");
 * assert.deepEqual(info.agents, ["Plan"]);
 * assert.deepEqual(info.commands, []);
 * ```
 */
export function readSessionInfo(raw: Record<string, unknown>): SessionInfo {
  const reply = raw as InitializeResponse;
  return {
    commands: Array.isArray(reply.commands)
      ? reply.commands.filter((c) => isRecord(c) && typeof c.name === "string")
      : [],
    agents: Array.isArray(reply.agents)
      ? reply.agents.flatMap((a) => isRecord(a) && typeof a.name === "string" ? [a.name] : [])
      : [],
    models: Array.isArray(reply.models)
      ? reply.models.filter((m) => isRecord(m) && typeof m.value === "string")
      : [],
    account: isRecord(reply.account) ? reply.account : {},
    pid: typeof reply.pid === "number" ? reply.pid : undefined,
    version: typeof reply.claude_code_version === "string" ? reply.claude_code_version : undefined,
    permissionMode: typeof reply.current_permission_mode === "string"
      ? reply.current_permission_mode
      : undefined,
    capabilities: Array.isArray(reply.capabilities)
      ? reply.capabilities.filter((c) => typeof c === "string")
      : [],
    outputStyle: typeof reply.output_style === "string" ? reply.output_style : undefined,
    raw: reply,
  };
}
