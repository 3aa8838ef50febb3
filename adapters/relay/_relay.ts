/**
 * The relay itself: the HTTP server, the admission of each WebSocket, the
 * sessions it holds, and its shutdown. `serveRelay()` starts one.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, deadline } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import { CLOSE, type SpawnRequest, SUBPROTOCOL } from "../../src/wire/wire.ts";
import type { TraceContext } from "../../src/wire/_trace_context.ts";
import { Telemetry, TELEMETRY_OFF } from "../../src/telemetry/_telemetry.ts";
import type { TransportFactory } from "../../src/transport/transport.ts";
import { VERSION } from "../../src/version.ts";
import { subprocess, type SubprocessOptions } from "../subprocess/mod.ts";
import { DEFAULT_HOST_SIGNAL } from "../subprocess/subprocess_options.ts";
import {
  type HostExitParticipant,
  registerHostExitParticipant,
  unregisterHostExitParticipant,
} from "../subprocess/_host_exit.ts";
import { type Credential, Gate, ownedBy } from "./_access.ts";
import { type ConnectionHost, RelayConnection } from "./_connection.ts";
import {
  offeredProtocols,
  preflightResponse,
  refusalResponse,
  statusOf,
  upgradeRequired,
} from "./_admission.ts";
import { Refusal, spawnOptions } from "./_policy.ts";
import type { Config } from "./_relay_config.ts";
import { randomToken, RelaySession, type Restore, type Wake } from "./_relay_session.ts";
import { mirrorPublisher, openStoreLink, type Resent } from "./_relay_store.ts";
import { wakeFromStore } from "./_store_wake.ts";
import { ConversationOwners, REMEMBERED } from "./_conversations.ts";
import { hibernatable, type Hibernated, HibernatedSessions } from "./_hibernation.ts";
import { wakeOptions, workspaceFolder } from "./_wake_options.ts";
import { ConnectionTrace, SessionTrace } from "./_relay_telemetry.ts";
import type { RelayServer } from "./relay_server.ts";

/** How the relay starts a CLI: `subprocess`, unless a test watches what it is given. */
export type LaunchFn = (options: SubprocessOptions) => TransportFactory;

/** How long `close()` waits for the sockets to finish their closing handshake. */
const SOCKET_CLOSE_WAIT_MS = 2000;

/**
 * What a session starts from: a spawn request (no CLI session id when it
 * cannot be resumed later), or a resume ({@linkcode Wake}, its epoch the next).
 */
type Start = Omit<Wake, "cliSessionId" | "restore" | "resent"> & {
  readonly cliSessionId: string | undefined;
  readonly restore?: Restore;
  readonly resent?: Resent;
};

/** A running relay (see `serveRelay`). */
export class Relay implements RelayServer, ConnectionHost {
  readonly url: string;
  readonly port: number;
  readonly closed: Promise<void>;
  readonly heartbeatMs: number;
  readonly helloTimeoutMs: number;
  readonly maxFrameBytes: number;
  readonly maxPendingInputBytes: number;
  readonly #config: Config;
  readonly #gate: Gate;
  readonly #launch: LaunchFn;
  readonly #telemetry: Telemetry;
  /** Connections (and admissions in progress) that have no session yet. */
  #pending = 0;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #sessions = new Map<string, RelaySession>();
  readonly #hibernated: HibernatedSessions;
  /** The owners of the conversations the relay named (`spawn.resume` opens only one's own). */
  readonly #owners: ConversationOwners;
  /** Each owner's sessions and starts in progress (`maxSessionsPerOwner`). */
  readonly #held = new Map<string, number>();
  readonly #retiring = new Set<Promise<void>>();
  readonly #starting = new Set<Promise<unknown>>();
  /** Resumes in progress by token: a second one for the same token waits for the first. */
  readonly #waking = new Map<string, Promise<unknown>>();
  readonly #connections = new Set<RelayConnection>();
  readonly #sockets = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #onAbort: () => void;
  readonly #resolveClosed: () => void;
  #closing: Promise<void> | undefined;
  /** On a host signal the relay closes before its CLIs are ended (`cli.hostSignal`). */
  readonly #hostExit: HostExitParticipant;

  /**
   * Listens, and serves.
   *
   * @param config The checked options.
   * @param launch How to start a CLI (`subprocess`).
   */
  constructor(config: Config, launch: LaunchFn = subprocess) {
    this.#config = config;
    this.#launch = launch;
    this.#telemetry = config.telemetry ? new Telemetry(config.telemetry, VERSION) : TELEMETRY_OFF;
    this.heartbeatMs = config.heartbeatMs;
    this.helloTimeoutMs = config.helloTimeoutMs;
    this.maxFrameBytes = config.maxFrameBytes;
    this.maxPendingInputBytes = config.maxPendingInputBytes;
    this.#gate = new Gate(config);
    this.#hibernated = new HibernatedSessions(config.maxHibernated, config.maxHibernatedPerOwner);
    this.#owners = new ConversationOwners({
      store: config.sessionStore,
      timeoutMs: config.storeTimeoutMs,
      // Each owner's share of the memory is its share of the sessions.
      perOwner: Math.ceil(REMEMBERED * config.maxSessionsPerOwner / config.maxSessions),
    });
    const { promise, resolve } = Promise.withResolvers<void>();
    this.closed = promise;
    this.#resolveClosed = resolve;
    this.#server = Deno.serve(
      { hostname: config.hostname, port: config.port, onListen() {} },
      (request, info) => this.#handle(request, info.remoteAddr),
    );
    this.port = this.#server.addr.port;
    const host = this.#server.addr.hostname;
    this.url = `ws://${host.includes(":") ? `[${host}]` : host}:${this.port}/v1`;
    this.#onAbort = () => void this.close();
    this.#hostExit = {
      hostSignal: config.cli.hostSignal ?? DEFAULT_HOST_SIGNAL,
      close: () => this.close(),
    };
    // A SIGINT / SIGTERM / SIGHUP closes the relay first (its clients told 1001), then the
    // CLIs it did not end (unless `cli.hostSignal` is "ignore").
    if (this.#hostExit.hostSignal !== "ignore") registerHostExitParticipant(this.#hostExit);
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
    return ownedBy(session?.owner, owner) && session?.forgotten === false ? session : undefined;
  }

  settled(_connection: RelayConnection): void {
    this.#pending--;
  }

  removeConnection(connection: RelayConnection): void {
    this.#connections.delete(connection);
  }

  /** How many disconnected sessions are hibernated. */
  get hibernatedCount(): number {
    return this.#hibernated.size;
  }

  spawn(
    request: SpawnRequest | undefined,
    credential: Credential,
    trace: TraceContext | undefined,
  ): Promise<RelaySession> {
    return this.#track(this.#spawn(request, credential, trace));
  }

  wake(
    token: string,
    after: number,
    credential: Credential,
    trace: TraceContext | undefined,
  ): Promise<RelaySession | undefined> {
    const earlier = this.#waking.get(token);
    if (earlier !== undefined) {
      // Another connection resumes it already: then it is live here, or it is not at all.
      return earlier.then(() => this.find(token, credential.owner), () => undefined);
    }
    let record = this.#hibernated.take(token, credential.owner);
    const store = this.#config.sessionStore;
    // The client has more output than this relay produced: the conversation went on elsewhere
    // since it was hibernated here, and the store knows where it stands.
    if (record !== undefined && store !== undefined && after > record.restore.outSeq) {
      record = undefined;
    }
    if (record === undefined && store === undefined) return Promise.resolve(undefined);
    const waking = this.#track(
      record !== undefined
        ? this.#wakeHibernated(record, credential, trace)
        : this.#wakeFromStore(token, after, credential, trace),
    );
    this.#waking.set(token, waking);
    const forget = () => this.#waking.delete(token);
    waking.then(forget, forget);
    return waking;
  }

  #track<T>(starting: Promise<T>): Promise<T> {
    this.#starting.add(starting);
    const forget = () => this.#starting.delete(starting);
    starting.then(forget, forget);
    return starting;
  }

  async #spawn(
    request: SpawnRequest | undefined,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    const config = this.#config;
    const { owner, policy } = credential;
    this.#assertRoom(owner);
    const release = this.#hold(owner);
    let claimed: Promise<void> | undefined;
    try {
      // The owner's own folders and environment (tenancy), its cwd resolved in its workspace.
      const place = await config.tenants.place(credential.owner);
      let options = await spawnOptions(request, policy, place.cli, place.workspace);
      // Only the owner's own conversation; any other id is answered as an unknown one.
      if (options.resume !== undefined) await this.#owners.assertOwned(options.resume, owner);
      let named: string | undefined;
      if (hibernatable(options)) {
        // The relay names the CLI's session: its owner is kept (for a `spawn.resume` of it
        // later), and it can be resumed after a hibernation.
        named = options.resume ?? crypto.randomUUID();
        if (options.resume === undefined) {
          options = { ...options, sessionId: named };
          claimed = this.#owners.claim(named, owner);
        }
      }
      const resumable = this.#hibernated.enabled || config.sessionStore !== undefined;
      const start: Start = {
        options,
        cliSessionId: resumable && policy.allowResume ? named : undefined,
        spawn: request ?? {},
        cwd: workspaceFolder(options, place.workspace),
        epoch: 0,
      };
      return await this.#open(start, credential, remote);
    } finally {
      release();
      await claimed; // the owner is kept before the client learns the session (bounded)
    }
  }

  async #wakeHibernated(
    record: Hibernated,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    try {
      await record.gone; // the old process has ended (the close ladder bounds it)
      // Checked again against the resuming credential's policy, as a resume from the store is.
      const place = await this.#config.tenants.place(credential.owner);
      const options = await wakeOptions(record, credential.policy, place);
      return await this.#wake({ ...record, options }, credential, remote);
    } catch (error) {
      if (!this.closing) this.#hibernated.add(record);
      throw error;
    }
  }

  /* A session another relay (or this one, before a restart) ran, resumed from the store. */
  async #wakeFromStore(
    token: string,
    after: number,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession | undefined> {
    const place = await this.#config.tenants.place(credential.owner);
    const wake = await wakeFromStore(token, after, credential, { ...this.#config, ...place });
    return wake === undefined ? undefined : await this.#wake(wake, credential, remote);
  }

  /* Resumes a conversation in a new process, its numbering continued (a start being tracked). */
  async #wake(
    wake: Wake,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    this.#assertRoom(credential.owner, true);
    const release = this.#hold(credential.owner);
    try {
      const session = await this.#open({ ...wake, epoch: wake.epoch + 1 }, credential, remote);
      this.#telemetry.count("claude.relay.wakes");
      return session;
    } finally {
      release();
    }
  }

  /*
   * Refuses a start beyond maxSessionsPerOwner of the owner's or beyond maxSessions
   * (`tracked`: this start is among those starting).
   */
  #assertRoom(owner: string, tracked = false): void {
    const { maxSessions, maxSessionsPerOwner } = this.#config;
    const held = this.#held.get(owner) ?? 0;
    if (held >= maxSessionsPerOwner && maxSessionsPerOwner < maxSessions) {
      throw new Refusal(
        "busy",
        `Cannot start a session: this credential's owner holds ${maxSessionsPerOwner} already, ` +
          `the most one owner may (the relay's maxSessionsPerOwner); close one or try again later`,
      );
    }
    const others = this.#starting.size - (tracked ? 1 : 0);
    if (this.#sessions.size + others >= maxSessions) {
      throw new Refusal(
        "busy",
        `Cannot start a session: the relay runs its maximum of ${maxSessions}; try again later`,
      );
    }
  }

  /* Counts one more session (or start) of an owner; the returned function counts it off. */
  #hold(owner: string): () => void {
    this.#held.set(owner, (this.#held.get(owner) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.#held.get(owner)! - 1;
      if (left === 0) this.#held.delete(owner);
      else this.#held.set(owner, left);
    };
  }

  async #open(
    start: Start,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    const { options, cliSessionId, spawn, cwd, restore, epoch, resent } = start;
    const config = this.#config;
    const { policy } = credential;
    const { model, permissionMode } = options;
    const owner = credential.owner;
    const trace = new SessionTrace(this.#telemetry, { model, permissionMode, owner }, remote);
    let transport;
    try {
      // The CLI joins the trace: the subprocess adapter sets TRACEPARENT / TRACESTATE from it.
      const traceContext = trace.traceContext();
      const signal = this.#abort.signal;
      transport = await this.#launch(options)(traceContext ? { signal, traceContext } : { signal });
    } catch (error) {
      trace.failed(error);
      throw new Refusal(
        "spawn_failed",
        `Cannot start claude on the relay: ${messageOf(error)}`,
      );
    }
    trace.spawned(transport.info.pid);
    const id = restore?.id ?? randomToken();
    const { sessionStore, storeTimeoutMs, onMirror } = config;
    const store = await openStoreLink({
      store: sessionStore,
      timeoutMs: storeTimeoutMs,
      mirror: transport.info.mirror,
      publish: mirrorPublisher(trace, onMirror),
    }, {
      id,
      owner: credential.owner,
      cliSessionId: policy.allowResume ? cliSessionId : undefined,
      spawn,
      cwd,
      applied: restore?.applied ?? 0,
      epoch,
      ...(resent ? { resent } : {}),
    });
    const release = this.#hold(owner); // counted off when it is forgotten
    const session: RelaySession = new RelaySession(transport, {
      id,
      ...(store ? { store } : {}),
      trace,
      owner: credential.owner,
      exposePid: policy.exposePid,
      maxPendingInputBytes: config.maxPendingInputBytes,
      graceMs: config.graceMs,
      bufferBytes: config.bufferBytes,
      resumable: policy.allowResume,
      ...(restore ? { restore } : {}),
      ...(cliSessionId === undefined ? {} : {
        hibernation: {
          cliSessionId,
          options,
          spawn,
          cwd,
          keep: (record: Hibernated) => {
            if (this.closing || !this.#hibernated.add(record)) return;
            this.#telemetry.count("claude.relay.hibernations");
          },
        },
      }),
      onForget: (forgotten, done) => {
        this.#sessions.delete(forgotten.id);
        release();
        this.#telemetry.count("claude.relay.sessions", -1);
        this.#retiring.add(done);
        done.finally(() => this.#retiring.delete(done));
      },
    });
    this.#sessions.set(session.id, session);
    this.#telemetry.count("claude.relay.sessions", 1);
    return session;
  }

  async #handle(request: Request, peer: Deno.NetAddr): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") {
      if (request.method !== "GET" && request.method !== "HEAD") {
        return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET" } });
      }
      return Response.json({
        ok: !this.closing,
        sessions: this.#sessions.size,
        hibernated: this.#hibernated.size,
      });
    }
    if (url.pathname !== "/v1") return new Response("Not found\n", { status: 404 });
    if (request.method === "OPTIONS") return preflightResponse();
    // A plain GET is a client asking why its handshake failed: it is answered as the upgrade.
    const upgrading = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    if (!upgrading && request.method !== "GET" && request.method !== "HEAD") {
      return upgradeRequired();
    }
    const offered = upgrading ? offeredProtocols(request) : [];
    if (upgrading && !offered.includes(SUBPROTOCOL)) {
      return new Response(`Offer the WebSocket subprotocol ${SUBPROTOCOL}\n`, { status: 400 });
    }
    if (this.closing) return new Response("The relay is shutting down\n", { status: 503 });
    const { maxPendingConnections } = this.#config;
    if (this.#pending >= maxPendingConnections) {
      this.#telemetry.count("claude.relay.refusals", 1, { "claude.relay.refusal.kind": "busy" });
      return new Response(
        `Cannot accept the connection: ${maxPendingConnections} connections are still in their ` +
          `handshake (the relay's maxPendingConnections); try again later\n`,
        { status: 503, headers: { "retry-after": "1" } },
      );
    }
    this.#pending++;
    let access;
    let upgrade: { socket: WebSocket; response: Response } | undefined;
    try {
      access = await this.#gate.admit(request, offered);
      if (this.closing) throw new Error("closing");
      // Refused before the upgrade: no frame of a client without a credential is ever read.
      if (!access.ok) {
        const status = statusOf(access.refusal);
        if (upgrading) new ConnectionTrace(this.#telemetry, peer).rejected(access.refusal, status);
        return refusalResponse(access.refusal);
      }
      if (!upgrading) return upgradeRequired();
      upgrade = Deno.upgradeWebSocket(request, { protocol: SUBPROTOCOL });
    } catch {
      return this.closing
        ? new Response("The relay is shutting down\n", { status: 503 })
        : new Response("Bad WebSocket upgrade\n", { status: 400 });
    } finally {
      // A connection stays counted until its socket closes (RelayConnection settles it).
      if (upgrade === undefined) this.#pending--;
    }
    const trace = new ConnectionTrace(this.#telemetry, peer);
    const connection = new RelayConnection(upgrade.socket, this, access.credential, trace);
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
      this.#hibernated.clear();
      // Their records stay as they are: another relay sharing the store may resume them.
      for (const session of [...this.#sessions.values()]) void session.forget("keep");
      await Promise.allSettled([...this.#retiring]);
      await bounded(Promise.allSettled([...this.#sockets]), SOCKET_CLOSE_WAIT_MS);
      await this.#server.shutdown();
    } finally {
      unregisterHostExitParticipant(this.#hostExit);
      this.#resolveClosed();
    }
  }
}

async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  using limit = deadline(ms);
  await abortable(promise, limit.signal).catch(() => {});
}
