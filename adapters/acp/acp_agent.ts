/**
 * {@linkcode AcpAgent}: Claude Code as an Agent Client Protocol agent. Each
 * ACP session is a conversation of a `SessionPool` (keyed by the ACP session
 * id, which is also the CLI's session id for a local CLI), so an editor may
 * keep many open: idle ones are hibernated and resumed at their next prompt.
 *
 * @module
 */

import {
  agent,
  type AgentContext,
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  methods,
  ndJsonStream,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  RequestError,
  type SessionConfigOption,
  type SessionUpdate,
  type SetSessionConfigOptionRequest,
} from "./_acp.ts";
import { type DuplexSession, isDuplexError, type TransportFactory } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../subprocess/mod.ts";
import { SessionPool } from "../subprocess/pool/mod.ts";
import { remote } from "../remote/mod.ts";
import { messageOf } from "../../src/_values.ts";
import { VERSION } from "../../src/version.ts";
import type { AcpAgentOptions } from "./acp_options.ts";
import { AcpSession } from "./_acp_session.ts";
import { askClient } from "./_ask_client.ts";
import { availableCommands, configOptions, modeIds, modeState } from "./_session_config.ts";
import { promptSession } from "./_prompt_turn.ts";
import { loadHistory, storedSessions } from "./_history.ts";
import type { PermissionMode } from "../../src/protocol/control.ts";

/* A new conversation's title carries the session id to the launch (stripped there). */
const ID_MARK = "\u0000acp-session:";

/** The two byte streams of a client: what it writes, and where the agent writes. */
export interface AcpByteStreams {
  /** Newline-delimited JSON-RPC from the client (a program's stdin). */
  readonly readable: ReadableStream<Uint8Array>;
  /** Where the agent writes its messages (a program's stdout). */
  readonly writable: WritableStream<Uint8Array>;
}

/** One client's connection. */
export interface AcpConnection {
  /** Aborted when the connection ends. */
  readonly signal: AbortSignal;
  /** Resolves when the connection ended (the client closed its stream, or `close`). */
  readonly closed: Promise<void>;
  /** Ends the connection. */
  close(): void;
}

/**
 * An ACP agent over Claude Code. `connect(streams)` serves one client (an
 * editor) on newline-delimited JSON-RPC; `serveAcp` wires it to stdio.
 *
 * @example Serve the editor on stdio
 * ```ts ignore
 * import { AcpAgent } from "@duplex/claude/acp";
 *
 * await using acp = new AcpAgent({ process: { model: "sonnet" } });
 * const connection = acp.connect({ readable: Deno.stdin.readable, writable: Deno.stdout.writable });
 * await connection.closed;
 * ```
 */
export class AcpAgent implements AsyncDisposable {
  readonly #options: AcpAgentOptions;
  readonly #pool: SessionPool;
  readonly #sessions = new Map<string, AcpSession>();
  #client: AgentContext | undefined;
  #capabilities: ClientCapabilities | undefined;
  #closed = false;

  /**
   * Makes an agent; no CLI starts before the first `session/new`.
   *
   * @param options The CLI's options, a relay, a store, telemetry, limits.
   */
  constructor(options: AcpAgentOptions = {}) {
    this.#options = options;
    const process: SubprocessOptions = {
      ...options.process,
      includePartialMessages: true,
      ...(options.sessionStore ? { sessionStore: options.sessionStore } : {}),
      ...(options.allowBypassPermissions ? { allowDangerouslySkipPermissions: true } : {}),
    };
    this.#pool = new SessionPool({
      process,
      session: {
        collectTurnEvents: false,
        ...options.session,
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      },
      onPermission: (request, { key, session }) =>
        askClient(
          {
            state: this.#sessions.get(key),
            client: this.#client,
            bypass: this.#bypass,
            log: (message) => this.#log(message),
            notify: (update) => this.#notify(key, update),
          },
          session,
          request,
        ),
      ...(options.maxLive === undefined ? {} : { maxLive: options.maxLive }),
      ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
      launch: (launched) => this.#launch(launched),
    });
  }

  /** The ids of the open ACP sessions. */
  get sessionIds(): readonly string[] {
    return [...this.#sessions.keys()];
  }

  /** The pool behind the sessions (its `health`, `peek`). */
  get pool(): SessionPool {
    return this.#pool;
  }

  /**
   * Serves one client on two byte streams (newline-delimited JSON-RPC).
   * Malformed input is answered with a JSON-RPC error; it never ends the
   * connection.
   *
   * @param streams What the client writes, and where the agent writes.
   * @returns The connection; `closed` resolves when the client went away.
   */
  connect(streams: AcpByteStreams): AcpConnection {
    const app = agent({ name: this.#options.agentInfo?.name ?? "@duplex/claude/acp" })
      .onConnect((connection) => {
        this.#client = connection.client;
      })
      .onRequest(methods.agent.initialize, ({ params }) => this.#initialize(params))
      .onRequest(methods.agent.authenticate, () => ({}))
      .onRequest(methods.agent.session.new, ({ params }) => this.#newSession(params))
      .onRequest(methods.agent.session.load, ({ params }) => this.#load(params, true))
      .onRequest(
        methods.agent.session.resume,
        async ({ params }) =>
          await this.#load({ ...params, mcpServers: params.mcpServers ?? [] }, false),
      )
      .onRequest(methods.agent.session.list, ({ params }) => this.#list(params))
      .onRequest(methods.agent.session.close, async ({ params }) => {
        await this.#closeSession(params.sessionId);
        return {};
      })
      .onRequest(methods.agent.session.prompt, ({ params }) => this.#prompt(params))
      .onNotification(methods.agent.session.cancel, ({ params }) => {
        this.#sessions.get(params.sessionId)?.cancel();
      })
      .onRequest(methods.agent.session.setMode, async ({ params }) => {
        await this.#setMode(this.#require(params.sessionId), params.modeId);
        return {};
      })
      .onRequest(methods.agent.session.setConfigOption, ({ params }) => this.#setConfig(params));
    return app.connect(ndJsonStream(streams.writable, streams.readable));
  }

  /**
   * Ends every session (their CLIs close) and the pool. Idempotent.
   *
   * @returns Once every process has ended.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const state of this.#sessions.values()) state.cancel();
    this.#sessions.clear();
    await this.#pool.close();
  }

  /** Same as {@linkcode AcpAgent.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #log(message: string): void {
    this.#options.onLog?.(message);
  }

  #launch(options: SubprocessOptions): TransportFactory {
    const { title, ...rest } = options;
    const id = title?.startsWith(ID_MARK) ? title.slice(ID_MARK.length) : undefined;
    const chosen: SubprocessOptions = {
      ...rest,
      ...(title !== undefined && id === undefined ? { title } : {}),
      ...(id === undefined ? {} : { sessionId: id }),
    };
    if (this.#options.launch) return this.#options.launch(chosen);
    const relay = this.#options.relay;
    if (relay) {
      return remote({
        url: relay.url,
        token: relay.token,
        spawn: {
          includePartialMessages: true,
          ...(chosen.model === undefined ? {} : { model: chosen.model }),
          ...(chosen.permissionMode === undefined ? {} : { permissionMode: chosen.permissionMode }),
          ...(chosen.resume === undefined ? {} : { resume: chosen.resume }),
        },
      });
    }
    return subprocess(chosen);
  }

  #initialize(params: InitializeRequest): InitializeResponse {
    this.#capabilities = params.clientCapabilities;
    const info = this.#options.agentInfo ?? {};
    return {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      agentInfo: {
        name: info.name ?? "@duplex/claude/acp",
        title: info.title ?? "Claude Code",
        version: info.version ?? VERSION,
      },
      authMethods: [],
    };
  }

  #require(sessionId: string): AcpSession {
    const state = this.#sessions.get(sessionId);
    if (!state) throw RequestError.sessionNotFound(sessionId);
    return state;
  }

  get #bypass(): boolean {
    return this.#options.allowBypassPermissions === true;
  }

  get #terminals(): boolean {
    const meta = this.#capabilities?._meta;
    return typeof meta === "object" && meta !== null && meta.terminal_output === true;
  }

  /* Acquires the session's CLI (waking it if hibernated) and applies what changed since it started. */
  async #acquire(state: AcpSession, resume?: string): Promise<DuplexSession> {
    if (this.#closed) {
      throw RequestError.internalError(undefined, "Cannot open a session: the agent is closing");
    }
    let session: DuplexSession;
    try {
      session = await this.#pool.acquire(state.id, {
        cwd: state.cwd,
        ...(state.mode === "default" ? {} : { permissionMode: state.mode }),
        ...(state.model === undefined ? {} : { model: state.model }),
        ...(resume === undefined ? { title: ID_MARK + state.id } : { resume }),
      });
    } catch (error) {
      if (isDuplexError(error, "not_found")) throw RequestError.sessionNotFound(state.id);
      throw RequestError.internalError(undefined, `Cannot start Claude Code: ${messageOf(error)}`);
    }
    try {
      await state.apply(session);
    } catch (error) {
      this.#pool.release(state.id);
      throw RequestError.internalError(
        undefined,
        `Cannot configure the session: ${messageOf(error)}`,
      );
    }
    return session;
  }

  async #open(params: NewSessionRequest, id: string, resume?: string): Promise<AcpSession> {
    if (typeof params.cwd !== "string" || !params.cwd.startsWith("/")) {
      throw RequestError.invalidParams(
        undefined,
        "Cannot open a session: cwd must be an absolute path",
      );
    }
    const state = new AcpSession(id, params.cwd, {
      mcpServers: params.mcpServers ?? [],
      mode: this.#options.process?.permissionMode ?? "default",
      model: this.#options.process?.model,
      terminals: this.#terminals,
    });
    this.#sessions.set(id, state);
    try {
      await this.#acquire(state, resume);
    } catch (error) {
      this.#sessions.delete(id);
      throw error;
    }
    this.#pool.release(id);
    return state;
  }

  #described(state: AcpSession): NewSessionResponse {
    return {
      sessionId: state.id,
      modes: modeState(state.mode, this.#bypass),
      configOptions: this.#config(state),
    };
  }

  #config(state: AcpSession): SessionConfigOption[] {
    return configOptions(state.mode, state.model ?? "default", state.info, this.#bypass);
  }

  #later(state: AcpSession, update: SessionUpdate): void {
    setTimeout(() => {
      this.#notify(state.id, update).catch((error) => this.#log(messageOf(error)));
    }, 0);
  }

  async #notify(sessionId: string, update: SessionUpdate): Promise<void> {
    await this.#client?.notify(methods.client.session.update, { sessionId, update });
  }

  async #newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const state = await this.#open(params, crypto.randomUUID());
    this.#later(state, {
      sessionUpdate: "available_commands_update",
      availableCommands: availableCommands(state.info),
    });
    return this.#described(state);
  }

  async #load(params: LoadSessionRequest, replay: boolean): Promise<NewSessionResponse> {
    if (typeof params.sessionId !== "string" || params.sessionId === "") {
      throw RequestError.invalidParams(undefined, "Cannot load a session: sessionId is empty");
    }
    const known = this.#sessions.get(params.sessionId);
    const state = known ?? await this.#open(params, params.sessionId, params.sessionId);
    if (replay && !this.#options.relay) {
      const updates = await loadHistory(state, this.#options.sessionStore).catch((error) => {
        this.#log(`Cannot replay session ${state.id}: ${messageOf(error)}`);
        return [];
      });
      for (const update of updates) await this.#notify(state.id, update);
    }
    this.#later(state, {
      sessionUpdate: "available_commands_update",
      availableCommands: availableCommands(state.info),
    });
    return this.#described(state);
  }

  async #list(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    if (this.#options.relay) return { sessions: [] };
    return { sessions: await storedSessions(params.cwd ?? undefined, this.#options.sessionStore) };
  }

  async #closeSession(sessionId: string): Promise<void> {
    const state = this.#require(sessionId);
    state.cancel();
    await state.idle();
    this.#sessions.delete(sessionId);
    await this.#pool.forget(sessionId).catch((error) => this.#log(messageOf(error)));
  }

  async #prompt(params: PromptRequest): Promise<PromptResponse> {
    const state = this.#require(params.sessionId);
    if (!Array.isArray(params.prompt)) {
      throw RequestError.invalidParams(
        undefined,
        "Cannot prompt: prompt must be an array of content blocks",
      );
    }
    return await state.serially(async (signal) => {
      const session = await this.#acquire(state);
      try {
        return await promptSession(session, params.prompt, {
          signal,
          mapper: state.mapper,
          capacity: this.#options.eventCapacity ?? 4096,
          notify: (update) => this.#notify(state.id, update),
          log: (message) => this.#log(message),
        });
      } finally {
        this.#pool.release(state.id);
      }
    });
  }

  async #setMode(state: AcpSession, modeId: string): Promise<void> {
    if (!(modeIds(this.#bypass) as string[]).includes(modeId)) {
      throw RequestError.invalidParams(
        undefined,
        `Cannot set the mode: "${modeId}" is not one of ${modeIds(this.#bypass).join(", ")}`,
      );
    }
    state.mode = modeId as PermissionMode;
    await this.#applyNow(state);
    await this.#notify(state.id, {
      sessionUpdate: "config_option_update",
      configOptions: this.#config(state),
    });
  }

  /* A live CLI takes a change at once; a hibernated one when it wakes. */
  async #applyNow(state: AcpSession): Promise<void> {
    if (this.#pool.peek(state.id)?.state !== "live") return;
    await this.#acquire(state);
    this.#pool.release(state.id);
  }

  async #setConfig(
    params: SetSessionConfigOptionRequest,
  ): Promise<{ configOptions: SessionConfigOption[] }> {
    const state = this.#require(params.sessionId);
    const value = "value" in params ? params.value : undefined;
    if (typeof value !== "string") {
      throw RequestError.invalidParams(
        undefined,
        `Cannot set ${params.configId}: the value must be a string`,
      );
    }
    if (params.configId === "mode") {
      await this.#setMode(state, value);
    } else if (params.configId === "model") {
      const models = state.info?.models ?? [];
      if (models.length > 0 && !models.some((model) => model.value === value)) {
        throw RequestError.invalidParams(
          undefined,
          `Cannot set the model: "${value}" is not one of ${models.map((m) => m.value).join(", ")}`,
        );
      }
      state.model = value;
      await this.#applyNow(state);
    } else {
      throw RequestError.invalidParams(
        undefined,
        `Cannot set ${params.configId}: no such config option`,
      );
    }
    return { configOptions: this.#config(state) };
  }
}
