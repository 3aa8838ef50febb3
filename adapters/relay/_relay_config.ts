/**
 * The checks of the relay's options, and the settings they resolve to. The
 * check spawns nothing and builds nothing it throws away (the base CLI
 * options go through the subprocess adapter's pure check); what it builds
 * is what the relay keeps in the result: the token verifier (its keys
 * imported once) and the tenants (the host's environment read once).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { checkMs } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { checkSubprocessOptions } from "../subprocess/subprocess_options.ts";
import { checkMaxLifetime, RelayTokenVerifier } from "../../src/token/verify_relay_token.ts";
import type { TelemetryOptions } from "../../src/telemetry/telemetry_options.ts";
import { checkTelemetry } from "../../src/telemetry/_check_telemetry.ts";
import { type CheckedPolicy, checkPolicy } from "./_policy.ts";
import type { MirrorEvent } from "../../src/store/mirror_target.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import * as defaults from "./relay_options.ts";
import { relayCliEnv } from "./_cli_env.ts";
import { checkTenancy, Tenants } from "./_tenancy.ts";
import { checkHealth, type HealthAccess } from "./_health.ts";
import type { RelayOptions } from "./relay_options.ts";

/** The relay's options, checked, with their defaults applied. */
export interface Config {
  readonly tokens: readonly string[];
  /** The checker of scoped tokens, its keys imported once (none without secrets). */
  readonly verifier: RelayTokenVerifier | undefined;
  /** The allowed `Origin` values; undefined: any. */
  readonly allowedOrigins: ReadonlySet<string> | undefined;
  /** Who may read `/health`. */
  readonly health: HealthAccess;
  readonly hostname: string;
  readonly port: number;
  readonly cli: SubprocessOptions;
  readonly workspace: string;
  /** Where each owner's CLIs run, and with what environment (`tenancy`). */
  readonly tenants: Tenants;
  readonly policy: CheckedPolicy;
  readonly graceMs: number;
  readonly bufferBytes: number;
  readonly maxSessions: number;
  readonly maxHibernated: number;
  readonly maxSessionsPerOwner: number;
  readonly maxHibernatedPerOwner: number;
  readonly heartbeatMs: number;
  readonly helloTimeoutMs: number;
  readonly maxFrameBytes: number;
  readonly maxPendingInputBytes: number;
  readonly maxPendingConnections: number;
  readonly telemetry: TelemetryOptions | undefined;
  readonly signal: AbortSignal | undefined;
  /** The shared store (the relay's option, else the CLI options'). */
  readonly sessionStore: SessionStore | undefined;
  readonly projectKey: string | undefined;
  readonly storeTimeoutMs: number;
  readonly onMirror: ((event: MirrorEvent) => void) | undefined;
}

/**
 * Checks the options of `serveRelay()` and applies their defaults.
 *
 * @param options The options as given.
 * @returns The settings.
 * @throws {DuplexError} `invalid_argument` for an unusable value (no tokens, a missing workspace).
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a `…Ms` option out of range, or a secret shorter than 32 bytes.
 */
/** The relay's sessions' `mirror.maxCatchUpDelayMs` unless its `cli.mirror` sets it. */
const RELAY_MAX_CATCH_UP_DELAY_MS = 5_000;

export function checkOptions(options: RelayOptions): Config {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Cannot serve the relay: options must be an object");
  }
  const tokens = options.tokens ?? [];
  if (!Array.isArray(tokens) || tokens.some((token) => typeof token !== "string")) {
    throw new TypeError("Cannot serve the relay: tokens must be an array of strings");
  }
  if (tokens.some((token) => token.length === 0)) throw invalid("tokens must hold no empty token");
  const secrets = options.secrets ?? [];
  if (!Array.isArray(secrets)) {
    throw new TypeError("Cannot serve the relay: secrets must be an array of strings");
  }
  // Checks them (one or two, each of 32 bytes at least) and imports their keys.
  const maxLifetime = checkMaxLifetime(
    options.maxTokenLifetimeSeconds,
    "Cannot serve the relay: maxTokenLifetimeSeconds",
  );
  const verifier = secrets.length === 0
    ? undefined
    : new RelayTokenVerifier(secrets, "Cannot serve the relay", maxLifetime);
  if (tokens.length === 0 && secrets.length === 0) {
    throw invalid(
      "pass tokens (static bearer tokens), secrets (for scoped tokens from mintRelayToken), " +
        "or both",
    );
  }
  const hostname = options.hostname ?? "127.0.0.1";
  if (typeof hostname !== "string" || hostname === "") {
    throw new TypeError("Cannot serve the relay: hostname must be a non-empty string");
  }
  const port = options.port ?? 0;
  if (typeof port !== "number") {
    throw new TypeError("Cannot serve the relay: port must be a number");
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw invalid(`port must be an integer from 0 to 65535, got ${port}`);
  }
  const given = options.cli ?? {};
  if (typeof given !== "object" || given === null) {
    throw new TypeError("Cannot serve the relay: cli must be an object of subprocess options");
  }
  const { sessionStore, projectKey } = checkStore(options, given);
  // A store behind catches up within seconds of its return: a client resuming the conversation
  // on another relay waits for it (`_store_wake.ts`, assertStored).
  const cli: SubprocessOptions = sessionStore === undefined ? given : {
    ...given,
    sessionStore,
    ...(projectKey === undefined ? {} : { projectKey }),
    mirror: { maxCatchUpDelayMs: RELAY_MAX_CATCH_UP_DELAY_MS, ...given.mirror },
  };
  // Checks the base options now (pure: spawns nothing, builds nothing); each session's own
  // options (the base with what its spawn request adds) are checked when it starts.
  checkSubprocessOptions(cli);
  const tenancy = checkTenancy(options.tenancy, cli);
  const workspace = checkWorkspace(options.workspace);
  // The host's environment is read here, once: the CLIs get only its allow-listed part.
  const tenants = new Tenants(tenancy, workspace, cli, relayCliEnv(cli, tenancy === "per-owner"));
  const limits = checkLimits(options, tokens.length === 1 && verifier === undefined);
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError("Cannot serve the relay: signal must be an AbortSignal");
  }
  return {
    tokens: [...tokens],
    verifier,
    allowedOrigins: checkOrigins(options.allowedOrigins),
    health: checkHealth(options.health),
    hostname,
    port,
    cli,
    workspace,
    tenants,
    policy: checkPolicy(options.policy),
    graceMs: milliseconds("graceMs", options.graceMs, defaults.DEFAULT_GRACE_MS, 0),
    bufferBytes: count("bufferBytes", options.bufferBytes, defaults.DEFAULT_BUFFER_BYTES),
    ...limits,
    heartbeatMs: milliseconds("heartbeatMs", options.heartbeatMs, defaults.DEFAULT_HEARTBEAT_MS, 1),
    helloTimeoutMs: milliseconds(
      "helloTimeoutMs",
      options.helloTimeoutMs,
      defaults.DEFAULT_HELLO_TIMEOUT_MS,
      1,
    ),
    maxFrameBytes: count("maxFrameBytes", options.maxFrameBytes, defaults.DEFAULT_MAX_FRAME_BYTES),
    maxPendingInputBytes: count(
      "maxPendingInputBytes",
      options.maxPendingInputBytes,
      defaults.DEFAULT_MAX_PENDING_INPUT_BYTES,
    ),
    maxPendingConnections: count(
      "maxPendingConnections",
      options.maxPendingConnections,
      defaults.DEFAULT_MAX_PENDING_CONNECTIONS,
    ),
    telemetry: checkTelemetry(options.telemetry, "Cannot serve the relay"),
    signal,
    sessionStore,
    projectKey,
    storeTimeoutMs: milliseconds(
      "storeTimeoutMs",
      options.storeTimeoutMs,
      defaults.DEFAULT_STORE_TIMEOUT_MS,
      1,
    ),
    onMirror: checkOnMirror(options.onMirror),
  };
}

function checkStore(
  options: RelayOptions,
  cli: SubprocessOptions,
): { sessionStore: SessionStore | undefined; projectKey: string | undefined } {
  const sessionStore = options.sessionStore ?? cli.sessionStore;
  if (
    sessionStore !== undefined &&
    (typeof sessionStore !== "object" || sessionStore === null ||
      typeof sessionStore.append !== "function" || typeof sessionStore.load !== "function")
  ) {
    throw new TypeError(
      "Cannot serve the relay: sessionStore must be a SessionStore (append and load functions)",
    );
  }
  const projectKey = options.projectKey ?? cli.projectKey;
  if (projectKey !== undefined && (typeof projectKey !== "string" || projectKey === "")) {
    throw new TypeError("Cannot serve the relay: projectKey must be a non-empty string");
  }
  const reserved = defaults.RELAY_SESSIONS_PROJECT_KEY;
  if (projectKey === reserved) {
    throw invalid(`projectKey ${reserved} is reserved for the relay's session records`);
  }
  if (projectKey !== undefined && sessionStore === undefined) {
    throw invalid("projectKey needs a sessionStore");
  }
  return { sessionStore, projectKey };
}

/** The session limits, in all and per owner. */
type Limits = Pick<
  Config,
  "maxSessions" | "maxHibernated" | "maxSessionsPerOwner" | "maxHibernatedPerOwner"
>;

/* `oneOwner`: one static token and no secrets, so one owner: its share is the whole. */
function checkLimits(options: RelayOptions, oneOwner: boolean): Limits {
  const maxSessions = count("maxSessions", options.maxSessions, defaults.DEFAULT_MAX_SESSIONS);
  const maxHibernated = options.maxHibernated === 0
    ? 0
    : count("maxHibernated", options.maxHibernated, defaults.DEFAULT_MAX_HIBERNATED);
  const share = (total: number) =>
    oneOwner ? total : Math.max(1, Math.floor(total / defaults.OWNER_SHARE));
  return {
    maxSessions,
    maxHibernated,
    maxSessionsPerOwner: count(
      "maxSessionsPerOwner",
      options.maxSessionsPerOwner,
      share(maxSessions),
    ),
    maxHibernatedPerOwner: count(
      "maxHibernatedPerOwner",
      options.maxHibernatedPerOwner,
      share(maxHibernated),
    ),
  };
}

function checkOnMirror(value: unknown): ((event: MirrorEvent) => void) | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") {
    throw new TypeError("Cannot serve the relay: onMirror must be a function");
  }
  return value as (event: MirrorEvent) => void;
}

function checkOrigins(origins: unknown): ReadonlySet<string> | undefined {
  if (origins === undefined) return undefined;
  if (!Array.isArray(origins) || origins.some((origin) => typeof origin !== "string")) {
    throw new TypeError("Cannot serve the relay: allowedOrigins must be an array of strings");
  }
  for (const origin of origins) {
    let parsed: string | undefined;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = undefined;
    }
    if (parsed !== origin || parsed === "null") {
      throw invalid(
        `allowedOrigins holds ${JSON.stringify(origin)}, which is not an origin: write ` +
          `scheme://host[:port] without a path or trailing slash, e.g. https://app.example.com`,
      );
    }
  }
  return new Set(origins);
}

function checkWorkspace(workspace: unknown): string {
  if (typeof workspace !== "string" || workspace === "") {
    throw new TypeError("Cannot serve the relay: workspace must be a non-empty path string");
  }
  let real: string;
  try {
    real = Deno.realPathSync(workspace);
  } catch (error) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot serve the relay: the workspace ${workspace} cannot be found (${
        messageOf(error)
      }); create it or pass another folder`,
      { cause: error },
    );
  }
  if (!Deno.statSync(real).isDirectory) {
    throw invalid(`the workspace ${workspace} is not a folder`);
  }
  return real;
}

function milliseconds(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot serve the relay: ${name} must be a number`);
  }
  return checkMs(value, `Cannot serve the relay: ${name}`, min);
}

function count(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot serve the relay: ${name} must be a number`);
  }
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw invalid(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function invalid(what: string): DuplexError {
  return new DuplexError("invalid_argument", `Cannot serve the relay: ${what}`);
}
