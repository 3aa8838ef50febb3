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
import type { FinalPermissionDecision, PermissionRequest } from "../permissions/permission.ts";
import type { UserContent } from "../protocol/content.ts";
import type { PermissionMode } from "../protocol/control.ts";
import type {
  ControlRequestMap,
  ControlSubtype,
  McpServerStatus,
} from "../protocol/control_requests.ts";
import { classifyFrame, isSystemInit } from "../protocol/guards.ts";
import type { ResultFrame } from "../protocol/messages.ts";
import { Broadcast } from "../subscriptions/_broadcast.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import type { Transport, TransportInfo } from "../transport/transport.ts";
import { ControlChannel, type ControlRequestOptions } from "./_control_channel.ts";
import { ControlRouter } from "./_control_router.ts";
import { checkOptions, initializeFields, toContentBlocks } from "./_session_input.ts";
import type { DiagnosticEvent, ExitStatus, SessionEvent } from "./events.ts";
import { readSessionInfo, type SessionInfo } from "./session_info.ts";
import { isUsable, type SessionState, transition } from "./session_state.ts";
import { readTurnResult } from "./turn_result.ts";
import type {
  DuplexSessionOptions,
  InterruptReceipt,
  SendOptions,
  SubscribeOptions,
  Turn,
  WaitOptions,
} from "./session_options.ts";

interface ActiveTurn {
  readonly uuid: string;
  readonly events: SessionEvent[] | undefined;
  /** Keep `stream_event` frames in `events` too (`collectEvents: "all"`). */
  readonly streamEvents: boolean;
  readonly resolve: (turn: Turn) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  aborted: { reason: unknown } | undefined;
  graceTimer: ReturnType<typeof setTimeout> | undefined;
}

const START = Symbol("DuplexSession.start");
const DRAIN_MS = 2_000;
/* Bytes decoded between chances for subscribers to catch up (~30 stream_event frames). */
const SLICE_BYTES = 8_192;

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
  readonly #router: ControlRouter;
  #info: SessionInfo | undefined;
  #initialized: Promise<SessionInfo | undefined> = Promise.resolve(undefined);
  #initFailure: { error: unknown; reported: boolean } | undefined;
  readonly #options: DuplexSessionOptions;
  readonly #exit = Promise.withResolvers<ExitStatus>();
  readonly #readDone: Promise<void>;
  readonly #stderrDone: Promise<void>;
  readonly #readers = new Set<ReadableStreamDefaultReader<unknown>>();
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
      retainChunks: true, // transports never change a chunk (the Transport contract)
      releaseChunks: transport.info.freshChunks === true,
    });
    this.#control = new ControlChannel(
      (frame) => this.#write(frame),
      options.controlTimeoutMs ?? 60_000,
    );
    this.#router = new ControlRouter(options, {
      write: (frame) => this.#write(frame),
      publish: (event) => this.#publish(event),
    });
    this.#readDone = this.#readLoop();
    this.#stderrDone = transport.stderr ? this.#stderrLoop(transport.stderr) : Promise.resolve();
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
    const init = initializeFields(options, this.#router.hooks);
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
    return this.#router.permissions.pending();
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
    const collect: boolean | "all" = options.collectEvents ?? this.#options.collectTurnEvents ??
      true;
    const turn: ActiveTurn = {
      uuid,
      events: collect ? [] : undefined,
      streamEvents: collect === "all",
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
  /**
   * Sends a control request of a subtype this library does not type (for
   * example one newer than it) and resolves with the CLI's reply payload.
   *
   * @param subtype The request subtype.
   * @param fields The request's other fields.
   * @param options A signal and a timeout.
   * @returns The `response` object of the CLI's success reply (`{}` when it sent none).
   * @throws {DuplexError} `control_failed` (with the CLI's `errorCode`), `timeout`, `closed`, `process_exited`.
   */
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
      return Promise.resolve(this.#router.permissions.respond(requestId, decision));
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
    this.#router.abortAll("The session is closing");
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
    let line: string;
    try {
      line = encodeLine(frame);
    } catch (error) {
      return Promise.reject(error); // a BigInt, a cycle…: a rejection the caller settles, never a throw
    }
    return this.#transport.write(line);
  }

  #publish(event: SessionEvent): void {
    this.#broadcast.publish(event);
    const turn = this.#turn;
    if (turn?.events && (event.type !== "stream_event" || turn.streamEvents)) {
      turn.events.push(event);
    }
  }

  #onFrame(raw: Record<string, unknown>): void {
    const frame = classifyFrame(raw);
    switch (frame.type) {
      case "control_request":
        this.#router.handle(frame.request_id, frame.request);
        return;
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
        this.#router.cancel(frame.request_id);
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
      case "unknown":
        if (frame.frameType === "control_request" && typeof frame.frame.request_id === "string") {
          this.#router.refuse(frame.frame.request_id); // unreadable, yet answered
        }
        break;
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

  async #readLoop(): Promise<void> {
    const reader = this.#transport.readable.getReader();
    this.#readers.add(reader);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        // A read of a pipe that has data resolves without a macrotask, and a chunk can hold
        // hundreds of frames: feed it in slices and let subscribers that keep reading catch
        // up between slices, or a burst overflows even a subscriber that reads at full speed.
        if (typeof value === "string" || value.length <= SLICE_BYTES) {
          this.#decoder.push(value);
          if (this.#broadcast.pressured) await this.#broadcast.drain();
          continue;
        }
        for (let offset = 0; offset < value.length; offset += SLICE_BYTES) {
          this.#decoder.push(value.subarray(offset, offset + SLICE_BYTES));
          if (this.#broadcast.pressured) await this.#broadcast.drain();
        }
      }
    } catch (error) {
      this.#publish(streamError("The CLI's output stream failed", error));
    } finally {
      try {
        this.#decoder.end();
      } catch (error) {
        this.#publish(streamError("Handling the CLI's last line failed", error));
      }
      this.#readers.delete(reader);
      reader.releaseLock();
    }
  }

  async #stderrLoop(stderr: ReadableStream<string>): Promise<void> {
    const reader = stderr.getReader();
    this.#readers.add(reader);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.#publish({ type: "stderr", line: value });
      }
    } catch (error) {
      this.#publish(streamError("The CLI's stderr stream failed", error));
    } finally {
      this.#readers.delete(reader);
      reader.releaseLock();
    }
  }

  async #onTransportClosed(exit: TransportExit): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The peer ended: deliver what it wrote before (stdout and stderr), for a bounded time.
    const drained = await Promise.race([
      Promise.all([this.#readDone, this.#stderrDone]).then(() => true),
      new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), DRAIN_MS)),
    ]);
    clearTimeout(timer);
    if (!drained) {
      for (const reader of this.#readers) reader.cancel().catch(() => {});
    }
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
    this.#router.abortAll("The session ended");
    clearInterval(this.#keepAlive);
    if (this.#ownerAbort) this.#options.signal?.removeEventListener("abort", this.#ownerAbort);
    this.#publish({ type: "exit", status: this.#status });
    this.#broadcast.close();
    this.#exit.resolve(this.#status);
  }
}

function laggedEvent(count: number): SessionEvent {
  return { type: "lagged", count };
}

function streamError(what: string, error: unknown): DiagnosticEvent {
  const reason = error instanceof Error ? error.message : String(error);
  return { type: "diagnostic", kind: "stream_error", message: `${what}: ${reason}` };
}
