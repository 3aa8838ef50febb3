/**
 * The relay's spawn policy: which {@linkcode SpawnRequest} a client may make,
 * and how an allowed request becomes the options of one `claude` subprocess.
 *
 * @module
 */

import { DuplexError } from "../../src/errors.ts";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { CLOSE, Refusal, type RelayErrorKind } from "../../src/wire/wire.ts";
import { parseSpawnRequest, SPAWN_OPTIONS } from "../../src/wire/wire_parse.ts";
import type { RelayTokenPolicy } from "../../src/token/relay_token.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { DEFAULT_PERMISSION_MODES, type RelayPolicy } from "../../src/token/relay_policy.ts";

export { Refusal };
export type { RelayPolicy };

/** The policy with its defaults filled in (the relay's, or one narrowed by a scoped token). */
export interface CheckedPolicy {
  /** The models allowed; undefined: any name matching the model name pattern. */
  readonly models: readonly string[] | undefined;
  readonly permissionModes: readonly string[];
  readonly maxTurns: number | undefined;
  readonly allowResume: boolean;
  readonly allowPartialMessages: boolean;
  readonly exposePid: boolean;
  /** A scoped token's folder (relative to the workspace) that confines its sessions. */
  readonly cwd: string | undefined;
}

/** A model name a client may ask for when the policy lists none: no spaces, no leading dash. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A CLI session id or name to resume: no spaces, no leading dash. */
const RESUME_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$/;

/** The standard WebSocket close code of a server-side failure. */
const INTERNAL_ERROR = 1011;

/**
 * The WebSocket close code that goes with a refusal's kind.
 *
 * @param kind The wire error kind.
 * @returns The close code.
 */
export function closeCodeFor(kind: RelayErrorKind): number {
  if (kind === "protocol") return CLOSE.protocol;
  if (kind === "unknown_session" || kind === "resume_gap") return CLOSE.cannotResume;
  if (kind === "spawn_failed") return INTERNAL_ERROR;
  if (kind === "too_large") return CLOSE.tooBig;
  return CLOSE.policy;
}

/**
 * Checks a policy given to `serveRelay` and fills in its defaults.
 *
 * @param policy The policy option.
 * @returns The checked policy.
 */
export function checkPolicy(policy: RelayPolicy | undefined): CheckedPolicy {
  if (policy === undefined) policy = {};
  if (typeof policy !== "object" || policy === null) {
    throw new TypeError("Cannot serve the relay: policy must be an object");
  }
  return {
    models: policy.models === undefined ? undefined : strings("policy.models", policy.models),
    permissionModes: policy.permissionModes === undefined
      ? DEFAULT_PERMISSION_MODES
      : strings("policy.permissionModes", policy.permissionModes),
    maxTurns: policy.maxTurns === undefined ? undefined : positiveInteger(policy.maxTurns),
    allowResume: flag("policy.allowResume", policy.allowResume, true),
    allowPartialMessages: flag("policy.allowPartialMessages", policy.allowPartialMessages, true),
    exposePid: flag("policy.exposePid", policy.exposePid, false),
    cwd: undefined,
  };
}

/**
 * Narrows the relay's policy by a scoped token's: lists are intersected,
 * `maxTurns` is the smaller, a flag holds only when both allow it. A token
 * can never widen the relay's policy.
 *
 * @param relay The relay's checked policy.
 * @param token The token's (checked) policy claim.
 * @returns The policy the token's holder gets.
 */
export function narrowPolicy(relay: CheckedPolicy, token: RelayTokenPolicy): CheckedPolicy {
  const relayModels = relay.models;
  const models = token.models === undefined
    ? relayModels
    : token.models.filter((model) =>
      relayModels === undefined ? MODEL_NAME.test(model) : relayModels.includes(model)
    );
  const modes = token.permissionModes;
  const turns = [relay.maxTurns, token.maxTurns].filter((n) => n !== undefined);
  return {
    models,
    permissionModes: modes === undefined
      ? relay.permissionModes
      : relay.permissionModes.filter((mode) => modes.includes(mode)),
    maxTurns: turns.length === 0 ? undefined : Math.min(...turns),
    allowResume: relay.allowResume && token.allowResume !== false,
    allowPartialMessages: relay.allowPartialMessages && token.allowPartialMessages !== false,
    exposePid: relay.exposePid && token.exposePid !== false,
    cwd: token.cwd,
  };
}

/**
 * Checks a client's spawn request against the policy and builds the
 * subprocess options for it.
 *
 * @param request The `spawn` field of the client's hello (unchecked).
 * @param policy The relay's policy.
 * @param base The relay's base subprocess options.
 * @param workspace The real path of the workspace root.
 * @returns The options to spawn with.
 * @throws {Refusal} When the request is malformed or not allowed.
 */
export async function spawnOptions(
  request: unknown,
  policy: CheckedPolicy,
  base: SubprocessOptions,
  workspace: string,
): Promise<SubprocessOptions> {
  const parsed = parseSpawnRequest(request ?? {});
  if (!parsed.ok) throw new Refusal("protocol", parsed.reason);
  const r = parsed.message;
  for (const key of Object.keys(r)) {
    if (!SPAWN_OPTIONS.includes(key)) {
      throw new Refusal("not_permitted", `The spawn option ${key} is not supported`);
    }
  }
  const options: Record<string, unknown> = { ...base };

  if (r.model !== undefined) {
    const model = r.model;
    const allowed = policy.models === undefined
      ? MODEL_NAME.test(model)
      : policy.models.includes(model);
    if (!allowed) refuse("model", model);
    options.model = model;
  }
  if (r.permissionMode !== undefined) {
    if (!policy.permissionModes.includes(r.permissionMode)) {
      refuse("permissionMode", r.permissionMode);
    }
    options.permissionMode = r.permissionMode;
    // Listed in the relay's policy: the operator means it (the subprocess adapter asks for this).
    if (r.permissionMode === "bypassPermissions") options.allowDangerouslySkipPermissions = true;
  }
  if (r.includePartialMessages !== undefined) {
    if (r.includePartialMessages && !policy.allowPartialMessages) {
      refuse("includePartialMessages", true);
    }
    options.includePartialMessages = r.includePartialMessages;
  }
  if (r.maxTurns !== undefined) {
    if (policy.maxTurns !== undefined && r.maxTurns > policy.maxTurns) {
      refuse("maxTurns", r.maxTurns);
    }
    options.maxTurns = r.maxTurns;
  } else if (policy.maxTurns !== undefined) {
    const baseTurns = base.maxTurns;
    options.maxTurns = baseTurns !== undefined && baseTurns < policy.maxTurns
      ? baseTurns
      : policy.maxTurns;
  }
  if (r.resume !== undefined) {
    if (!policy.allowResume) refuse("resume", r.resume);
    if (!RESUME_ID.test(r.resume)) refuse("resume", r.resume);
    options.resume = r.resume;
  }
  const root = policy.cwd === undefined
    ? workspace
    : await resolveCwd(workspace, policy.cwd, "the token's cwd");
  options.cwd = await resolveCwd(root, r.cwd);
  return options as SubprocessOptions;
}

/**
 * Resolves a client's working directory inside the workspace, following
 * symbolic links, and refuses one outside of it.
 *
 * @param workspace The real path of the workspace root (or of a token's folder in it).
 * @param cwd The client's relative path, if any.
 * @param name What the path is, for the refusal.
 * @returns The real path to run in.
 */
export async function resolveCwd(
  workspace: string,
  cwd: string | undefined,
  name = "cwd",
): Promise<string> {
  if (cwd === undefined || cwd === "" || cwd === ".") return workspace;
  if (cwd.includes("\0") || isAbsolute(cwd) || /^[A-Za-z]:/.test(cwd) || cwd.startsWith("\\")) {
    refuse(name, cwd, "it must be a path relative to the workspace");
  }
  const target = resolve(workspace, cwd);
  if (!inside(workspace, target)) refuse(name, cwd, "it leaves the workspace");
  let real: string;
  try {
    real = await Deno.realPath(target);
  } catch {
    refuse(name, cwd, "no such folder in the workspace");
  }
  if (!inside(workspace, real)) refuse(name, cwd, "it leaves the workspace");
  return real;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(".." + sep));
}

function refuse(name: string, value: unknown, why = "the relay's policy does not allow it"): never {
  const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 80)) : String(value);
  throw new Refusal("not_permitted", `Cannot spawn with ${name} ${shown}: ${why}`);
}

function strings(name: string, value: unknown): readonly string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
    throw new TypeError(`Cannot serve the relay: ${name} must be an array of strings`);
  }
  return [...value];
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") {
    throw new TypeError(`Cannot serve the relay: ${name} must be a boolean`);
  }
  return value;
}

function positiveInteger(value: unknown): number {
  if (typeof value !== "number") {
    throw new TypeError("Cannot serve the relay: policy.maxTurns must be a number");
  }
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot serve the relay: policy.maxTurns must be a positive integer, got ${value}`,
    );
  }
  return value;
}
