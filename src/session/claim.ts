// This module is browser compatible.
// deno-lint-ignore-file camelcase -- the claim_session fields are the wire protocol's
/**
 * Claiming a parked spare: what a claim can set ({@linkcode ClaimOptions}),
 * what it answers ({@linkcode ClaimResult}), and how a refusal reads.
 *
 * @module
 */

import { DuplexError, isDuplexError } from "../errors.ts";
import type { PermissionMode } from "../protocol/control.ts";
import type {
  AgentDefinition,
  ClaimSessionRequest,
  ClaimSessionResponse,
} from "../protocol/control_requests.ts";
import { readSessionInfo, type SessionInfo } from "./session_info.ts";

/**
 * The per-session half of a CLI's options, given when a parked spare (a CLI
 * started with `--await-claim`, see the subprocess option `awaitClaim`) is
 * bound to its conversation. Everything else (binary, settings sources,
 * tools, hooks, MCP servers, the environment read at start-up) was fixed
 * when the spare was started. The names are the official SDK's `ClaimOptions`.
 */
export interface ClaimOptions {
  /** The session's working directory (absolute, or `~/…`); a missing one refuses the claim. */
  readonly cwd: string;
  /**
   * Environment additions: only `CLAUDE_CODE_OAUTH_TOKEN`,
   * `CLAUDE_CODE_SESSION_ACCESS_TOKEN` and `CLAUDE_CODE_HOST_SESSION_ID` are
   * accepted; any other key refuses the claim (`env_key_not_claimable`).
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra directories the session may access, as `--add-dir`. */
  readonly additionalDirectories?: readonly string[];
  /** The permission mode, part of the claim itself: one the spare cannot take refuses it. */
  readonly permissionMode?: PermissionMode;
  /** Appended to the system prompt. */
  readonly appendSystemPrompt?: string;
  /** The session's title. */
  readonly title?: string;
  /** Sub-agents, by name. */
  readonly agents?: Readonly<Record<string, AgentDefinition>>;
  /** The host's attestation that the user accepted a trust dialog for `directory`. */
  readonly workspaceTrust?: { readonly accepted: boolean; readonly directory: string };
}

/** What a successful claim answers. */
export interface ClaimResult {
  /** The canonical working directory the session now runs in. */
  readonly cwd: string;
  /** The session id the claimed process registered. */
  readonly sessionId: string;
  /** How long the spare was parked, in milliseconds (when the CLI says). */
  readonly parkedMs: number | undefined;
  /** What `initialize` would answer in the claimed folder (also `session.info` from now on). */
  readonly info: SessionInfo | undefined;
}

/**
 * The wire fields of a claim.
 *
 * @param claim The claim.
 * @returns The `claim_session` request fields.
 */
export function claimFields(claim: ClaimOptions): ClaimSessionRequest {
  if (typeof claim?.cwd !== "string" || claim.cwd === "") {
    throw new TypeError("Cannot claim a spare: cwd must be a non-empty string");
  }
  const fields: ClaimSessionRequest = { cwd: claim.cwd, include_initialize: true };
  if (claim.env !== undefined) fields.env = { ...claim.env };
  if (claim.additionalDirectories !== undefined) {
    fields.additional_directories = [...claim.additionalDirectories];
  }
  if (claim.permissionMode !== undefined) fields.permission_mode = claim.permissionMode;
  if (claim.appendSystemPrompt !== undefined) {
    fields.append_system_prompt = claim.appendSystemPrompt;
  }
  if (claim.title !== undefined) fields.title = claim.title;
  if (claim.agents !== undefined) fields.agents = { ...claim.agents };
  if (claim.workspaceTrust !== undefined) fields.workspace_trust = { ...claim.workspaceTrust };
  return fields;
}

/**
 * Reads the reply of a successful claim.
 *
 * @param reply The `claim_session` reply.
 * @returns The claim's result.
 */
export function readClaim(reply: ClaimSessionResponse): ClaimResult {
  if (typeof reply.session_id !== "string" || typeof reply.cwd !== "string") {
    throw new DuplexError(
      "protocol",
      "The CLI accepted the claim without naming its session id and folder",
      { subtype: "claim_session" },
    );
  }
  const initialize = reply.initialize;
  return {
    cwd: reply.cwd,
    sessionId: reply.session_id,
    parkedMs: typeof reply.parked_ms === "number" ? reply.parked_ms : undefined,
    info: typeof initialize === "object" && initialize !== null
      ? readSessionInfo(initialize as unknown as Record<string, unknown>)
      : undefined,
  };
}

/**
 * A refused claim as a `claim_refused` DuplexError whose `errorCode` is the
 * CLI's reason token (the text before the first `:` of its message); other
 * failures (timeout, exit) pass through unchanged.
 *
 * @param error What the claim request rejected with.
 * @returns The error to throw.
 */
export function claimFailure(error: unknown): unknown {
  if (!isDuplexError(error, "control_failed")) return error;
  // 2.1.332 sends the reason token as error_code; older builds only begin the message with it
  // (`cwd_not_found: the claim cwd …`), which the control channel quotes.
  const reason = error.errorCode ?? /answered "([a-z_]+)(?::|")/.exec(error.message)?.[1] ??
    "refused";
  return new DuplexError("claim_refused", `The spare refused the claim: ${error.message}`, {
    cause: error,
    subtype: "claim_session",
    errorCode: reason,
    ...(error.requestId ? { requestId: error.requestId } : {}),
  });
}
