// This module is browser compatible.
// deno-lint-ignore-file camelcase -- the claim_session fields are the wire protocol's
/**
 * Claiming a parked spare: what a claim can set ({@linkcode ClaimOptions}),
 * what it answers ({@linkcode ClaimResult}), the requests a claim sends
 * ({@linkcode sendClaim}), and how a refusal reads.
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
import { messageOf } from "../_values.ts";
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
  /** The model, set right after the claim (`set_model`, as the SDK sends it). */
  readonly model?: string;
  /**
   * The thinking-token budget (`null` clears it), set right after the claim
   * (`set_max_thinking_tokens`).
   */
  readonly maxThinkingTokens?: number | null;
  /**
   * A flag-tier settings overlay (for example `{ effortLevel: "high" }`),
   * applied as `applyFlagSettings` does, with the SDK's split: the keys that
   * decide what the claim starts (`disabledMcpjsonServers`, `enabledPlugins`,
   * everything but the six below) are written ahead of the claim, in an
   * `apply_flag_settings` sent before `claim_session`; `model`, `agent`,
   * `fastMode`, `permissions`, `availableModels` and `disableAutoMode`
   * follow it, in a second one. A refused overlay fails the claim
   * (`claim_refused`, `errorCode` `settings_not_applied`: close the
   * session). Keys that govern hooks (`hooks`, `disableAllHooks`,
   * `allowManagedHooksOnly`, `allowedHttpHookUrls`, `httpHookAllowedEnvVars`)
   * are refused before anything is sent (`invalid_argument`; the spare stays
   * parked): give them to the spare's own process options.
   */
  readonly settings?: Readonly<Record<string, unknown>>;
}

/** Settings keys a claim cannot apply (the SDK's list): hooks are fixed when the spare starts. */
export const CLAIM_HOOK_SETTINGS: readonly string[] = [
  "hooks",
  "disableAllHooks",
  "allowManagedHooksOnly",
  "allowedHttpHookUrls",
  "httpHookAllowedEnvVars",
];

/** Settings keys applied after the claim, in a second overlay (the SDK's split). */
const AFTER_CLAIM_SETTINGS: readonly string[] = [
  "model",
  "agent",
  "fastMode",
  "permissions",
  "availableModels",
  "disableAutoMode",
];

/**
 * Sends one control request of the session and resolves with its reply
 * payload (a session's `request`, its signal and timeout bound in).
 */
export type ClaimRequest = (subtype: string, fields: Record<string, unknown>) => Promise<unknown>;

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
 * @returns The `claim_session` request fields (`model`, `maxThinkingTokens`
 *   and `settings` are sent in requests of their own: {@linkcode sendClaim}).
 * @throws {TypeError} For a missing `cwd`, or a `model`, `maxThinkingTokens`
 *   or `settings` of the wrong type.
 * @throws {DuplexError} `invalid_argument` for settings keys that govern hooks.
 */
export function claimFields(claim: ClaimOptions): ClaimSessionRequest {
  if (typeof claim?.cwd !== "string" || claim.cwd === "") {
    throw new TypeError("Cannot claim a spare: cwd must be a non-empty string");
  }
  checkClaimExtras(claim, "Cannot claim a spare");
  const hooks = hookSettingsIn(claim.settings);
  if (hooks.length > 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot claim a spare with hook settings (${hooks.join(", ")}): they cannot be applied ` +
        "at claim; give them to the spare's process options (settings), where they are in " +
        "force before any hook. Nothing was sent: the spare can still be claimed without them",
    );
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
 * Sends a claim as the SDK does: the settings that decide what the claim
 * starts (an `apply_flag_settings` ahead of it), `claim_session`, then the
 * model (`set_model`), the thinking budget (`set_max_thinking_tokens`) and
 * the settings that follow the claim (a second `apply_flag_settings`), all
 * sent at once, in that order; then waits for every answer. Nothing is sent
 * when the claim's options are malformed.
 *
 * @example A claim with a model and settings, over a session's request
 * ```ts ignore
 * const reply = await sendClaim(
 *   { cwd: "/srv/alice", model: "haiku", settings: { effortLevel: "high" } },
 *   (subtype, fields) => session.request(subtype, fields, { timeoutMs: 10_000 }),
 * );
 * ```
 *
 * @param claim The claim.
 * @param request Sends one control request of the session.
 * @returns The `claim_session` reply.
 * @throws {TypeError} For malformed options ({@linkcode claimFields}).
 * @throws {DuplexError} `invalid_argument` for hook settings (nothing sent);
 *   `claim_refused` for a refused claim (the spare stays parked), or, once
 *   claimed, for refused settings (`errorCode` `settings_not_applied`) or a
 *   refused model or thinking budget (`option_not_applied`): close the
 *   session then; `timeout`, `closed`, `process_exited`.
 */
export async function sendClaim(
  claim: ClaimOptions,
  request: ClaimRequest,
): Promise<ClaimSessionResponse> {
  const fields = claimFields(claim);
  const { ahead, after } = splitSettings(claim.settings);
  const settings: Promise<unknown>[] = [];
  if (ahead !== undefined) settings.push(request("apply_flag_settings", { settings: ahead }));
  const claimed = request("claim_session", { ...fields });
  const options: [string, Promise<unknown>][] = [];
  if (claim.model !== undefined) {
    options.push(["model", request("set_model", { model: claim.model })]);
  }
  if (claim.maxThinkingTokens !== undefined) {
    const max_thinking_tokens = claim.maxThinkingTokens;
    options.push([
      "maxThinkingTokens",
      request("set_max_thinking_tokens", { max_thinking_tokens }),
    ]);
  }
  if (after !== undefined) settings.push(request("apply_flag_settings", { settings: after }));
  for (const sent of [...settings, ...options.map(([, sent]) => sent)]) sent.catch(() => {});
  let reply: ClaimSessionResponse;
  try {
    reply = await claimed as ClaimSessionResponse;
  } catch (error) {
    throw claimFailure(error);
  }
  const refused = (await Promise.allSettled(settings)).find((r) => r.status === "rejected");
  if (refused !== undefined) {
    throw notApplied(
      "settings_not_applied",
      `its settings: ${messageOf(refused.reason)}`,
      refused.reason,
    );
  }
  const failed = (await Promise.allSettled(options.map(([, sent]) => sent)))
    .flatMap((r, i) => r.status === "rejected" ? [[options[i]![0], r.reason] as const] : []);
  if (failed.length > 0) {
    const what = failed.map(([name, reason]) => `${name}: ${messageOf(reason)}`).join("; ");
    throw notApplied("option_not_applied", what, failed[0]![1]);
  }
  return reply;
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

function notApplied(code: string, what: string, cause: unknown): DuplexError {
  return new DuplexError(
    "claim_refused",
    `The spare was claimed but refused ${what} (${code}); close the session and start ` +
      "another without them",
    { cause, errorCode: code },
  );
}

/** The overlay split as the SDK splits it: what goes ahead of the claim, what follows it. */
function splitSettings(
  settings: Readonly<Record<string, unknown>> | undefined,
): { ahead?: Record<string, unknown>; after?: Record<string, unknown> } {
  if (settings === undefined) return {};
  const ahead: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    (AFTER_CLAIM_SETTINGS.includes(key) ? after : ahead)[key] = value;
  }
  return {
    ...(Object.keys(ahead).length > 0 && { ahead }),
    ...(Object.keys(after).length > 0 && { after }),
  };
}

/**
 * Checks a claim's `model`, `maxThinkingTokens` and `settings` (the pool
 * checks a conversation's with it, before anything waits).
 *
 * @param claim The fields.
 * @param what The start of a message ("Cannot claim a spare").
 * @throws {TypeError} For a field of the wrong type.
 */
export function checkClaimExtras(
  claim: Pick<ClaimOptions, "model" | "maxThinkingTokens" | "settings">,
  what: string,
): void {
  const { model, maxThinkingTokens, settings } = claim;
  if (model !== undefined && (typeof model !== "string" || model === "")) {
    throw new TypeError(`${what}: model must be a non-empty string`);
  }
  if (
    maxThinkingTokens !== undefined && maxThinkingTokens !== null &&
    (!Number.isSafeInteger(maxThinkingTokens) || maxThinkingTokens < 0)
  ) {
    throw new TypeError(
      `${what}: maxThinkingTokens must be an integer >= 0 or null, got ${
        String(maxThinkingTokens)
      }`,
    );
  }
  if (settings === undefined) return;
  if (typeof settings !== "object" || settings === null || Array.isArray(settings)) {
    throw new TypeError(`${what}: settings must be an object of settings`);
  }
}

/**
 * The keys of `settings` that govern hooks, which a claim cannot apply
 * ({@linkcode CLAIM_HOOK_SETTINGS}).
 *
 * @param settings A settings overlay.
 * @returns Those keys it sets, in the list's order.
 */
export function hookSettingsIn(settings: Readonly<Record<string, unknown>> | undefined): string[] {
  if (typeof settings !== "object" || settings === null) return [];
  return CLAIM_HOOK_SETTINGS.filter((key) => settings[key] !== undefined);
}
