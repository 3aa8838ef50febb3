// This module is browser compatible.
/**
 * {@linkcode DuplexSession}: one long-lived conversation with a `claude`
 * process (or anything speaking its protocol) over a transport.
 *
 * @module
 */

import { FrameDecoder } from "../codec/frame_decoder.ts";
import { encodeLine } from "../codec/ndjson_encode_stream.ts";
import { describeExit, DuplexError, type TransportExit } from "../errors.ts";
import type {
  FinalPermissionDecision,
  PermissionHandler,
  PermissionRequest,
} from "../permissions/permission.ts";
import type { UserContent } from "../protocol/content.ts";
import type { CanUseToolRequest, ControlRequestBody, PermissionMode } from "../protocol/control.ts";
import type {
  AgentDefinition,
  ControlRequestMap,
  ControlSubtype,
  McpServerStatus,
} from "../protocol/control_requests.ts";
import { type HookCallback, type HooksOptions, registerHooks } from "../hooks/hooks.ts";
import type { SdkMcpServer } from "../mcp/mcp_server.ts";
import { answerMcpMessage, initializeFieldsFor } from "../mcp/sdk_mcp_wiring.ts";
import { classifyFrame, isRecord, isSystemInit } from "../protocol/guards.ts";
import type { ResultFrame } from "../protocol/messages.ts";
import { Broadcast } from "../subscriptions/_broadcast.ts";
import type { Subscription, SubscriptionOptions } from "../subscriptions/subscription.ts";
import type { Transport, TransportFactory, TransportInfo } from "../transport/transport.ts";
import { ControlChannel, type ControlRequestOptions } from "./_control_channel.ts";
import { InboundRequests } from "./_inbound.ts";
import { denyAll, PermissionBroker } from "./_permission_broker.ts";
import { elicitationFrom, type ElicitationHandler, elicitationPayload } from "./elicitation.ts";
import { readSessionInfo, type SessionInfo } from "./session_info.ts";
import type { DiagnosticEvent, ExitStatus, SessionEvent } from "./events.ts";
import { isUsable, type SessionState, transition } from "./session_state.ts";
import { readTurnResult, type TurnResult } from "./turn_result.ts";

/** Options of {@linkcode DuplexSession.start}. */
export interface DuplexSessionOptions {
  /** What carries the lines: a transport, or a factory that opens one (for example `subprocess()`). */
  transport: Transport | TransportFactory;
  /**
   * Decides on tool permission requests. Sync or async; may return
   * `{ behavior: "defer" }` and answer later with `respondToPermission`.
   *
   * @default {denies every request with a message saying no handler was set}
   */
  onPermission?: PermissionHandler;
  /** Deny a permission request nobody decided on within this many milliseconds. By default requests wait (they can be answered minutes later). */
  permissionTimeoutMs?: number;
  /**
   * The longest line accepted from the CLI, in bytes; longer lines are skipped and reported.
   *
   * @default {67108864}
   */
  maxLineBytes?: number;
  /**
   * How long a control request of ours waits for the CLI's answer.
   *
   * @default {60000}
   */
  controlTimeoutMs?: number;
  /**
   * After a turn is aborted or times out, how long to wait for the CLI to end
   * it (after the interrupt) before giving up on it.
   *
   * @default {10000}
   */
  interruptGraceMs?: number;
  /**
   * What to do when the CLI does not even acknowledge the interrupt of an
   * aborted or timed-out turn within `interruptGraceMs`: `"close"` the
   * session (and so end the process), or `"keep"` it.
   *
   * @default {"close"}
   */
  onUnresponsive?: "close" | "keep";
  /**
   * A bound on `close()`, over the transport's own bounded shutdown.
   *
   * @default {30000}
   */
  closeTimeoutMs?: number;
  /**
   * Keep each turn's events in `turn.events`.
   *
   * @default {true}
   */
  collectTurnEvents?: boolean;
  /** Aborts the start; aborting it after the start closes the session (an owner signal). */
  signal?: AbortSignal;
  /** Replaces the system prompt (sent in `initialize`). */
  systemPrompt?: string | readonly string[];
  /** Appended to the system prompt (sent in `initialize`). */
  appendSystemPrompt?: string;
  /** Sub-agents, by name (sent in `initialize`). */
  agents?: Record<string, AgentDefinition>;
  /** Hooks as functions, by event (registered in `initialize`, answered on `hook_callback`). */
  hooks?: HooksOptions;
  /**
   * In-process MCP servers (made with `mcpServer()`): registered in
   * `initialize`, their tools run in this process when the model calls
   * `mcp__<server>__<tool>` (after the usual permission request).
   */
  mcpServers?: readonly SdkMcpServer[];
  /** A JSON schema the final answer must follow (structured output; sent in `initialize`). */
  jsonSchema?: Record<string, unknown>;
  /**
   * Send `initialize` even when no option above needs it (`true`), or add
   * raw fields to it. It is written before the first user line without
   * waiting for the reply; `session.initialized` resolves with the reply.
   */
  initialize?: boolean | Record<string, unknown>;
  /**
   * Answers MCP elicitation requests (a server asks the user for input).
   *
   * @default {declines every elicitation}
   */
  onElicitation?: ElicitationHandler;
  /**
   * Answers any other control request the CLI sends (for example
   * `request_user_dialog`). Return the reply payload, or `undefined` to
   * answer "unsupported". Throwing answers with the error.
   */
  onControlRequest?: (
    subtype: string,
    request: Readonly<Record<string, unknown>>,
    context: { signal: AbortSignal },
  ) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;
}

/** Options of {@linkcode DuplexSession.send}. */
export interface SendOptions {
  /** Aborting interrupts the turn in the CLI; `send` then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Interrupts the turn after this many milliseconds; `send` then rejects with a `timeout` DuplexError. */
  timeoutMs?: number;
  /** The user line's uuid (default: a random one). Results are matched to turns by it. */
  uuid?: string;
  /** Keep this turn's events in `turn.events` (overrides the session option). */
  collectEvents?: boolean;
}

/** Options of waits that take a bound. */
export interface WaitOptions {
  /** Stop waiting after this many milliseconds. */
  timeoutMs?: number;
  /** Stop waiting when aborted (rejects with the reason). */
  signal?: AbortSignal;
}

/** Options of {@linkcode DuplexSession.subscribe}. */
export interface SubscribeOptions extends SubscriptionOptions {
  /** Start with the events of the turn in flight (up to `capacity`), for late subscribers. */
  replayTurn?: boolean;
}

/** One finished turn. */
export interface Turn {
  /** The parsed `result`. */
  readonly result: TurnResult;
  /** Every event the session delivered during the turn, the result included (empty if not collected). */
  readonly events: readonly SessionEvent[];
  /** The uuid of the user line that started the turn. */
  readonly uuid: string;
}

/** The CLI's acknowledgement of an interrupt. */
export interface InterruptReceipt {
  /** Queued user lines the CLI kept. */
  readonly stillQueued: readonly string[];
  /** Whether a turn of ours was running when the interrupt was sent. */
  readonly turnWasRunning: boolean;
  /** The CLI's reply payload. */
  readonly raw: Record<string, unknown>;
}

interface ActiveTurn {
  readonly uuid: string;
  readonly events: SessionEvent[] | undefined;
  readonly resolve: (turn: Turn) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  aborted: { reason: unknown } | undefined;
  graceTimer: ReturnType<typeof setTimeout> | undefined;
}

type InboundHandler = (requestId: string, request: ControlRequestBody) => void;

const START = Symbol("DuplexSession.start");
const DRAIN_MS = 2_000;

/**
 * A long-lived conversation with the Claude Code CLI over its stream-json
 * duplex protocol: many turns on one process, tool permissions answered by
 * code or later by a person, cancellation with `AbortSignal`, bounded
 * fan-out of events to any number of subscribers.
 *
 * @example Two turns with a scripted CLI
 * ```ts
 * import { DuplexSession } from "@duplex/claude";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ echo: true });
 * await using session = await DuplexSession.start({ transport: cli.transport });
 * const first = await session.send("Say hi.");
 * assert.equal(first.result.text, "Echo: Say hi.");
 * const second = await session.send([{ type: "text", text: "Again" }]);
 * assert.equal(second.result.isError, false);
 * assert.equal(session.sessionId, second.result.sessionId);
 * ```
 */
export class DuplexSession implements AsyncDisposable {
  readonly #transport: Transport;
  readonly #broadcast = new Broadcast<SessionEvent>(laggedEvent);
  readonly #decoder: FrameDecoder;
  readonly #control: ControlChannel;
  readonly #permissions: PermissionBroker;
  readonly #inbound = new Map<string, InboundHandler>();
  readonly #inboundRequests: InboundRequests;
  readonly #hookCallbacks: ReadonlyMap<string, HookCallback>;
  #info: SessionInfo | undefined;
  #initialized: Promise<SessionInfo | undefined> = Promise.resolve(undefined);
  #initFailure: { error: unknown; reported: boolean } | undefined;
  readonly #options: DuplexSessionOptions;
  readonly #exit = Promise.withResolvers<ExitStatus>();
  readonly #readDone: Promise<void>;
  #state: SessionState = "ready";
  #status: ExitStatus = { state: "running" };
  #sessionId: string | undefined;
  #turn: ActiveTurn | undefined;
  #totalCostUsd = 0;
  #closing: Promise<ExitStatus> | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #ownerAbort: (() => void) | undefined;

  /**
   * Opens the transport and starts reading from it.
   *
   * @param options The transport, the permission handler and limits.
   * @returns The running session.
   * @throws {DuplexError} When the transport cannot be opened (for example `cli_not_found`).
   */
  static async start(options: DuplexSessionOptions): Promise<DuplexSession> {
    options.signal?.throwIfAborted();
    checkOptions(options);
    const transport = typeof options.transport === "function"
      ? await options.transport({ signal: options.signal ?? new AbortController().signal })
      : options.transport;
    if (options.signal?.aborted) {
      await transport.close();
      throw options.signal.reason;
    }
    return new DuplexSession(START, transport, options);
  }

  /**
   * Use {@linkcode DuplexSession.start}.
   *
   * @param token A private token.
   * @param transport An open transport.
   * @param options The session options.
   */
  constructor(token: typeof START, transport: Transport, options: DuplexSessionOptions) {
    if (token !== START) {
      throw new TypeError("Cannot construct DuplexSession: use DuplexSession.start()");
    }
    this.#transport = transport;
    this.#options = options;
    this.#decoder = new FrameDecoder({
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      onFrame: (frame) => this.#onFrame(frame),
      onDiagnostic: (diagnostic) => this.#publish(diagnostic),
    });
    this.#control = new ControlChannel(
      (frame) => this.#write(frame),
      options.controlTimeoutMs ?? 60_000,
    );
    this.#permissions = new PermissionBroker({
      handler: options.onPermission ?? denyAll,
      reply: (requestId, payload) =>
        this.#write({
          type: "control_response",
          response: { subtype: "success", request_id: requestId, response: payload },
        }),
      publish: (event) => this.#publish(event),
      timeoutMs: options.permissionTimeoutMs,
    });
    this.#inbound.set("can_use_tool", (requestId, request) => {
      this.#permissions.handle(requestId, request as CanUseToolRequest);
    });
    this.#inboundRequests = new InboundRequests((requestId, outcome) =>
      this.#write({
        type: "control_response",
        response: outcome.ok
          ? { subtype: "success", request_id: requestId, response: outcome.payload }
          : { subtype: "error", request_id: requestId, error: outcome.error },
      })
    );
    const hooks = registerHooks(options.hooks ?? {});
    this.#hookCallbacks = hooks.callbacks;
    this.#inbound.set(
      "hook_callback",
      (requestId, request) => this.#onHookCallback(requestId, request),
    );
    const servers = options.mcpServers ?? [];
    this.#inbound.set("mcp_message", (requestId, request) => {
      const message = {
        // deno-lint-ignore camelcase
        server_name: typeof request.server_name === "string" ? request.server_name : "",
        message: request.message,
      };
      this.#inboundRequests.serve(requestId, async (signal) => ({
        ...await answerMcpMessage(servers, message, signal),
      }));
    });
    this.#inbound.set("elicitation", (requestId, request) => {
      const handler = options.onElicitation;
      this.#inboundRequests.serve(
        requestId,
        async (signal) =>
          handler
            ? elicitationPayload(await handler(elicitationFrom(request), { signal }))
            : { action: "decline" },
      );
    });
    this.#readDone = this.#readLoop();
    if (transport.stderr) this.#stderrLoop(transport.stderr);
    const interval = transport.info.keepAliveIntervalMs;
    if (interval !== undefined && interval > 0) {
      this.#keepAlive = setInterval(() => {
        this.#write({ type: "keep_alive" }).catch(() => {});
      }, interval);
    }
    const owner = options.signal;
    if (owner) {
      this.#ownerAbort = () => void this.close();
      owner.addEventListener("abort", this.#ownerAbort, { once: true });
    }
    transport.closed.then((exit) => this.#onTransportClosed(exit));
    const init = initializeFields(options, hooks.initialize);
    if (init) this.#sendInitialize(init);
  }

  /** The CLI's session id, known once the first turn started (`undefined` before). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Where the session is in its life. */
  get state(): SessionState {
    return this.#state;
  }

  /** True while the session accepts work (not closing, not ended). */
  get alive(): boolean {
    return isUsable(this.#state);
  }

  /** Running, or how the session ended; kept after the end. */
  get exitStatus(): ExitStatus {
    return this.#status;
  }

  /** The transport's description of itself and its peer. */
  get transportInfo(): TransportInfo {
    return this.#transport.info;
  }

  /** The CLI's process id, when the transport started a process. */
  get pid(): number | undefined {
    return this.#transport.info.pid;
  }

  /** True while a turn is running. */
  get busy(): boolean {
    return this.#turn !== undefined;
  }

  /** The CLI's answer to `initialize` (commands, models, account, version…), once it came. */
  get info(): SessionInfo | undefined {
    return this.#info;
  }

  /**
   * Resolves with the CLI's answer to `initialize` (`undefined` when none was
   * sent); rejects with a `control_failed` or `timeout` DuplexError when it failed.
   */
  get initialized(): Promise<SessionInfo | undefined> {
    return this.#initialized;
  }

  /** The permission requests waiting for a decision (deferred ones included), oldest first. */
  get pendingPermissions(): readonly PermissionRequest[] {
    return this.#permissions.pending();
  }

  /**
   * Subscribes to the session's events. Each subscriber has its own bounded
   * queue; a slow one never slows the session or the others. Leaving the
   * `for await` loop unsubscribes. After the session ended, a new
   * subscription yields the `exit` event and ends.
   *
   * @param options Capacity, overflow policy, signal, and whether to replay the turn in flight.
   * @returns An async iterable of events.
   */
  subscribe(options: SubscribeOptions = {}): Subscription<SessionEvent> {
    const backlog: SessionEvent[] = options.replayTurn ? [...(this.#turn?.events ?? [])] : [];
    if (this.#status.state !== "running") backlog.push({ type: "exit", status: this.#status });
    return this.#broadcast.subscribe(options, backlog);
  }

  /**
   * Sends a user turn and waits for its result.
   *
   * @param content Text, or Messages-API content blocks.
   * @param options A signal that interrupts the turn, a timeout, the line's uuid.
   * @returns The turn's result and its events.
   * @throws {DuplexError} `turn_in_flight` while another turn runs; `closed` or
   * `process_exited` when the session ends first; `timeout` after `timeoutMs`.
   * Rejects with `signal.reason` when the signal aborts.
   */
  async send(content: UserContent, options: SendOptions = {}): Promise<Turn> {
    const { signal, timeoutMs } = options;
    signal?.throwIfAborted();
    this.#assertUsable("send a turn");
    if (this.#turn) {
      throw new DuplexError(
        "turn_in_flight",
        "Cannot send a turn: another turn is running; await its send() or call interrupt()",
      );
    }
    if (timeoutMs !== undefined && !(timeoutMs > 0)) {
      throw new RangeError(`Cannot send a turn: timeoutMs must be > 0, got ${timeoutMs}`);
    }
    if (this.#initFailure && !this.#initFailure.reported) {
      this.#initFailure.reported = true;
      throw this.#initFailure.error;
    }
    const message = { role: "user", content: toContentBlocks(content) };
    const uuid = options.uuid ?? crypto.randomUUID();
    const { promise, resolve, reject } = Promise.withResolvers<Turn>();
    const collect = options.collectEvents ?? this.#options.collectTurnEvents ?? true;
    const turn: ActiveTurn = {
      uuid,
      events: collect ? [] : undefined,
      resolve,
      reject,
      settled: false,
      aborted: undefined,
      graceTimer: undefined,
    };
    this.#turn = turn;
    const onAbort = (): void => this.#abortTurn(turn, signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
      this.#abortTurn(
        turn,
        new DuplexError(
          "timeout",
          `Cannot finish the turn: no result within ${timeoutMs} ms; the turn was interrupted`,
        ),
      );
    }, timeoutMs);
    try {
      this.#write({ type: "user", session_id: "", parent_tool_use_id: null, message, uuid })
        .catch((error) => this.#settleTurn(turn, { error }));
      return await promise;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Interrupts the running turn (harmless when none runs: the CLI acknowledges
   * and the turn-less result it may send is only broadcast).
   *
   * @param options A signal and a timeout for the CLI's acknowledgement.
   * @returns The CLI's receipt.
   * @throws {DuplexError} `control_failed`, `timeout`, `closed` or `process_exited`.
   */
  async interrupt(options: ControlRequestOptions = {}): Promise<InterruptReceipt> {
    const turnWasRunning = this.#turn !== undefined;
    const raw = await this.request("interrupt", {}, options);
    const stillQueued = Array.isArray(raw.still_queued)
      ? raw.still_queued.filter((item): item is string => typeof item === "string")
      : [];
    return { stillQueued, turnWasRunning, raw };
  }

  /**
   * Sends any control request and resolves with the CLI's reply payload.
   * Known subtypes (see {@linkcode ControlRequestMap}) are typed; any other
   * string is allowed for subtypes newer than this library.
   *
   * @param subtype The request subtype, for example `"mcp_status"`.
   * @param fields The request's other fields.
   * @param options A signal and a timeout.
   * @returns The `response` object of the CLI's success reply (`{}` when it sent none).
   * @throws {DuplexError} `control_failed` (with the CLI's `errorCode`), `timeout`, `closed`, `process_exited`.
   */
  request<K extends ControlSubtype>(
    subtype: K,
    fields?: ControlRequestMap[K]["request"],
    options?: ControlRequestOptions,
  ): Promise<ControlRequestMap[K]["response"]>;
  request(
    subtype: string,
    fields?: Record<string, unknown>,
    options?: ControlRequestOptions,
  ): Promise<Record<string, unknown>>;
  request(
    subtype: string,
    fields: Record<string, unknown> = {},
    options: ControlRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    try {
      options.signal?.throwIfAborted();
      this.#assertUsable(`send ${subtype}`);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#control.request(subtype, fields, options);
  }

  /**
   * Changes the permission mode for the rest of the session.
   *
   * @param mode The new mode.
   * @param options A signal and a timeout.
   * @returns The mode the CLI now uses.
   */
  async setPermissionMode(
    mode: PermissionMode,
    options: ControlRequestOptions = {},
  ): Promise<PermissionMode> {
    const reply = await this.request("set_permission_mode", { mode }, options);
    return reply.mode ?? mode;
  }

  /**
   * Switches the model for the next turns; `null` goes back to the default.
   *
   * @param model A model name or alias (`"sonnet"`), or `null`.
   * @param options A signal and a timeout.
   * @returns The resolved model name the CLI reports, if any.
   */
  async setModel(
    model: string | null,
    options: ControlRequestOptions = {},
  ): Promise<string | undefined> {
    const reply = await this.request("set_model", { model }, options);
    return typeof reply.model === "string" ? reply.model : undefined;
  }

  /**
   * Sets the thinking budget for the next turns; `null` resets it.
   *
   * @param tokens The most thinking tokens, or `null`.
   * @param options A signal and a timeout.
   */
  async setMaxThinkingTokens(
    tokens: number | null,
    options: ControlRequestOptions = {},
  ): Promise<void> {
    await this.request("set_max_thinking_tokens", { max_thinking_tokens: tokens }, options);
  }

  /**
   * Reports the MCP servers the CLI knows and their state.
   *
   * @param options A signal and a timeout.
   * @returns The servers' statuses.
   */
  async mcpStatus(options: ControlRequestOptions = {}): Promise<McpServerStatus[]> {
    const reply = await this.request("mcp_status", {}, options);
    return Array.isArray(reply.mcpServers) ? reply.mcpServers : [];
  }

  /**
   * Reports how the context window is used.
   *
   * @param options `detail` and a signal and a timeout.
   * @returns The CLI's breakdown (categories, totalTokens, maxTokens, …).
   */
  contextUsage(
    options: ControlRequestOptions & { detail?: "summary" | "full" } = {},
  ): Promise<ControlRequestMap["get_context_usage"]["response"]> {
    const { detail, ...rest } = options;
    return this.request("get_context_usage", detail ? { detail } : {}, rest);
  }

  /**
   * Reports the settings in force and where they come from.
   *
   * @param options A signal and a timeout.
   * @returns The effective settings, their sources and what was applied.
   */
  settings(
    options: ControlRequestOptions = {},
  ): Promise<ControlRequestMap["get_settings"]["response"]> {
    return this.request("get_settings", {}, options);
  }

  /**
   * Restores files the CLI changed since a user message (needs file checkpointing).
   *
   * @param userMessageId The `uuid` of the user message to rewind to (`turn.uuid`).
   * @param options `dryRun` to only report, and a signal and a timeout.
   * @returns The CLI's report.
   */
  rewindFiles(
    userMessageId: string,
    options: ControlRequestOptions & { dryRun?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    const { dryRun, ...rest } = options;
    return this.request("rewind_files", {
      user_message_id: userMessageId,
      ...(dryRun === undefined ? {} : { dry_run: dryRun }),
    }, rest);
  }

  /**
   * Answers a permission request, typically one the handler deferred. The
   * first answer wins; an unknown or already settled id is a no-op.
   *
   * @param requestId The request's id (`request.requestId`).
   * @param decision `{ behavior: "allow", … }` or `{ behavior: "deny", message, … }`.
   * @returns True when this answered a pending request, false for an unknown id.
   * @throws {DuplexError} `cannot_defer_again` for a defer decision.
   * @throws {TypeError} For a value that is not a decision.
   */
  respondToPermission(requestId: string, decision: FinalPermissionDecision): Promise<boolean> {
    try {
      return Promise.resolve(this.#permissions.respond(requestId, decision));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Waits until the session ended.
   *
   * @param options A timeout (then it resolves `{ state: "running" }`) and a signal.
   * @returns How the session ended, or `{ state: "running" }` on timeout.
   */
  waitForExit(options: WaitOptions = {}): Promise<ExitStatus> {
    const { timeoutMs, signal } = options;
    if (this.#status.state !== "running") return Promise.resolve(this.#status);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (timeoutMs === undefined && !signal) return this.#exit.promise;
    const { promise, resolve, reject } = Promise.withResolvers<ExitStatus>();
    const timer = timeoutMs === undefined
      ? undefined
      : setTimeout(() => resolve({ state: "running" }), timeoutMs);
    const onAbort = (): void => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#exit.promise.then(resolve);
    return promise.finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  }

  /**
   * Closes the session: withdraws pending permission requests, lets the
   * transport end the CLI (politely, then by force), and waits for the end.
   * Idempotent; bounded by `closeTimeoutMs`.
   *
   * @returns How the session ended.
   */
  close(): Promise<ExitStatus> {
    if (this.#closing) return this.#closing;
    if (this.#status.state !== "running") return this.#closing = Promise.resolve(this.#status);
    this.#state = transition(this.#state, "close");
    this.#permissions.abortAll("The session is closing");
    const bound = this.#options.closeTimeoutMs ?? 30_000;
    this.#closing = (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), bound);
      });
      const outcome = await Promise.race([
        this.#transport.close().then(() => this.#exit.promise),
        timedOut,
      ]).catch(() => "timeout" as const);
      clearTimeout(timer);
      if (outcome === "timeout") {
        this.#finish({
          code: null,
          signal: null,
          reason: `the transport did not close within ${bound} ms`,
          stderrTail: "",
          requested: true,
        });
      }
      return this.#exit.promise;
    })();
    return this.#closing;
  }

  /** Same as {@linkcode DuplexSession.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #assertUsable(what: string): void {
    if (isUsable(this.#state)) return;
    const status = this.#status;
    if (status.state === "failed") throw status.error;
    throw new DuplexError(
      "closed",
      `Cannot ${what}: the session is ${this.#state}; start a new session`,
      status.state === "completed" ? { exit: status.exit } : {},
    );
  }

  #write(frame: Record<string, unknown>): Promise<void> {
    return this.#transport.write(encodeLine(frame));
  }

  #publish(event: SessionEvent): void {
    this.#broadcast.publish(event);
    this.#turn?.events?.push(event);
  }

  #onFrame(raw: Record<string, unknown>): void {
    const frame = classifyFrame(raw);
    switch (frame.type) {
      case "control_request": {
        const handler = this.#inbound.get(frame.request.subtype);
        if (handler) handler(frame.request_id, frame.request);
        else this.#onOtherRequest(frame.request_id, frame.request);
        return;
      }
      case "control_response":
        if (!this.#control.settle(frame)) {
          this.#publish({
            type: "diagnostic",
            kind: "stray_control_response",
            message:
              `Ignored a control_response for ${frame.response.request_id}: no request of ours waits for it`,
          });
        }
        return;
      case "control_cancel_request":
        if (!this.#permissions.cancel(frame.request_id)) {
          this.#inboundRequests.cancel(frame.request_id);
        }
        return;
      case "keep_alive":
        return;
      case "system":
        if (isSystemInit(frame)) this.#sessionId = frame.session_id;
        break;
      case "result":
        this.#publish(frame);
        this.#onResult(frame);
        return;
    }
    this.#publish(frame);
  }

  #onResult(frame: ResultFrame): void {
    const previous = this.#totalCostUsd;
    if (typeof frame.total_cost_usd === "number") this.#totalCostUsd = frame.total_cost_usd;
    const turn = this.#turn;
    if (!turn) return;
    const uuids = Array.isArray(frame.user_message_uuids)
      ? frame.user_message_uuids
      : typeof frame.user_message_uuid === "string"
      ? [frame.user_message_uuid]
      : undefined;
    if (uuids && !uuids.includes(turn.uuid)) return; // the result of an earlier line
    const result = readTurnResult(frame, previous);
    this.#settleTurn(turn, { turn: { result, events: turn.events ?? [], uuid: turn.uuid } });
  }

  /*
   * Ends a turn the caller gave up on: interrupt it, then wait for its result.
   * If the CLI acknowledges the interrupt but sends no result within the
   * grace, the turn is given up (the session stays usable). If it does not
   * even acknowledge the interrupt, it is unresponsive: with
   * `onUnresponsive: "close"` (the default) the session is closed. Each step
   * is reported as a `diagnostic` event.
   */
  #abortTurn(turn: ActiveTurn, reason: unknown): void {
    if (turn.settled || turn.aborted) return;
    turn.aborted = { reason };
    const grace = this.#options.interruptGraceMs ?? 10_000;
    const why = reason instanceof Error ? reason.message : String(reason);
    this.#publish({
      type: "diagnostic",
      kind: "turn_interrupted",
      message: `Interrupting the turn (${why})`,
    });
    let acknowledged = false;
    this.#control.request("interrupt", {}, { timeoutMs: grace }).then(
      () => acknowledged = true,
      () => {},
    );
    turn.graceTimer = setTimeout(() => {
      if (turn.settled) return;
      this.#settleTurn(turn, { error: reason });
      if (acknowledged || !this.alive) {
        this.#publish({
          type: "diagnostic",
          kind: "turn_abandoned",
          message: `The CLI acknowledged the interrupt but sent no result within ${grace} ms; ` +
            `the turn was given up`,
        });
      } else if ((this.#options.onUnresponsive ?? "close") === "close") {
        this.#publish({
          type: "diagnostic",
          kind: "cli_unresponsive",
          message:
            `The CLI did not acknowledge an interrupt within ${grace} ms; closing the session`,
        });
        void this.close();
      } else {
        this.#publish({
          type: "diagnostic",
          kind: "cli_unresponsive",
          message:
            `The CLI did not acknowledge an interrupt within ${grace} ms; the session is kept ` +
            `(onUnresponsive: "keep")`,
        });
      }
    }, grace);
  }

  #settleTurn(turn: ActiveTurn, outcome: { turn: Turn } | { error: unknown }): void {
    if (turn.settled) return;
    turn.settled = true;
    clearTimeout(turn.graceTimer);
    if (this.#turn === turn) this.#turn = undefined;
    if (turn.aborted) turn.reject(turn.aborted.reason);
    else if ("turn" in outcome) turn.resolve(outcome.turn);
    else turn.reject(outcome.error);
  }

  #sendInitialize(fields: Record<string, unknown>): void {
    const pending = this.#control.request("initialize", fields).then((reply) => {
      this.#info = readSessionInfo(reply);
      return this.#info;
    });
    pending.catch((error) => {
      this.#initFailure = { error, reported: false };
      const turn = this.#turn;
      if (turn && !turn.settled) {
        this.#initFailure.reported = true;
        this.#settleTurn(turn, { error });
      }
    });
    this.#initialized = pending;
  }

  #onHookCallback(requestId: string, request: ControlRequestBody): void {
    const id = typeof request.callback_id === "string" ? request.callback_id : "";
    const callback = this.#hookCallbacks.get(id);
    this.#inboundRequests.serve(requestId, async (signal) => {
      if (!callback) {
        throw new Error(`No hook is registered with callback id ${JSON.stringify(id)}`);
      }
      const input = isRecord(request.input) ? request.input : {};
      const toolUseId = typeof request.tool_use_id === "string" ? request.tool_use_id : undefined;
      // deno-lint-ignore no-explicit-any
      const output: unknown = await callback(input as any, { signal, toolUseId });
      if (output === undefined || output === null) return {};
      if (!isRecord(output)) {
        throw new TypeError(`Hook ${id} returned ${typeof output}, not an object`);
      }
      return output;
    });
  }

  #onOtherRequest(requestId: string, request: ControlRequestBody): void {
    const handler = this.#options.onControlRequest;
    if (!handler) {
      this.#replyUnsupported(requestId, request.subtype);
      return;
    }
    this.#inboundRequests.serve(requestId, async (signal) => {
      const reply = await handler(request.subtype, request, { signal });
      if (reply === undefined) {
        throw new Error(`Unsupported control request subtype: ${request.subtype}`);
      }
      return reply;
    });
  }

  #replyUnsupported(requestId: string, subtype: string): void {
    this.#write({
      type: "control_response",
      response: {
        subtype: "error",
        request_id: requestId,
        error: `Unsupported control request subtype: ${subtype}`,
        error_code: "unsupported_request",
      },
    }).catch(() => {});
  }

  async #readLoop(): Promise<void> {
    const reader = this.#transport.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.#decoder.push(value);
      }
    } catch (error) {
      this.#publish(streamError("The CLI's output stream failed", error));
    } finally {
      try {
        this.#decoder.end();
      } catch (error) {
        this.#publish(streamError("Handling the CLI's last line failed", error));
      }
      reader.releaseLock();
    }
  }

  async #stderrLoop(stderr: ReadableStream<string>): Promise<void> {
    try {
      for await (const line of stderr) this.#publish({ type: "stderr", line });
    } catch (error) {
      this.#publish(streamError("The CLI's stderr stream failed", error));
    }
  }

  async #onTransportClosed(exit: TransportExit): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      this.#readDone.then(() => true),
      new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), DRAIN_MS)),
    ]);
    clearTimeout(timer);
    if (!drained) this.#transport.readable.cancel().catch(() => {});
    this.#finish(exit);
  }

  #finish(exit: TransportExit): void {
    if (this.#status.state !== "running") return;
    const clean = exit.code === 0 && exit.signal === null;
    const closing = this.#state === "closing";
    this.#state = transition(this.#state, clean ? "ended_clean" : "ended_failed");
    const error = closing
      ? new DuplexError("closed", "Cannot finish: the session was closed", { exit })
      : new DuplexError(
        "process_exited",
        `The CLI ended (${describeExit(exit)}); start a new session to continue`,
        { exit },
      );
    this.#status = this.#state === "closed"
      ? { state: "completed", code: exit.code, signal: exit.signal, exit }
      : { state: "failed", code: exit.code, signal: exit.signal, error, exit };
    this.#control.failAll(error);
    if (this.#turn) this.#settleTurn(this.#turn, { error });
    this.#permissions.abortAll("The session ended");
    this.#inboundRequests.abortAll("The session ended");
    clearInterval(this.#keepAlive);
    if (this.#ownerAbort) this.#options.signal?.removeEventListener("abort", this.#ownerAbort);
    this.#publish({ type: "exit", status: this.#status });
    this.#broadcast.close();
    this.#exit.resolve(this.#status);
  }
}

function initializeFields(
  options: DuplexSessionOptions,
  hooks: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  if (Object.keys(hooks).length > 0) fields.hooks = hooks;
  if (options.systemPrompt !== undefined) {
    fields.systemPrompt = typeof options.systemPrompt === "string"
      ? [options.systemPrompt]
      : [...options.systemPrompt];
  }
  if (options.appendSystemPrompt !== undefined) {
    fields.appendSystemPrompt = options.appendSystemPrompt;
  }
  if (options.agents !== undefined) fields.agents = options.agents;
  if (options.jsonSchema !== undefined) fields.jsonSchema = options.jsonSchema;
  if (options.mcpServers?.length) Object.assign(fields, initializeFieldsFor(options.mcpServers));
  if (isRecord(options.initialize)) Object.assign(fields, options.initialize);
  return Object.keys(fields).length > 0 || options.initialize === true ? fields : undefined;
}

function laggedEvent(count: number): SessionEvent {
  return { type: "lagged", count };
}

function streamError(what: string, error: unknown): DiagnosticEvent {
  const reason = error instanceof Error ? error.message : String(error);
  return { type: "diagnostic", kind: "stream_error", message: `${what}: ${reason}` };
}

function toContentBlocks(content: UserContent): unknown[] {
  if (typeof content === "string") {
    if (content.length === 0) throw new TypeError("Cannot send a turn: the text is empty");
    return [{ type: "text", text: content }];
  }
  if (!Array.isArray(content) || content.length === 0) {
    throw new TypeError(
      "Cannot send a turn: content must be a non-empty string or a non-empty array of content blocks",
    );
  }
  for (const block of content) {
    if (!isRecord(block) || typeof block.type !== "string") {
      throw new TypeError(
        "Cannot send a turn: every content block must be an object with a string `type`",
      );
    }
  }
  return [...content];
}

function checkOptions(options: DuplexSessionOptions): void {
  if (!isRecord(options) || options.transport === undefined) {
    throw new TypeError("Cannot start a session: options.transport is required");
  }
  for (const key of ["onPermission", "onElicitation", "onControlRequest"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new TypeError(`Cannot start a session: ${key} must be a function`);
    }
  }
  if (
    options.onUnresponsive !== undefined && options.onUnresponsive !== "close" &&
    options.onUnresponsive !== "keep"
  ) {
    throw new TypeError('Cannot start a session: onUnresponsive must be "close" or "keep"');
  }
  if (options.hooks !== undefined) registerHooks(options.hooks); // throws a TypeError naming the bad entry
  if (options.mcpServers !== undefined) {
    const names = new Set<string>();
    for (const server of options.mcpServers) {
      if (
        !isRecord(server) || typeof server.handle !== "function" || typeof server.name !== "string"
      ) {
        throw new TypeError(
          "Cannot start a session: mcpServers must hold servers made with mcpServer()",
        );
      }
      if (names.has(server.name)) {
        throw new TypeError(`Cannot start a session: two MCP servers are named ${server.name}`);
      }
      names.add(server.name);
    }
  }
  const prompt = options.systemPrompt;
  if (
    prompt !== undefined && typeof prompt !== "string" &&
    !(Array.isArray(prompt) && prompt.every((part) => typeof part === "string"))
  ) {
    throw new TypeError(
      "Cannot start a session: systemPrompt must be a string or an array of strings",
    );
  }
  for (
    const key of [
      "permissionTimeoutMs",
      "maxLineBytes",
      "controlTimeoutMs",
      "interruptGraceMs",
      "closeTimeoutMs",
    ] as const
  ) {
    const value = options[key];
    if (value !== undefined && !(typeof value === "number" && value > 0)) {
      throw new RangeError(
        `Cannot start a session: ${key} must be a positive number, got ${value}`,
      );
    }
  }
}

export type { FinalPermissionDecision };
