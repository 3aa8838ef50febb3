/**
 * The options of a {@linkcode SessionPool}, of one conversation and of
 * `acquire`, and their checks.
 *
 * @module
 */

import { checkMs } from "../../../src/_deadline.ts";
import { isRecord } from "../../../src/_values.ts";
import type { DuplexSession } from "../../../src/session/duplex_session.ts";
import type { DuplexSessionOptions } from "../../../src/session/session_options.ts";
import type { PermissionDecision, PermissionRequest } from "../../../src/permissions/permission.ts";
import type { AgentDefinition } from "../../../src/protocol/control_requests.ts";
import { checkClaimExtras, hookSettingsIn } from "../../../src/session/claim.ts";
import type { PermissionMode } from "../../../src/protocol/control.ts";
import type { TransportFactory } from "../../../src/transport/transport.ts";
import { checkSubprocessOptions, type SubprocessOptions } from "../subprocess_options.ts";
import type { PoolEvent } from "./pool_events.ts";

/** Session options shared by every conversation of a pool (the transport is the pool's). */
export type PoolSessionOptions = Omit<
  DuplexSessionOptions,
  "transport" | "signal" | "onPermission"
>;

/** Which conversation a permission request belongs to. */
export interface PoolPermissionContext {
  /** The conversation key. */
  readonly key: string;
  /** Its live session (answer a deferred request with `session.respondToPermission`). */
  readonly session: DuplexSession;
}

/** Decides on a permission request of any conversation of the pool. */
export type PoolPermissionHandler = (
  request: PermissionRequest,
  context: PoolPermissionContext,
) => PermissionDecision | Promise<PermissionDecision>;

/**
 * What a pool's shared configuration is made of. Everything here is fixed for
 * the pool's life: spares are started with it before their conversation is
 * known (the official SDK's `prewarm()` options play the same part).
 */
export interface SessionPoolOptions {
  /**
   * The CLI's options for every conversation: binary, environment, model,
   * tools, settings… `cwd` is the folder of the spares for a known
   * configuration and the default folder of a conversation.
   */
  readonly process?: SubprocessOptions;
  /** Session options for every conversation: hooks, MCP servers, timeouts, … */
  readonly session?: PoolSessionOptions;
  /**
   * Decides on permission requests, told which conversation asks.
   *
   * @default {denies every request, as a session without a handler}
   */
  readonly onPermission?: PoolPermissionHandler;
  /**
   * The most live conversation processes (spares not counted). At the
   * limit, the least recently used idle conversation is hibernated to make
   * room; when none is idle, `acquire` waits.
   *
   * @default {8}
   */
  readonly maxLive?: number;
  /**
   * The most `acquire` calls waiting for a live slot; beyond it `acquire`
   * rejects at once with `pool_exhausted`.
   *
   * @default {1000}
   */
  readonly maxWaiting?: number;
  /**
   * Spares for the known configuration: CLIs started in `process.cwd`,
   * initialised, waiting for a first user line. Handed to new
   * conversations that ask for nothing the spare was not started with
   * (`model` and `permissionMode` are set after the hand-out). A spare
   * answers a control request before its hand-out (`set_model`,
   * `set_permission_mode`, else `mcp_status`, about 1 ms): one killed a
   * moment before, which still looks alive until Deno reaps it, is closed
   * and the next spare, or a cold start, serves the conversation.
   *
   * @default {0}
   */
  readonly spares?: number;
  /**
   * Parked spares (`--await-claim`) for any folder: bound to a new
   * conversation with `claim_session`. A refused claim falls back to a cold
   * start, reported as a `claim_refused` event; a claim that fails because
   * the spare's process has ended goes to the next parked spare.
   *
   * @default {0}
   */
  readonly parkedSpares?: number;
  /**
   * The neutral folder parked spares wait in.
   *
   * @default {a private temporary folder, removed on close}
   */
  readonly parkDir?: string;
  /**
   * Prime each warm spare once it is initialised: the pool sends it one
   * user line with no content and `shouldQuery: false`, which makes the CLI
   * do work it otherwise does on a session's first user line (the session's
   * first attachments: environment, model, tool, agent and skill listings;
   * about 50 ms of the ~120 ms from a spare's first user line to its engine
   * turn, `tests/bench/first_turn_ideas.ts`), with no API request, and hides
   * the CLI's answer (its `system/init` and empty `result`) from the
   * session. The spare is ready (`spare_ready`) once primed.
   *
   * What the conversation sees stays a plain spare's (checked on 2.1.332 by
   * `tests/e2e/pool_warmup_e2e_test.ts`): the messages, system prompt and
   * tools of its first API request, its session id, its history, its turn
   * count, usage and cost; no `UserPromptSubmit` hook runs for the line, and
   * a primed spare never handed out leaves no transcript. Two differences:
   * the transcript holds those attachments ahead of the first user message
   * rather than after it, and the requests' billing header
   * (`x-anthropic-billing-header`) carries the `cc_version` fingerprint of
   * an empty first message rather than the conversation's first prompt's.
   * A spare whose CLI refuses the line is closed and counted as a failed
   * spare (`spare_failed`). Parked spares are not primed: a parked CLI
   * refuses user lines before its claim.
   *
   * @default {false}
   */
  readonly primeSpares?: boolean;
  /**
   * Hibernate a conversation idle (released by every holder) for this long:
   * its process is closed, its session id kept, and the next `acquire`
   * resumes it (`--resume`). `Infinity`: only to make room.
   *
   * @default {600000}
   */
  readonly idleMs?: number;
  /**
   * The most spares started at once (spawn to `initialize` answered), so
   * prewarming never starves running turns; a conversation's own start
   * never waits for it, and spares wait while conversations start.
   *
   * @default {1}
   */
  readonly prewarmConcurrency?: number;
  /**
   * How long `acquire` waits in all (for a slot, then the start).
   *
   * @default {60000}
   */
  readonly acquireTimeoutMs?: number;
  /**
   * How long a start or resume may take until the CLI answered `initialize`.
   *
   * @default {60000}
   */
  readonly startTimeoutMs?: number;
  /** Called with every pool event (also available with `pool.subscribe()`). */
  readonly onEvent?: (event: PoolEvent) => void;
  /**
   * Makes the transport factory of one process (for tests and custom
   * spawners).
   *
   * @default {subprocess}
   */
  readonly launch?: (options: SubprocessOptions) => TransportFactory;
}

/**
 * The per-conversation half (the official SDK's `ClaimOptions`), given at a
 * conversation's first `acquire` and kept while the pool knows it (later
 * acquires' values are ignored). A parked spare can take all of them; a
 * spare for the known configuration only `model` and `permissionMode`.
 */
export interface ConversationOptions {
  /** The conversation's folder. @default {`process.cwd` of the pool} */
  readonly cwd?: string;
  /**
   * The model: part of the claim of a parked spare, set with `set_model`
   * after a warm spare's hand-out, `--model` on a cold start.
   */
  readonly model?: string;
  /**
   * The thinking-token budget (`null`: the CLI's default): part of the claim
   * of a parked spare (`ClaimOptions.maxThinkingTokens`), `--max-thinking-tokens`
   * on a cold start (0: thinking off); a warm spare is not handed out for it.
   */
  readonly maxThinkingTokens?: number | null;
  /**
   * A flag-tier settings overlay: part of the claim of a parked spare
   * (`ClaimOptions.settings`), merged into `--settings` on a cold start; a
   * warm spare is not handed out for it. With keys that govern hooks
   * (`hooks`, `disableAllHooks`, …), which a claim cannot apply, the
   * conversation starts cold.
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** The permission mode. */
  readonly permissionMode?: PermissionMode;
  /** Extra directories, as `--add-dir`. */
  readonly additionalDirectories?: readonly string[];
  /** Appended to the system prompt. */
  readonly appendSystemPrompt?: string;
  /** The session's title. */
  readonly title?: string;
  /** Sub-agents, by name. */
  readonly agents?: Readonly<Record<string, AgentDefinition>>;
  /**
   * A session id to resume when the pool knows nothing of the key (a host
   * that restarted, a relay resuming a conversation by its id).
   */
  readonly resume?: string;
}

/** Options of `pool.acquire`. */
export interface AcquireOptions extends ConversationOptions {
  /** Stops waiting (the conversation is left as it was). */
  readonly signal?: AbortSignal;
  /** How long to wait in all. @default {the pool's `acquireTimeoutMs`} */
  readonly timeoutMs?: number;
}

/** The checked options. */
export interface PoolSettings {
  readonly maxLive: number;
  readonly maxWaiting: number;
  readonly spares: number;
  readonly parkedSpares: number;
  readonly primeSpares: boolean;
  readonly idleMs: number;
  readonly prewarmConcurrency: number;
  readonly acquireTimeoutMs: number;
  readonly startTimeoutMs: number;
}

function count(value: unknown, what: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new RangeError(`Cannot make the pool: ${what} must be an integer of at least ${min}`);
  }
  return value;
}

function flag(value: unknown, what: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") {
    throw new TypeError(`Cannot make the pool: ${what} must be a boolean`);
  }
  return value;
}

/**
 * Checks the pool's options, its process options too (as `subprocess()`
 * checks them). Pure: nothing is started or made.
 *
 * @param options The options.
 * @returns The settings, defaults applied.
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a count or duration out of range.
 * @throws {DuplexError} `invalid_argument` for a process option the CLI would refuse.
 */
export function checkPoolOptions(options: SessionPoolOptions): PoolSettings {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Cannot make the pool: options must be an object");
  }
  for (const name of ["process", "session"] as const) {
    const value = options[name];
    if (value !== undefined && (typeof value !== "object" || value === null)) {
      throw new TypeError(`Cannot make the pool: ${name} must be an object`);
    }
  }
  for (const name of ["onPermission", "onEvent", "launch"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new TypeError(`Cannot make the pool: ${name} must be a function`);
    }
  }
  if (options.parkDir !== undefined && (typeof options.parkDir !== "string" || !options.parkDir)) {
    throw new TypeError("Cannot make the pool: parkDir must be a non-empty string");
  }
  if (options.process?.awaitClaim) {
    throw new TypeError("Cannot make the pool: process.awaitClaim is the pool's to set");
  }
  const settings: PoolSettings = {
    maxLive: count(options.maxLive, "maxLive", 8, 1),
    maxWaiting: count(options.maxWaiting, "maxWaiting", 1000, 0),
    spares: count(options.spares, "spares", 0, 0),
    parkedSpares: count(options.parkedSpares, "parkedSpares", 0, 0),
    primeSpares: flag(options.primeSpares, "primeSpares"),
    prewarmConcurrency: count(options.prewarmConcurrency, "prewarmConcurrency", 1, 1),
    idleMs: options.idleMs === undefined ? 600_000 : checkMs(options.idleMs, "idleMs"),
    acquireTimeoutMs: options.acquireTimeoutMs === undefined
      ? 60_000
      : checkMs(options.acquireTimeoutMs, "acquireTimeoutMs"),
    startTimeoutMs: options.startTimeoutMs === undefined
      ? 60_000
      : checkMs(options.startTimeoutMs, "startTimeoutMs"),
  };
  checkSubprocessOptions(options.process ?? {});
  return settings;
}

/**
 * Tells whether a spare for the known configuration can serve a
 * conversation: it asks for nothing but the pool's folder, a model and a
 * permission mode.
 *
 * @param options The conversation's options.
 * @param cwd The spares' folder.
 */
export function fitsWarmSpare(options: ConversationOptions, cwd: string | undefined): boolean {
  return (options.cwd === undefined || options.cwd === cwd) &&
    options.additionalDirectories === undefined && options.appendSystemPrompt === undefined &&
    options.title === undefined && options.agents === undefined && options.resume === undefined &&
    options.maxThinkingTokens === undefined && options.settings === undefined;
}

/**
 * Whether a parked spare can be claimed for a conversation: not with
 * settings that govern hooks (a claim cannot apply them; a cold start can).
 *
 * @param options The conversation's options.
 * @returns True when a claim can carry them.
 */
export function fitsParkedSpare(options: ConversationOptions): boolean {
  return hookSettingsIn(options.settings).length === 0;
}

/**
 * Checks the per-conversation fields of acquire options, before anything
 * waits or a spare is spent on them.
 *
 * @param options The acquire options.
 * @throws {TypeError} For a field of the wrong type, or an empty name.
 */
export function checkConversation(options: AcquireOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("Cannot acquire: options must be an object");
  }
  const o = options as Record<string, unknown>;
  for (const name of ["cwd", "model", "permissionMode", "resume"]) {
    if (o[name] !== undefined && (typeof o[name] !== "string" || o[name] === "")) {
      throw new TypeError(`Cannot acquire: ${name} must be a non-empty string`);
    }
  }
  for (const name of ["appendSystemPrompt", "title"]) {
    if (o[name] !== undefined && typeof o[name] !== "string") {
      throw new TypeError(`Cannot acquire: ${name} must be a string`);
    }
  }
  const dirs = o.additionalDirectories;
  if (
    dirs !== undefined &&
    (!Array.isArray(dirs) || !dirs.every((dir) => typeof dir === "string" && dir !== ""))
  ) {
    throw new TypeError("Cannot acquire: additionalDirectories must be an array of folder names");
  }
  if (o.agents !== undefined && !isRecord(o.agents)) {
    throw new TypeError("Cannot acquire: agents must be an object");
  }
  checkClaimExtras(options, "Cannot acquire");
}

/** The per-conversation fields of acquire options (signal and timeout dropped). */
export function conversationOf(options: AcquireOptions): ConversationOptions | undefined {
  const { signal: _signal, timeoutMs: _timeout, ...rest } = options;
  for (const value of Object.values(rest)) if (value !== undefined) return rest;
  return undefined;
}
