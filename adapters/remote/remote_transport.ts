// This module is browser compatible.
/**
 * The WebSocket transport: drives a `claude` that a relay
 * (`@duplex/claude/relay`) runs on another host, from any runtime with the
 * Web `WebSocket` (Deno Deploy-style workers included).
 *
 * @module
 */

import {
  describeExit,
  DuplexError,
  type DuplexErrorKind,
  excerptOf,
  type TransportExit,
} from "../../src/errors.ts";
import {
  type ClientMessage,
  decodeOutput,
  isSeq,
  parseMessage,
  type SpawnRequest,
} from "../../src/remote/wire.ts";
import type {
  Transport,
  TransportFactory,
  TransportInfo,
  TransportOpenContext,
} from "../../src/transport/transport.ts";
import { openSocket, type Ready, Refusal, type WebSocketConstructor } from "./_socket.ts";

/** Options of {@linkcode remote}. */
export interface RemoteOptions {
  /** The relay's WebSocket URL, for example `wss://relay.example.com/v1`. */
  readonly url: string;
  /** The bearer token the relay was started with. */
  readonly token: string;
  /** What to ask the relay to run (its policy decides what is allowed). */
  readonly spawn?: SpawnRequest;
  /** A bound on connecting and on each reconnection attempt, in milliseconds. @default {10000} */
  readonly connectTimeoutMs?: number;
  /**
   * Reconnect after a dropped connection, resuming the same `claude` with
   * nothing lost or duplicated (while the relay keeps it: its grace period).
   * `false` ends the transport at the first drop.
   *
   * @default {{ attempts: 8, initialDelayMs: 200, maxDelayMs: 5000 }}
   */
  readonly reconnect?: false | {
    readonly attempts?: number;
    readonly initialDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /**
   * Ping interval in milliseconds; a relay silent for twice this long is
   * taken for gone and the connection is dropped (then resumed).
   *
   * @default {15000}
   */
  readonly heartbeatMs?: number;
  /** A bound on `close()` waiting for the relay's exit report, in milliseconds. @default {10000} */
  readonly closeTimeoutMs?: number;
  /** The `WebSocket` constructor to use. @default {globalThis.WebSocket} */
  readonly WebSocket?: WebSocketConstructor;
}

/** Output entries after which the client acknowledges at once (flow control of a stream). */
const ACK_EVERY = 32;
/** Otherwise acknowledgements ride with the next input, or go alone after this long. */
const ACK_IDLE_MS = 1_000;

/**
 * A transport factory that connects to a relay and asks it to run `claude`.
 * The session calls it; it resolves once the relay has spawned the CLI, or
 * rejects with a `DuplexError`: `unauthorized` (bad token), `not_permitted`
 * (the relay's policy refused an option), `timeout`, `closed` (no relay
 * there), `process_exited` (the CLI could not start).
 *
 * @example Drive a claude that a relay runs elsewhere
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { remote } from "@duplex/claude/remote";
 *
 * await using session = await DuplexSession.start({
 *   transport: remote({ url: "wss://relay.example.com/v1", token: "…", spawn: { model: "sonnet" } }),
 * });
 * const turn = await session.send("Say hi.");
 * console.log(turn.result.text);
 * ```
 *
 * @param options Where the relay is, the token, what to spawn.
 * @returns A factory for `DuplexSession.start({ transport })`.
 * @throws {TypeError} If `url` or `token` is missing or `url` is not a ws:/wss: URL.
 */
export function remote(options: RemoteOptions): TransportFactory {
  const settings = checkOptions(options);
  return function openRemote(context?: TransportOpenContext): Promise<Transport> {
    return RemoteTransport.open(settings, context?.signal);
  };
}

interface Settings {
  readonly url: string;
  readonly token: string;
  readonly spawn: SpawnRequest;
  readonly connectTimeoutMs: number;
  readonly attempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly heartbeatMs: number;
  readonly closeTimeoutMs: number;
  readonly Socket: WebSocketConstructor;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`Cannot use remote(): ${name} must be a number >= 0, got ${value}`);
  }
  return value;
}

function checkOptions(options: RemoteOptions): Settings {
  if (typeof options?.url !== "string" || !/^wss?:\/\//i.test(options.url)) {
    throw new TypeError(
      `Cannot use remote(): url must be a ws:// or wss:// URL, got ${JSON.stringify(options?.url)}`,
    );
  }
  if (typeof options.token !== "string" || options.token === "") {
    throw new TypeError("Cannot use remote(): token must be a non-empty string");
  }
  const reconnect = options.reconnect === false ? { attempts: 0 } : options.reconnect ?? {};
  const Socket = options.WebSocket ?? globalThis.WebSocket;
  if (typeof Socket !== "function") {
    throw new TypeError(
      "Cannot use remote(): this runtime has no WebSocket; pass options.WebSocket",
    );
  }
  return {
    url: options.url,
    token: options.token,
    spawn: options.spawn ?? {},
    connectTimeoutMs: positive("connectTimeoutMs", options.connectTimeoutMs, 10_000),
    attempts: positive("reconnect.attempts", reconnect.attempts, 8),
    initialDelayMs: positive("reconnect.initialDelayMs", reconnect.initialDelayMs, 200),
    maxDelayMs: positive("reconnect.maxDelayMs", reconnect.maxDelayMs, 5_000),
    heartbeatMs: positive("heartbeatMs", options.heartbeatMs, 15_000),
    closeTimeoutMs: positive("closeTimeoutMs", options.closeTimeoutMs, 10_000),
    Socket,
  };
}

const REFUSAL_KINDS: ReadonlyMap<string, DuplexErrorKind> = new Map<string, DuplexErrorKind>([
  ["unauthorized", "unauthorized"],
  ["not_permitted", "not_permitted"],
  ["spawn_failed", "process_exited"],
  ["busy", "closed"],
  ["protocol", "protocol"],
  ["unknown_session", "closed"],
  ["resume_gap", "closed"],
]);

function refusalError(url: string, refused: Refusal): DuplexError {
  return new DuplexError(
    REFUSAL_KINDS.get(refused.kind) ?? "closed",
    `Cannot start a session on the relay at ${url}: ${refused.kind}: ${refused.message}`,
    { cause: refused },
  );
}

interface PendingWrite {
  readonly seq: number;
  readonly line: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

class RemoteTransport implements Transport {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  readonly #settings: Settings;
  readonly #session: string;
  readonly #resolveClosed: (exit: TransportExit) => void;
  #out!: ReadableStreamDefaultController<Uint8Array>;
  #err!: ReadableStreamDefaultController<string>;
  /** False once the reader cancelled `readable` (or it was closed): nothing more is enqueued. */
  #outOpen = true;
  #errOpen = true;
  #socket: WebSocket | undefined;
  #outSeq = 0;
  #ackedOut = 0;
  #ackTimer: ReturnType<typeof setTimeout> | undefined;
  /** Messages of this burst, written as one frame (see `#flush`). */
  #outbox: ClientMessage[] = [];
  #flushQueued = false;
  #inSeq = 0;
  #unacked: PendingWrite[] = [];
  #inputEnded = false;
  #closeRequested = false;
  #exit: TransportExit | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #lastHeard = 0;
  #reconnecting: Promise<void> | undefined;
  #closing: Promise<TransportExit> | undefined;
  #stderrTail: string[] = [];
  /** Aborted when the transport ends: stops a reconnection in progress. */
  readonly #stop = new AbortController();

  static async open(settings: Settings, signal: AbortSignal | undefined): Promise<RemoteTransport> {
    const hello: ClientMessage = { t: "hello", v: 1, spawn: settings.spawn };
    try {
      const { socket, ready } = await openSocket(
        settings.Socket,
        settings.url,
        settings.token,
        hello,
        settings.connectTimeoutMs,
        signal,
      );
      return new RemoteTransport(settings, socket, ready);
    } catch (error) {
      throw error instanceof Refusal ? refusalError(settings.url, error) : error;
    }
  }

  private constructor(settings: Settings, socket: WebSocket, ready: Ready) {
    this.#settings = settings;
    this.#session = ready.session;
    this.info = {
      kind: "remote",
      description: `claude${
        ready.pid === undefined ? "" : ` (pid ${ready.pid} there)`
      } via the relay at ${settings.url}`,
      freshChunks: true, // each chunk is a view of its own WebSocket message
    };
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#out = controller;
      },
      cancel: () => {
        this.#outOpen = false;
      },
    });
    this.stderr = new ReadableStream<string>({
      start: (controller) => {
        this.#err = controller;
      },
      cancel: () => {
        this.#errOpen = false;
      },
    }, { highWaterMark: 1024 });
    const { promise, resolve } = Promise.withResolvers<TransportExit>();
    this.closed = promise;
    this.#resolveClosed = resolve;
    this.#attach(socket);
    this.#heartbeat = setInterval(() => this.#beat(), Math.max(10, settings.heartbeatMs));
  }

  write(line: string): Promise<void> {
    if (typeof line !== "string") {
      return Promise.reject(new TypeError("Cannot write: the line must be a string"));
    }
    if (this.#inputEnded) {
      return Promise.reject(
        new DuplexError(
          "closed",
          "Cannot write to claude: its input was ended (endInput or close was called); " +
            "open a new transport",
        ),
      );
    }
    if (this.#exit !== undefined) return Promise.reject(this.#exitedError());
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const pending = { seq: ++this.#inSeq, line, resolve, reject };
    this.#unacked.push(pending);
    this.#send({ t: "in", seq: pending.seq, line });
    return promise;
  }

  endInput(): Promise<void> {
    if (!this.#inputEnded) {
      this.#inputEnded = true;
      this.#send({ t: "eof" });
    }
    return Promise.resolve();
  }

  close(): Promise<TransportExit> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #shutdown(): Promise<TransportExit> {
    if (this.#exit === undefined) {
      this.#closeRequested = true;
      this.#inputEnded = true;
      this.#send({ t: "close" });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.#settings.closeTimeoutMs);
      });
      await Promise.race([this.closed, timeout]);
      clearTimeout(timer);
      this.#end({
        code: null,
        signal: null,
        reason: `the relay did not report the exit within ${this.#settings.closeTimeoutMs} ms`,
        stderrTail: this.#stderrTail.join("\n"),
        requested: true,
      });
    }
    return await this.closed;
  }

  #attach(socket: WebSocket): void {
    this.#socket = socket;
    this.#lastHeard = Date.now();
    socket.addEventListener("message", (event) => this.#onMessage(socket, event));
    socket.addEventListener("close", (event) => this.#onDrop(socket, event.code, event.reason));
    socket.addEventListener("error", () => this.#onDrop(socket, 1006, "WebSocket error"));
  }

  /** Queues a message; every message of the same burst leaves in one frame. */
  #send(message: ClientMessage): void {
    this.#outbox.push(message);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.#flush();
    });
  }

  /**
   * Writes the queued messages, and the output acknowledgement if one is
   * due, as ONE frame (a JSON array when there are several). A Web WebSocket
   * cannot disable Nagle's algorithm: a second small frame written before the
   * relay answered the first waits for the relay's delayed TCP ACK (40 ms).
   */
  #flush(): void {
    const messages = this.#outbox;
    this.#outbox = [];
    const socket = this.#socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) return; // resent on resume
    if (this.#outSeq > this.#ackedOut) {
      messages.push({ t: "ack", seq: this.#outSeq });
      this.#ackedOut = this.#outSeq;
      clearTimeout(this.#ackTimer);
      this.#ackTimer = undefined;
    }
    if (messages.length === 0) return;
    try {
      socket.send(JSON.stringify(messages.length === 1 ? messages[0] : messages));
    } catch {
      // The socket is failing: its close event starts the reconnection.
    }
  }

  #onMessage(socket: WebSocket, event: MessageEvent): void {
    if (socket !== this.#socket) return;
    this.#lastHeard = Date.now();
    if (event.data instanceof ArrayBuffer) {
      const output = decodeOutput(new Uint8Array(event.data));
      if (output === undefined) return this.#fail(socket, "a binary frame shorter than its header");
      if (!this.#next(socket, output.seq)) return;
      if (output.bytes.length > 0 && this.#outOpen) this.#out.enqueue(output.bytes);
      return;
    }
    if (typeof event.data !== "string") return;
    const message = parseMessage(event.data);
    switch (message?.t) {
      case "err":
        if (!isSeq(message.seq) || typeof message.line !== "string") break;
        if (!this.#next(socket, message.seq)) return;
        this.#stderrTail.push(message.line);
        if (this.#stderrTail.length > 100) this.#stderrTail.shift();
        if (this.#errOpen && (this.#err.desiredSize ?? 0) > 0) this.#err.enqueue(message.line);
        return;
      case "exit":
        if (!isSeq(message.seq) || typeof message.exit !== "object" || message.exit === null) break;
        if (!this.#next(socket, message.seq)) return;
        this.#ack(true);
        this.#end({ ...(message.exit as TransportExit), requested: this.#closeRequested });
        return;
      case "ack":
        if (!isSeq(message.seq)) break;
        while (this.#unacked.length > 0 && (this.#unacked[0] as PendingWrite).seq <= message.seq) {
          (this.#unacked.shift() as PendingWrite).resolve();
        }
        return;
      case "ping":
        this.#send({ t: "pong", at: Number(message.at) });
        return;
      case "pong":
        return;
      case "error":
        this.#end(this.#lostExit(`the relay refused: ${message.kind}: ${message.message}`));
        return;
    }
    this.#fail(socket, `an unexpected message ${excerptOf(event.data, 120)}`);
  }

  /** Checks the output sequence: true to deliver, false for a duplicate (or a failure). */
  #next(socket: WebSocket, seq: number): boolean {
    if (seq <= this.#outSeq) return false; // replayed after a resume: already delivered
    if (seq !== this.#outSeq + 1) {
      this.#fail(socket, `output ${seq} after ${this.#outSeq} (a gap)`);
      return false;
    }
    this.#outSeq = seq;
    this.#ack(false);
    return true;
  }

  /** Acknowledges output now (a stream in flight) or soon (with the next input, or when idle). */
  #ack(now: boolean): void {
    if (now || this.#outSeq - this.#ackedOut >= ACK_EVERY) {
      this.#scheduleFlush(); // the flush adds the acknowledgement
    } else {
      this.#ackTimer ??= setTimeout(() => {
        this.#ackTimer = undefined;
        this.#ack(true);
      }, ACK_IDLE_MS);
    }
  }

  #fail(socket: WebSocket, what: string): void {
    try {
      socket.close(1002, "protocol error");
    } catch { /* closing */ }
    this.#end(this.#lostExit(`the relay broke the protocol: ${what}`));
  }

  #beat(): void {
    const socket = this.#socket;
    if (socket === undefined || this.#exit !== undefined) return;
    if (Date.now() - this.#lastHeard > 2 * this.#settings.heartbeatMs) {
      try {
        socket.close(4001, "no heartbeat");
      } catch { /* closing */ }
      this.#onDrop(socket, 4001, "no heartbeat from the relay");
      return;
    }
    this.#send({ t: "ping", at: Date.now() });
  }

  #onDrop(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.#socket || this.#exit !== undefined) return;
    this.#socket = undefined;
    if (this.#settings.attempts === 0) {
      this.#end(
        this.#lostExit(`the connection dropped (code ${code}${reason ? `, ${reason}` : ""})`, code),
      );
      return;
    }
    this.#reconnecting ??= this.#reconnect(code, reason).finally(() => {
      this.#reconnecting = undefined;
    });
  }

  async #reconnect(code: number, reason: string): Promise<void> {
    const { attempts, initialDelayMs, maxDelayMs, Socket, url, token, connectTimeoutMs } =
      this.#settings;
    let last = `the connection dropped (code ${code}${reason ? `, ${reason}` : ""})`;
    for (let attempt = 0; attempt < attempts && this.#exit === undefined; attempt++) {
      await sleep(Math.min(maxDelayMs, initialDelayMs * 2 ** attempt), this.#stop.signal);
      if (this.#exit !== undefined) return;
      const hello: ClientMessage = {
        t: "hello",
        v: 1,
        resume: { session: this.#session, after: this.#outSeq },
      };
      try {
        const { socket, ready } = await openSocket(
          Socket,
          url,
          token,
          hello,
          connectTimeoutMs,
          this.#stop.signal,
        );
        if (this.#exit !== undefined) {
          socket.close(1000);
          return;
        }
        this.#attach(socket);
        this.#resume(ready);
        return;
      } catch (error) {
        if (error instanceof Refusal) {
          this.#end(
            this.#lostExit(`the relay cannot resume the session: ${error.kind}: ${error.message}`),
          );
          return;
        }
        last = error instanceof Error ? error.message : String(error);
      }
    }
    this.#end(this.#lostExit(`could not reconnect after ${attempts} attempt(s): ${last}`, code));
  }

  /** After a resume: settle the input the relay applied, send the rest again. */
  #resume(ready: Ready): void {
    while (this.#unacked.length > 0 && (this.#unacked[0] as PendingWrite).seq <= ready.inSeq) {
      (this.#unacked.shift() as PendingWrite).resolve();
    }
    for (const pending of this.#unacked) {
      this.#send({ t: "in", seq: pending.seq, line: pending.line });
    }
    if (this.#inputEnded && !this.#closeRequested) this.#send({ t: "eof" });
    if (this.#closeRequested) this.#send({ t: "close" });
    this.#ack(true);
  }

  #lostExit(reason: string, closeCode?: number): TransportExit {
    return {
      code: null,
      signal: null,
      ...(closeCode !== undefined && { closeCode }),
      reason,
      stderrTail: this.#stderrTail.join("\n"),
      requested: this.#closeRequested,
    };
  }

  #exitedError(): DuplexError {
    const exit = this.#exit as TransportExit;
    return new DuplexError(
      "process_exited",
      `Cannot write to claude: it has gone (${describeExit(exit)}); start a new session`,
      { exit },
    );
  }

  /** Ends the transport once: settles every pending write, ends the streams, reports the exit. */
  #end(exit: TransportExit): void {
    if (this.#exit !== undefined) return;
    this.#exit = exit;
    this.#stop.abort();
    clearInterval(this.#heartbeat);
    clearTimeout(this.#ackTimer);
    const error = this.#exitedError();
    for (const pending of this.#unacked.splice(0)) pending.reject(error);
    if (this.#outOpen) this.#out.close();
    if (this.#errOpen) this.#err.close();
    this.#outOpen = false;
    this.#errOpen = false;
    const socket = this.#socket;
    this.#socket = undefined;
    try {
      socket?.close(1000);
    } catch { /* closing */ }
    this.#resolveClosed(exit);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
