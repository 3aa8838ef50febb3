// This module is browser compatible.
/**
 * {@linkcode DuplexSession}: one long-lived conversation with a `claude`
 * process (or anything speaking its protocol) over a transport.
 *
 * The class is the public API over the session's parts, which
 * `_session_parts.ts` builds and wires: the turn tracker owns the turns, the
 * read pump feeds the transport's lines to the frame router, the control
 * router serves the CLI's requests through one registry, the control channel
 * settles our own, startup (`_startup.ts`) sends what goes before the first
 * turn and says what a send waits for, the end (`_session_end.ts`) holds the
 * one lifecycle state, and every span and metric is written in
 * `_session_telemetry.ts`. Its two base classes hold the rest of the surface:
 * `session_handshake.ts` the session id, the `initialize` reply,
 * `reinitialize` and `claimSession`; `session_controls.ts` the runtime
 * controls.
 *
 * About 450 lines: some 200 of them the JSDoc users read, 60 the imports;
 * each method is a few lines over the parts (reading `streamInput`'s stream
 * is in `_stream_input.ts`).
 *
 * @module
 */

import { checkMs } from "../_deadline.ts";
import type { FinalPermissionDecision, PermissionRequest } from "../permissions/permission.ts";
import type { UserContent } from "../protocol/content.ts";
import { DuplexError } from "../errors.ts";
import type { ControlRequestMap, ControlSubtype } from "../protocol/control_requests.ts";
import type { Subscription } from "../subscriptions/subscription.ts";
import type { SessionStats } from "../telemetry/telemetry_options.ts";
import type { Transport, TransportInfo } from "../transport/transport.ts";
import { featuresUsed, startRefusal } from "./_cli_check.ts";
import { exitStatusOf, stateOf } from "./_lifecycle.ts";
import {
  checkOptions,
  checkSendOptions,
  type SessionSettings,
  toContentBlocks,
  userLine,
} from "./_session_input.ts";
import { sendRequest, type SessionParts, setServers, wireSession } from "./_session_parts.ts";
import { SessionTelemetry } from "./_session_telemetry.ts";
import { openTransport } from "./_startup.ts";
import { iteratorOf, nextItem, readItem, stopStream } from "./_stream_input.ts";
import type { ExitStatus, SessionEvent, SessionState } from "./events.ts";
import type { McpServers, McpSetServersResult } from "./mcp_servers.ts";
import { SessionHandshake } from "./session_handshake.ts";
import type {
  ControlRequestOptions,
  DuplexSessionOptions,
  InterruptOptions,
  InterruptReceipt,
  SendOptions,
  SubscribeOptions,
  WaitOptions,
} from "./session_options.ts";
import type { StreamInputItem, StreamInputOptions, StreamInputResult } from "./stream_input.ts";
import type { Turn } from "./turn.ts";

/* Only `DuplexSession.start` constructs a session. */
const START = Symbol("DuplexSession.start");

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
export class DuplexSession extends SessionHandshake implements AsyncDisposable {
  readonly #parts: SessionParts;

  /**
   * Opens the transport and starts reading from it.
   *
   * @param options The transport, the permission handler and limits.
   * @returns The running session.
   * @throws {DuplexError} When the transport cannot be opened (for example `cli_not_found`);
   *   `unsupported` for a CLI below the supported window (`CLI_WINDOW.floor`), or without a
   *   feature the options use (`CLI_FEATURES`), when the transport knows its version (the
   *   subprocess adapter asks `claude --version`).
   * @throws {TypeError} For options of the wrong type.
   * @throws {RangeError} For a duration or size out of range (checked before anything opens).
   */
  static async start(options: DuplexSessionOptions): Promise<DuplexSession> {
    options?.signal?.throwIfAborted();
    const settings = checkOptions(options);
    const telemetry = SessionTelemetry.open(options.telemetry);
    const transport = await openTransport(options, telemetry);
    try {
      options.signal?.throwIfAborted();
      const refusal = startRefusal(transport.info, featuresUsed(settings)); // a CLI too old
      if (refusal) throw refusal;
      return new DuplexSession(START, transport, options, settings, telemetry);
    } catch (error) {
      telemetry.startFailed(error);
      await transport.close().catch(() => {}); // never leave a transport open behind a throw
      throw error;
    }
  }

  /**
   * Use {@linkcode DuplexSession.start}.
   *
   * @param token A private token.
   * @param transport An open transport.
   * @param options The session options.
   * @param settings The options, checked.
   * @param telemetry The session's telemetry (its span started).
   */
  constructor(
    token: typeof START,
    transport: Transport,
    options: DuplexSessionOptions,
    settings: SessionSettings,
    telemetry: SessionTelemetry,
  ) {
    let parts: SessionParts | undefined;
    super((identified) => {
      if (token !== START) {
        throw new TypeError("Cannot construct DuplexSession: use DuplexSession.start()");
      }
      return parts = wireSession(transport, options, settings, telemetry, identified);
    });
    this.#parts = parts!;
  }

  /** Where the session is in its life. */
  get state(): SessionState {
    return stateOf(this.#parts.end.lifecycle);
  }

  /** True while the session accepts work (not closing, not ended). */
  get alive(): boolean {
    return this.#parts.end.lifecycle.phase === "ready";
  }

  /** Running, or how the session ended; kept after the end. */
  get exitStatus(): ExitStatus {
    return exitStatusOf(this.#parts.end.lifecycle);
  }

  /** The transport's description of itself and its peer. */
  get transportInfo(): TransportInfo {
    return this.#parts.transport.info;
  }

  /** The CLI's process id, when the transport started a process. */
  get pid(): number | undefined {
    return this.#parts.transport.info.pid;
  }

  /** True while a turn is running. */
  get busy(): boolean {
    return this.#parts.turns.busy;
  }

  /** The permission requests waiting for a decision (deferred ones included), oldest first. */
  get pendingPermissions(): readonly PermissionRequest[] {
    return this.#parts.requests.permissions.pending();
  }

  /** Counters a health endpoint can read without tracing: turns, errors, lagged events, … */
  get stats(): SessionStats {
    return this.#parts.telemetry.snapshot(this.#parts.control.pendingCount);
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
    const backlog: SessionEvent[] = options.replayTurn ? [...this.#parts.turns.activeEvents] : [];
    if (options.replayPending) {
      const held = new Set(
        backlog.flatMap((e) => e.type === "permission_request" ? [e.request] : []),
      );
      for (const request of this.#parts.requests.permissions.pending()) {
        if (!held.has(request)) backlog.push({ type: "permission_request", request });
      }
    }
    const status = this.exitStatus;
    if (status.state !== "running") backlog.push({ type: "exit", status });
    return this.#parts.broadcast.subscribe(options, backlog);
  }

  /**
   * Sends a user turn and waits for its result.
   *
   * @param content Text, or Messages-API content blocks.
   * @param options A signal that interrupts the turn, a timeout, the line's uuid.
   * @returns The turn's result and its events.
   * @throws {DuplexError} `turn_in_flight` while another turn runs; `closed` or
   * `process_exited` when the session ends first; `timeout` after `timeoutMs`;
   * `unsupported` when a hook asks for `onFailure: "block"` and the CLI's
   * `initialize` reply does not confirm it (a send waits for that reply).
   * Rejects with `signal.reason` when the signal aborts.
   */
  async send(content: UserContent, options: SendOptions = {}): Promise<Turn> {
    return await (await this.#begin(content, options)).turn;
  }

  /**
   * Sends each message of a stream as a queued line (`send(…, { queue: true })`:
   * no line waits for the turn before it), in order, each written before
   * the next is read: the official SDK's `streamInput`. Resolves once the
   * stream ended and its lines are written; the turns go on. Observe them
   * with `onTurn` (each line's turn promise, as `send` returns it) or with
   * `subscribe()`. The session stays open (unlike the SDK, which then ends
   * the CLI's input): `send` and `streamInput` can follow.
   *
   * @param stream Messages: what `send` takes (text, content blocks) or SDK-shaped user
   *   messages (`{ type: "user", message: { role: "user", content }, uuid?, priority?,
   *   origin?, timestamp?, … }`); an iterable works too.
   * @param options A signal that stops reading, and `onTurn`.
   * @returns How many lines were written.
   * @throws {DuplexError} `invalid_argument` for a bad item (nothing of it written; the
   *   stream stops) or a value that is not a stream; `aborted` when the stream throws (the
   *   cause kept); `closed` or `process_exited` when the session ends. Rejects with
   *   `signal.reason` when the signal aborts.
   */
  async streamInput(
    stream: AsyncIterable<StreamInputItem> | Iterable<StreamInputItem>,
    options: StreamInputOptions = {},
  ): Promise<StreamInputResult> {
    const { signal, onTurn } = options;
    signal?.throwIfAborted();
    if (onTurn !== undefined && typeof onTurn !== "function") {
      throw new DuplexError("invalid_argument", "Cannot stream input: onTurn must be a function");
    }
    this.#parts.end.assertUsable("stream input");
    const iterator = iteratorOf(stream);
    let finished = false; // the stream ended or threw: nothing to stop
    try {
      for (let index = 0;; index++) {
        const step = await nextItem(iterator, index, signal).catch((error) => {
          finished = !signal?.aborted;
          throw error;
        });
        if (step.done) {
          finished = true;
          return { sent: index };
        }
        const line = readItem(step.value, index);
        signal?.throwIfAborted();
        const { turn, written, uuid } = await this.#begin(line.content, {
          ...line.options,
          queue: true,
        });
        turn.catch(() => {}); // the caller's to await: never an unhandled rejection
        onTurn?.(turn, { uuid, index });
        await written;
      }
    } finally {
      if (!finished) stopStream(iterator);
    }
  }

  /* A send's checks, its wait for startup, its turn begun and its line written. */
  async #begin(
    content: UserContent,
    options: SendOptions,
  ): Promise<{ turn: Promise<Turn>; written: Promise<void>; uuid: string }> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (this.#parts.startup.refusal) throw this.#parts.startup.refusal; // for good: no turn runs unprotected
    this.#parts.end.assertUsable("send a turn");
    checkSendOptions(options);
    const queue = options.queue ?? this.#parts.settings.queue;
    if (!queue) this.#parts.turns.assertIdle();
    const timeoutMs = options.timeoutMs === undefined
      ? undefined
      : checkMs(options.timeoutMs, "Cannot send a turn: timeoutMs");
    const message = { role: "user", content: toContentBlocks(content) };
    const ready = this.#parts.startup.ready(signal); // a failed initialize's error, once
    if (ready) await ready; // the refusal, the signal's reason, or the servers' failure is this send's
    const uuid = options.uuid ?? crypto.randomUUID();
    const turn = this.#parts.turns.begin({
      uuid,
      collect: options.collectEvents ?? this.#parts.settings.collectTurnEvents,
      signal,
      timeoutMs,
      queue,
    });
    const line = userLine(message, uuid, {
      ...options,
      verbatim: options.verbatim ?? this.#parts.settings.verbatimPrompts,
    });
    const written = this.#parts.write(line);
    written.catch((error) => this.#parts.turns.fail(turn, error));
    return { turn: turn.promise, written, uuid };
  }

  /**
   * Interrupts the running turn (harmless when none runs: the CLI acknowledges
   * and the turn-less result it may send is only broadcast). Queued lines run
   * next, unless `cancelQueued` cancels them too.
   *
   * @param options `cancelQueued`, and a signal and a timeout for the CLI's acknowledgement.
   * @returns The CLI's receipt.
   * @throws {DuplexError} `control_failed`, `timeout`, `closed` or `process_exited`.
   */
  async interrupt(options: InterruptOptions = {}): Promise<InterruptReceipt> {
    const { cancelQueued, ...rest } = options;
    const held = this.#parts.startup.held(rest.signal);
    if (held) await held; // behind the held lines it is meant to follow
    const turnWasRunning = this.#parts.turns.busy;
    const raw = await this.request("interrupt", cancelQueued ? { cancel_queued: true } : {}, rest);
    const stillQueued = strings(raw.still_queued);
    const cancelled = strings(raw.cancelled);
    this.#parts.turns.cancelled(cancelled);
    return { stillQueued, cancelled, turnWasRunning, raw };
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
  override request<K extends ControlSubtype>(
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
  override request(
    subtype: string,
    fields?: Record<string, unknown>,
    options?: ControlRequestOptions,
  ): Promise<Record<string, unknown>>;
  override request(
    subtype: string,
    fields: Record<string, unknown> = {},
    options: ControlRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    return sendRequest(this.#parts, subtype, fields, options);
  }

  /**
   * Replaces the session's MCP servers (the CLI's whole dynamic set): in-process
   * servers made with `mcpServer()` (this session then answers their
   * messages) and external configs, which travel over the control channel,
   * never on argv. A server that failed to connect is listed in `errors` and
   * reported as a `diagnostic` event of kind `mcp_server_failed`.
   *
   * @param servers The servers by name.
   * @param options A signal and a timeout.
   * @returns What the CLI added, removed, and could not connect.
   * @throws {TypeError} For a server that is neither `mcpServer()` nor a valid config.
   */
  async setMcpServers(
    servers: McpServers,
    options: ControlRequestOptions = {},
  ): Promise<McpSetServersResult> {
    return await setServers(this.#parts, servers, options);
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
      return Promise.resolve(this.#parts.requests.permissions.respond(requestId, decision));
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
    return this.#parts.end.waitForExit(options);
  }

  /**
   * Closes the session: withdraws pending permission requests, lets the
   * transport end the CLI (politely, then by force), and waits for the end.
   * Idempotent; bounded by `closeTimeoutMs`.
   *
   * @returns How the session ended: `completed` when the close ended the CLI
   * (whatever its exit code or signal then); when the CLI had exited by itself
   * before the close reached it, its own end (`failed` for exit code 1).
   */
  close(): Promise<ExitStatus> {
    return this.#parts.end.close();
  }

  /** Same as {@linkcode DuplexSession.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}
