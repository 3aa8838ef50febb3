/**
 * The options of {@linkcode AcpAgent} and `serveAcp`.
 *
 * @module
 */

import type { SessionStore, TelemetryOptions, TransportFactory } from "../../mod.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { PoolSessionOptions } from "../subprocess/pool/mod.ts";
import type { TokenFunction } from "../remote/mod.ts";

/** A CLI run by a relay on another host (`@duplex/claude/relay`) instead of a local one. */
export interface AcpRelayOptions {
  /** The relay's WebSocket URL (`wss://…/v1`). */
  readonly url: string;
  /** The bearer token, or a function that mints a fresh one per connection. */
  readonly token: string | TokenFunction;
}

/** What the agent tells the client about itself in `initialize`. */
export interface AcpAgentInfo {
  /** The agent's name. @default {"@duplex/claude/acp"} */
  readonly name?: string;
  /** What an editor shows. @default {"Claude Code"} */
  readonly title?: string;
  /** Its version. @default {the package's version} */
  readonly version?: string;
}

/** Options of an ACP agent. */
export interface AcpAgentOptions {
  /**
   * The local CLI's options for every session: `binary`, `env`, `model`,
   * `settingSources`, … The agent sets `cwd` (the client's), the session id,
   * `resume`, partial messages and the permission mode per session.
   */
  readonly process?: SubprocessOptions;
  /**
   * Run every session's CLI on a relay (`remote()`): model, permission mode
   * and resume travel in the spawn request; the relay's policy decides the
   * rest. The history a `session/load` replays is then not readable here,
   * so the load resumes without a replay.
   */
  readonly relay?: AcpRelayOptions;
  /**
   * Makes each session's transport from the options the agent chose (the
   * pool's `launch`): tests pass a `ScriptedCli`'s; by default `subprocess()`,
   * or `remote()` with `relay`.
   */
  readonly launch?: (options: SubprocessOptions) => TransportFactory;
  /**
   * Where transcripts live beyond this host: each CLI mirrors to it, a
   * `session/load` resumes and replays from it, `session/list` lists it.
   */
  readonly sessionStore?: SessionStore;
  /** OpenTelemetry spans and metrics: one span per prompt (the turn), with its tools and permission waits. */
  readonly telemetry?: TelemetryOptions;
  /**
   * The most live CLI processes; beyond them the least recently used idle
   * session is hibernated (its process closed) and resumed at its next prompt.
   *
   * @default {8}
   */
  readonly maxLive?: number;
  /** Hibernate a session idle this long (milliseconds). @default {the pool's: never} */
  readonly idleMs?: number;
  /**
   * The most events held for one prompt's forwarding before the oldest are
   * dropped (the client reads slower than the CLI writes).
   *
   * @default {4096}
   */
  readonly eventCapacity?: number;
  /** Offer the `bypassPermissions` mode (the CLI then starts with `--allow-dangerously-skip-permissions`). @default {false} */
  readonly allowBypassPermissions?: boolean;
  /** More session options for every CLI (hooks, in-process MCP servers, timeouts). */
  readonly session?: PoolSessionOptions;
  /** What `initialize` says of the agent. */
  readonly agentInfo?: AcpAgentInfo;
  /** Where the agent reports what went wrong outside a request (the program writes it to stderr). */
  readonly onLog?: (message: string) => void;
}
