/**
 * The relay server: `claude` for clients that cannot spawn processes, over
 * the `duplex-claude.v1` WebSocket protocol.
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import { CLOSE, type SpawnRequest, SUBPROTOCOL, timingSafeEqual } from "../../src/remote/wire.ts";
import { subprocess } from "../subprocess/mod.ts";
import { type Credential, Gate } from "./_access.ts";
import { type ConnectionHost, RelayConnection } from "./_connection.ts";
import { Refusal, type RelayPolicy, spawnOptions } from "./_policy.ts";
import { checkOptions, type Config } from "./_relay_config.ts";
import { RelaySession } from "./_relay_session.ts";
import type { RelayOptions } from "./relay_options.ts";

export type { RelayPolicy };
export * from "./relay_options.ts";

/** How long `close()` waits for the sockets to finish their closing handshake. */
const SOCKET_CLOSE_WAIT_MS = 2000;

/** Compared with the owner when no session has the token, so both answers take as long. */
const NOBODY = `nobody:${crypto.randomUUID()}`;

/** A running relay. */
export interface RelayServer {
  /** The WebSocket URL clients connect to, for example `ws://127.0.0.1:8787/v1`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The sessions it holds now (connected or in their grace). */
  readonly sessionCount: number;
  /** Resolves once the relay has closed. */
  readonly closed: Promise<void>;
  /**
   * Closes every connection (`1001`), closes every `claude` (bounded) and
   * stops listening. Idempotent.
   */
  close(): Promise<void>;
  /** Same as {@linkcode RelayServer.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a relay: an HTTP server with `GET /health` and the WebSocket
 * endpoint `/v1`, which spawns one `claude` per session with the
 * subprocess adapter and forwards between the socket and the process.
 *
 * Permissions: `--allow-net` for the address, `--allow-read` for the
 * workspace, and what the subprocess adapter needs (`--allow-run`,
 * `--allow-env`).
 *
 * Each connection is admitted before anything starts: its `Origin` (when
 * `allowedOrigins` is set), then its bearer token: a static one (`tokens`),
 * or a scoped JWT signed with one of `secrets` (`mintRelayToken`), whose
 * policy narrows the relay's. A session is bound to the credential that
 * started it: a resume by any other is answered as for an unknown session.
 *
 * @param options Tokens and secrets, origins, address, workspace, spawn policy and bounds.
 * @returns The running relay.
 * @throws {DuplexError} `invalid_argument` for an unusable value (no tokens nor secrets, a
 * missing workspace, an origin that is not one).
 * @throws {TypeError} For an option of the wrong type.
 * @throws {RangeError} For a `…Ms` option out of range, or a secret shorter than 32 bytes.
 *
 * @example Serve a relay on a free port
 * ```ts ignore
 * import { serveRelay } from "@duplex/claude/relay";
 * import assert from "node:assert/strict";
 *
 * await using relay = serveRelay({
 *   tokens: [Deno.env.get("RELAY_TOKEN")!],
 *   workspace: "/srv/projects",
 *   policy: { models: ["sonnet", "haiku"] },
 * });
 * assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1$/);
 * ```
 */
export function serveRelay(options: RelayOptions): RelayServer {
  return new Relay(checkOptions(options));
}

class Relay implements RelayServer, ConnectionHost {
  readonly url: string;
  readonly port: number;
  readonly closed: Promise<void>;
  readonly heartbeatMs: number;
  readonly helloTimeoutMs: number;
  readonly maxFrameBytes: number;
  readonly maxPendingInputBytes: number;
  readonly #config: Config;
  readonly #gate: Gate;
  /** Connections (and admissions in progress) that have no session yet. */
  #pending = 0;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #sessions = new Map<string, RelaySession>();
  readonly #retiring = new Set<Promise<void>>();
  readonly #starting = new Set<Promise<unknown>>();
  readonly #connections = new Set<RelayConnection>();
  readonly #sockets = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #onAbort: () => void;
  readonly #resolveClosed: () => void;
  #closing: Promise<void> | undefined;

  constructor(config: Config) {
    this.#config = config;
    this.heartbeatMs = config.heartbeatMs;
    this.helloTimeoutMs = config.helloTimeoutMs;
    this.maxFrameBytes = config.maxFrameBytes;
    this.maxPendingInputBytes = config.maxPendingInputBytes;
    this.#gate = new Gate(config);
    const { promise, resolve } = Promise.withResolvers<void>();
    this.closed = promise;
    this.#resolveClosed = resolve;
    this.#server = Deno.serve(
      { hostname: config.hostname, port: config.port, onListen() {} },
      (request) => this.#handle(request),
    );
    this.port = this.#server.addr.port;
    const host = this.#server.addr.hostname;
    this.url = `ws://${host.includes(":") ? `[${host}]` : host}:${this.port}/v1`;
    this.#onAbort = () => void this.close();
    if (config.signal?.aborted) void this.close();
    else config.signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  get closing(): boolean {
    return this.#closing !== undefined;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  find(token: string, owner: string): RelaySession | undefined {
    const session = this.#sessions.get(token);
    // One comparison either way: with the session's owner, or with nobody (never equal).
    const owned = timingSafeEqual(session?.owner ?? NOBODY, owner);
    return session !== undefined && owned && !session.forgotten ? session : undefined;
  }

  settled(_connection: RelayConnection): void {
    this.#pending--;
  }

  removeConnection(connection: RelayConnection): void {
    this.#connections.delete(connection);
  }

  spawn(request: SpawnRequest | undefined, credential: Credential): Promise<RelaySession> {
    const starting = this.#spawn(request, credential);
    this.#starting.add(starting);
    const forget = () => this.#starting.delete(starting);
    starting.then(forget, forget);
    return starting;
  }

  async #spawn(request: SpawnRequest | undefined, credential: Credential): Promise<RelaySession> {
    const config = this.#config;
    if (this.#sessions.size + this.#starting.size >= config.maxSessions) {
      throw new Refusal(
        "busy",
        `Cannot start a session: the relay runs its maximum of ${config.maxSessions}; ` +
          `try again later`,
      );
    }
    const { policy } = credential;
    const options = await spawnOptions(request, policy, config.cli, config.workspace);
    let transport;
    try {
      transport = await subprocess(options)({ signal: this.#abort.signal });
    } catch (error) {
      throw new Refusal(
        "spawn_failed",
        `Cannot start claude on the relay: ${error instanceof Error ? error.message : error}`,
      );
    }
    const session: RelaySession = new RelaySession(transport, {
      owner: credential.owner,
      exposePid: policy.exposePid,
      maxPendingInputBytes: config.maxPendingInputBytes,
      graceMs: config.graceMs,
      bufferBytes: config.bufferBytes,
      resumable: policy.allowResume,
      onForget: (forgotten, done) => {
        this.#sessions.delete(forgotten.id);
        this.#retiring.add(done);
        done.finally(() => this.#retiring.delete(done));
      },
    });
    this.#sessions.set(session.id, session);
    return session;
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") {
      if (request.method !== "GET" && request.method !== "HEAD") {
        return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET" } });
      }
      return Response.json({ ok: !this.closing, sessions: this.#sessions.size });
    }
    if (url.pathname !== "/v1") return new Response("Not found\n", { status: 404 });
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("This endpoint takes WebSocket connections\n", {
        status: 426,
        headers: { upgrade: "websocket" },
      });
    }
    const offered = (request.headers.get("sec-websocket-protocol") ?? "")
      .split(",").map((item) => item.trim()).filter((item) => item !== "");
    if (!offered.includes(SUBPROTOCOL)) {
      return new Response(`Offer the WebSocket subprotocol ${SUBPROTOCOL}\n`, { status: 400 });
    }
    if (this.closing) return new Response("The relay is shutting down\n", { status: 503 });
    const { maxPendingConnections } = this.#config;
    if (this.#pending >= maxPendingConnections) {
      return new Response(
        `Cannot accept the connection: ${maxPendingConnections} connections are still in their ` +
          `handshake (the relay's maxPendingConnections); try again later\n`,
        { status: 503, headers: { "retry-after": "1" } },
      );
    }
    this.#pending++;
    let access;
    let upgrade: { socket: WebSocket; response: Response };
    try {
      access = await this.#gate.admit(request, offered);
      if (this.closing) throw new Error("closing");
      upgrade = Deno.upgradeWebSocket(request, { protocol: SUBPROTOCOL });
    } catch {
      this.#pending--;
      return this.closing
        ? new Response("The relay is shutting down\n", { status: 503 })
        : new Response("Bad WebSocket upgrade\n", { status: 400 });
    }
    const connection = new RelayConnection(upgrade.socket, this, access);
    this.#connections.add(connection);
    this.#sockets.add(connection.closed);
    connection.closed.then(() => this.#sockets.delete(connection.closed));
    return upgrade.response;
  }

  async #shutdown(): Promise<void> {
    this.#config.signal?.removeEventListener("abort", this.#onAbort);
    this.#abort.abort(new DuplexError("closed", "The relay was closed"));
    try {
      for (const connection of [...this.#connections]) {
        connection.end(CLOSE.goingAway, "The relay is shutting down");
      }
      await Promise.allSettled([...this.#starting]);
      for (const session of [...this.#sessions.values()]) void session.forget();
      await Promise.allSettled([...this.#retiring]);
      await bounded(Promise.allSettled([...this.#sockets]), SOCKET_CLOSE_WAIT_MS);
      await this.#server.shutdown();
    } finally {
      this.#resolveClosed();
    }
  }
}

async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  using limit = deadline(ms);
  await abortable(promise, limit.signal).catch(() => {});
}
