/**
 * The relay: the HTTP server and each WebSocket's admission, its sessions by
 * token, their starts and wakes (bounded by `_session_room.ts`), and its
 * shutdown. `serveRelay()` starts one.
 *
 * About 460 lines, a little over the house's ~450: one class whose methods are
 * the steps of a session's way in (handle, open, spawn, wake) and out
 * (shutdown), each short; what had a seam of its own is already out
 * (`_session_room.ts`, `_admission.ts`, `_connection_host.ts`,
 * `_store_wake.ts`, `_hibernation.ts`).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, deadline } from "../../src/_deadline.ts";
import { DuplexError, isDuplexError } from "../../src/errors.ts";
import { CLOSE, type SpawnRequest, SUBPROTOCOL } from "../../src/wire/wire.ts";
import type { TraceContext } from "../../src/telemetry/_trace_context.ts";
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
import { healthUnauthorized, mayReadHealth } from "./_health.ts";
import { RelayConnection } from "./_connection.ts";
import type { ConnectionHost, ResumePoint } from "./_connection_host.ts";
import {
  handshakesFull,
  healthResponse,
  offeredProtocols,
  preflightResponse,
  refusalResponse,
  shuttingDown,
  statusOf,
  upgradeRequired,
} from "./_admission.ts";
import { Refusal, spawnOptions } from "./_policy.ts";
import type { Config } from "./_relay_config.ts";
import { randomToken, RelaySession, type Start, type Wake } from "./_relay_session.ts";
import { type LinkLinger, mirrorPublisher, openStoreLink } from "./_relay_store.ts";
import { assertStored, takenAfter, wakeFromStore } from "./_store_wake.ts";
import { takeOver } from "./_fence.ts";
import { ConversationOwners, REMEMBERED } from "./_conversations.ts";
import { hibernatable, type Hibernated, HibernatedSessions } from "./_hibernation.ts";
import { wakeOptions, workspaceFolder } from "./_wake_options.ts";
import { ConnectionTrace, SessionTrace } from "./_relay_telemetry.ts";
import { SessionRoom } from "./_session_room.ts";
import type { RelayServer } from "./relay_server.ts";

/** How the relay starts a CLI: `subprocess`, unless a test watches what it is given. */
export type LaunchFn = (options: SubprocessOptions) => TransportFactory;

/** How long `close()` waits for the sockets to finish their closing handshake. */
const SOCKET_CLOSE_WAIT_MS = 2000;
/**
 * How long an ended session's mirror keeps catching a store that is behind up
 * (`LinkLinger`): a client resuming the conversation on another relay waits for its turns.
 */
const MIRROR_LINGER_MS = 10 * 60_000;

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
  /** The sessions and starts in progress, in all and per owner. */
  readonly #room: SessionRoom;
  readonly #retiring = new Set<Promise<void>>();
  /** Ended sessions' mirrors still catching the store up (`LinkLinger`). */
  readonly #lingering = new Set<Promise<void>>();
  /** Resumes in progress by token: a second one for the same token waits for the first. */
  readonly #waking = new Map<string, Promise<unknown>>();
  readonly #connections = new Set<RelayConnection>();
  readonly #sockets = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #linger: LinkLinger = {
    signal: this.#abort.signal,
    forMs: MIRROR_LINGER_MS,
    track: (done) => {
      this.#lingering.add(done);
      done.finally(() => this.#lingering.delete(done));
    },
  };
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
    this.#room = new SessionRoom(config, () => this.#sessions.size);
    this.#hibernated = new HibernatedSessions(config.maxHibernated, config.maxHibernatedPerOwner);
    this.#owners = new ConversationOwners({
      store: config.sessionStore,
      timeoutMs: config.storeTimeoutMs,
      // Each owner's share of the memory is its share of the sessions.
      perOwner: Math.ceil(REMEMBERED * config.maxSessionsPerOwner / config.maxSessions),
      onClaimDropped: () => this.#telemetry.count("claude.relay.claims.dropped"),
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
    return this.#room.track(this.#spawn(request, credential, trace));
  }

  wake(
    token: string,
    from: ResumePoint,
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
    if (
      record !== undefined && store !== undefined &&
      (from.after > record.restore.outSeq || (from.applied ?? 0) > record.restore.applied)
    ) {
      record = undefined;
    }
    if (record === undefined && store === undefined) return Promise.resolve(undefined);
    const waking = this.#room.track(
      record !== undefined
        ? this.#wakeHibernated(record, credential, trace)
        : this.#wakeFromStore(token, from, credential, trace),
    );
    this.#waking.set(token, waking);
    const forget = () => this.#waking.delete(token);
    waking.then(forget, forget);
    return waking;
  }

  async #spawn(
    request: SpawnRequest | undefined,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    const config = this.#config;
    const { owner, policy } = credential;
    this.#room.assert(owner);
    const release = this.#room.hold(owner);
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
        // A conversation resumed by its id takes it over from any relay still running it (its
        // first CLI ran at epoch 0).
        epoch: options.resume === undefined ? 0 : await this.#takeOver(options.resume, 1),
      };
      return await this.#open(start, credential, remote);
    } finally {
      release();
      await claimed; // the owner is kept before the client learns the session (bounded)
    }
  }

  /*
   * The epoch a new CLI of a conversation runs it at: at least `atLeast`, above every other
   * relay's, which stop writing its transcript (`_fence.ts`). Taken once the start is admitted,
   * just before the CLI starts, so that a refused start fences nobody off.
   */
  async #takeOver(cliSessionId: string, atLeast: number): Promise<number> {
    const { sessionStore: store, storeTimeoutMs } = this.#config;
    if (store === undefined) return atLeast;
    try {
      return await takeOver(store, cliSessionId, atLeast, storeTimeoutMs);
    } catch (error) {
      throw new Refusal(
        "busy",
        `Cannot resume the conversation: the session store did not take its fence within ` +
          `${storeTimeoutMs} ms (${messageOf(error)}); try again later`,
      );
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
    from: ResumePoint,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession | undefined> {
    const place = await this.#config.tenants.place(credential.owner);
    const settings = { ...this.#config, ...place };
    const wake = await wakeFromStore(token, from, credential, settings);
    return wake === undefined ? undefined : await this.#wake(wake, credential, remote);
  }

  /* Resumes a conversation in a new process, its numbering continued (a start being tracked). */
  async #wake(
    wake: Wake,
    credential: Credential,
    remote: TraceContext | undefined,
  ): Promise<RelaySession> {
    this.#room.assert(credential.owner, true);
    const release = this.#room.hold(credential.owner);
    try {
      const stored = wake.resent && await assertStored(wake.resent, wake.answered);
      const epoch = await this.#takeOver(wake.cliSessionId, wake.epoch + 1);
      // Taken over: the old relay writes no more, and its last input may have been recorded
      // meanwhile, or be in flight (the new CLI must not run it twice).
      const applied = await wake.written?.(epoch);
      const taken = stored ? { taken: takenAfter(stored, wake.answered) } : {};
      const restore = applied !== undefined && applied > wake.restore.applied
        ? { ...wake.restore, applied, ...taken }
        : { ...wake.restore, ...taken };
      const session = await this.#open({ ...wake, restore, epoch }, credential, remote);
      this.#telemetry.count("claude.relay.wakes");
      return session;
    } finally {
      release();
    }
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
      // A resume whose transcript the store did not give (it failed or timed out, as while
      // PostgreSQL restarts) is worth asking again: the conversation is there.
      if (resent !== undefined && isStoreFailure(error)) {
        throw new Refusal(
          "busy",
          `Cannot resume the session yet: the session store did not give its transcript ` +
            `(${messageOf(error)}); try again later`,
        );
      }
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
      linger: this.#linger,
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
    const release = this.#room.hold(owner); // counted off when it is forgotten
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
      if (!await mayReadHealth(request, this.#config.health, this.#gate)) {
        return healthUnauthorized();
      }
      const health = {
        ok: !this.closing,
        sessions: this.#sessions.size,
        hibernated: this.#hibernated.size,
      };
      return healthResponse(request, health);
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
    if (this.closing) return shuttingDown();
    const { maxPendingConnections } = this.#config;
    if (this.#pending >= maxPendingConnections) {
      this.#telemetry.count("claude.relay.refusals", 1, { "claude.relay.refusal.kind": "busy" });
      return handshakesFull(maxPendingConnections);
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
        ? shuttingDown()
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
      await this.#room.started();
      this.#hibernated.clear();
      // Their records stay as they are: another relay sharing the store may resume them.
      for (const session of [...this.#sessions.values()]) void session.forget("keep");
      await Promise.allSettled([...this.#retiring]);
      await Promise.allSettled([...this.#lingering]); // aborted: each ends within an append
      await bounded(Promise.allSettled([...this.#sockets]), SOCKET_CLOSE_WAIT_MS);
      await this.#server.shutdown();
    } finally {
      // The owner claims the store has not taken: one last attempt (bounded), no more retries.
      await this.#owners.close();
      unregisterHostExitParticipant(this.#hostExit);
      this.#resolveClosed();
    }
  }
}

async function bounded(promise: Promise<unknown>, ms: number): Promise<void> {
  using limit = deadline(ms);
  await abortable(promise, limit.signal).catch(() => {});
}

/* A store's failure (or its bound passing) while the subprocess adapter loaded the transcript. */
function isStoreFailure(error: unknown): boolean {
  return isDuplexError(error, "store_failed") || isDuplexError(error, "timeout");
}
