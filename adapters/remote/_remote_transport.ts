// This module is browser compatible.
/*
 * The WebSocket transport that `remote()` opens: one `claude` that a relay
 * runs elsewhere, over one connection at a time.
 *
 * - The connection is one state (`Link`): open, reconnecting, or ended.
 * - What leaves goes through the outbox (one frame per burst, with the output
 *   acknowledgement); what arrives is read in order (`InboundFrames`), checked
 *   (`parseRelayMessage`, the output sequence) and handed to the streams.
 * - A dropped connection is resumed (`reconnect`): output continues after the
 *   last entry seen, unacknowledged input is sent again, and the resume names
 *   the last turn the session read a result of (`answered`): a relay resuming
 *   from the store waits until the store holds it.
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import { describeExit, DuplexError, excerptOf, type TransportExit } from "../../src/errors.ts";
import {
  type ClientMessage,
  CLOSE,
  decodeOutput,
  lostTurnsLine,
  type ReadyMessage,
} from "../../src/wire/wire.ts";
import { heartbeat } from "../../src/wire/_heartbeat.ts";
import { parseRelayMessage } from "../../src/wire/wire_parse.ts";
import { userLineUuid } from "../../src/protocol/_user_line.ts";
import { parseTraceContext, type TraceContext } from "../../src/telemetry/_trace_context.ts";
import type { Transport, TransportInfo } from "../../src/transport/transport.ts";
import type { TransportOpenContext } from "../../src/transport/transport.ts";
import { type Frame, InboundFrames } from "./_inbound.ts";
import { OPEN, Outbox } from "./_outbox.ts";
import { PeerOutput } from "./_peer_output.ts";
import { connectPatiently, reconnect, RefusedBy } from "./_reconnect.ts";
import { closeQuietly, type Connected, messageIn, reasonOf, refusalError } from "./_socket.ts";
import { UnackedInput } from "./_unacked_input.ts";
import type { Settings } from "./remote_options.ts";

/** The most unanswered user lines remembered (older ones were cancelled, or are long gone). */
const MAX_UNANSWERED = 4096;
const ENCODER = new TextEncoder();

/** The code reported for a connection whose socket fired `error`. */
const CLOSE_ABNORMAL = 1006;

/**
 * The connection, as one state: open on a socket (and when the relay was
 * last heard), reconnecting, or ended with how the peer ended.
 */
type Link =
  | {
    readonly state: "open";
    readonly socket: WebSocket;
    lastHeard: number;
    /** Aborted when the connection is left: stops its heartbeat. */
    readonly left: AbortController;
  }
  | { readonly state: "reconnecting" }
  | { readonly state: "ended"; readonly exit: TransportExit };

type OpenLink = Extract<Link, { state: "open" }>;

/** How far our side ended the CLI's input: not at all, `endInput()`, or `close()`. */
type Ending = "open" | "eof" | "close";

/** The transport `remote()` opens. */
export class RemoteTransport implements Transport {
  readonly readable: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<string>;
  readonly info: TransportInfo;
  readonly closed: Promise<TransportExit>;
  readonly #settings: Settings;
  /** The relay's session token, to resume with. */
  readonly #session: string;
  /** The session's trace context, if any, sent again with each resume. */
  readonly #traced: { readonly trace?: TraceContext };
  readonly #resolveClosed: (exit: TransportExit) => void;
  readonly #output = new PeerOutput();
  readonly #outbox = new Outbox((socket, error) => this.#onSendError(socket, error));
  readonly #input = new UnackedInput();
  /** Aborted when the transport ends: stops a reconnection in progress. */
  readonly #stop = new AbortController();
  #link: Link;
  /** The URL of the relay the session is on (tried first when reconnecting). */
  #url: string;
  #ending: Ending = "open";
  #closing: Promise<TransportExit> | undefined;
  /** The user line the last result the session read answers, if any. */
  #answered: string | undefined;
  /** The session's user lines sent and not answered yet (the oldest first), by input seq. */
  #unanswered: { readonly seq: number; readonly uuid: string }[] = [];
  /** A ready's `gone` not settled yet: its output has not all arrived. */
  #gone: ReadyMessage["gone"];

  static async open(settings: Settings, context?: TransportOpenContext): Promise<RemoteTransport> {
    // The session's trace context, checked as the relay will: a bad one is not sent.
    const trace = parseTraceContext(context?.traceContext);
    const traced = trace === undefined ? {} : { trace };
    const hello: ClientMessage = { t: "hello", v: 1, spawn: settings.spawn, ...traced };
    let connected: Connected;
    let url: string;
    try {
      ({ connected, url } = await connectPatiently(settings, hello, context?.signal));
    } catch (error) {
      throw error instanceof RefusedBy ? refusalError(error.url, error.refusal) : error;
    }
    try {
      return new RemoteTransport(settings, connected, traced, url);
    } catch (error) {
      closeQuietly(connected.socket, CLOSE.normal); // the relay then ends the session
      throw error;
    }
  }

  constructor(
    settings: Settings,
    connected: Connected,
    traced: { trace?: TraceContext } = {},
    url: string = settings.url,
  ) {
    const { ready } = connected;
    this.#settings = settings;
    this.#url = url;
    this.#traced = traced;
    this.#session = ready.session;
    this.info = {
      kind: "remote",
      description: `claude${
        ready.pid === undefined ? "" : ` (pid ${ready.pid} there)`
      } via the relay at ${url}`,
      freshChunks: true, // each chunk is a view of its own WebSocket message
    };
    this.readable = this.#output.readable;
    this.stderr = this.#output.stderr;
    const { promise, resolve } = Promise.withResolvers<TransportExit>();
    this.closed = promise;
    this.#resolveClosed = resolve;
    this.#link = { state: "reconnecting" };
    this.#attach(connected);
  }

  write(line: string): Promise<void> {
    if (typeof line !== "string") {
      return Promise.reject(new TypeError("Cannot write: the line must be a string"));
    }
    if (this.#ending !== "open") {
      return Promise.reject(
        new DuplexError(
          "closed",
          "Cannot write to claude: its input was ended (endInput or close was called); " +
            "open a new transport",
        ),
      );
    }
    if (this.#link.state === "ended") return Promise.reject(exitedError(this.#link.exit));
    const { entry, written } = this.#input.add(line);
    this.#outbox.send({ t: "in", seq: entry.seq, line });
    const uuid = userLineUuid(line);
    if (uuid !== undefined) {
      this.#unanswered.push({ seq: entry.seq, uuid });
      // Lines never answered (cancelled while queued) go once their number is this far behind.
      if (this.#unanswered.length > MAX_UNANSWERED) this.#unanswered.shift();
    }
    return written;
  }

  answered(uuid: string): void {
    this.#answered = uuid;
    const at = this.#unanswered.findIndex((line) => line.uuid === uuid);
    if (at >= 0) this.#unanswered.splice(at, 1);
  }

  /*
   * The CLI before a new one took lines it never answered: once all it wrote that the client can
   * get has arrived, their turns end with an error result, read after that output.
   */
  #settleGone(): void {
    const gone = this.#gone;
    if (gone === undefined || this.#outbox.delivered < gone.outSeq) return;
    this.#gone = undefined;
    const named = new Set(gone.uuids);
    const took = (line: { seq: number; uuid: string }) =>
      line.seq <= gone.inSeq || named.has(line.uuid);
    const taken = this.#unanswered.filter(took);
    if (taken.length === 0) return;
    this.#unanswered = this.#unanswered.filter((line) => !took(line));
    this.#output.stdout(ENCODER.encode(lostTurnsLine(taken.map((line) => line.uuid))));
  }

  endInput(): Promise<void> {
    if (this.#ending === "open") {
      this.#ending = "eof";
      this.#outbox.send({ t: "eof" });
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
    if (this.#link.state !== "ended") {
      this.#ending = "close";
      this.#outbox.send({ t: "close" });
      const { closeTimeoutMs } = this.#settings;
      const limit = deadline(closeTimeoutMs);
      try {
        await abortable(this.closed, limit.signal);
      } catch {
        this.#end(this.#lostExit(`the relay did not report the exit within ${closeTimeoutMs} ms`));
      } finally {
        limit[Symbol.dispose]();
      }
    }
    return await this.closed;
  }

  /** Takes a connection over: listens to it, sends through it, reads what came before. */
  #attach({ socket, handOver }: Connected): void {
    const frames = new InboundFrames(
      (frame) => this.#onFrame(socket, frame),
      (error) => this.#fail(socket, `a binary frame could not be read (${reasonOf(error)})`),
    );
    socket.addEventListener("message", (event) => {
      const link = this.#link;
      if (link.state !== "open" || link.socket !== socket) return;
      link.lastHeard = Date.now();
      frames.push(event.data);
    });
    socket.addEventListener("close", (event) => {
      this.#onDrop(socket, dropped(event.code, event.reason), event.code);
    });
    socket.addEventListener("error", (event) => {
      this.#onDrop(socket, dropped(CLOSE_ABNORMAL, messageIn(event) ?? "WebSocket error"));
    });
    const link: OpenLink = {
      state: "open",
      socket,
      lastHeard: Date.now(),
      left: new AbortController(),
    };
    this.#link = link;
    this.#outbox.attach(socket);
    void heartbeat(this.#settings.heartbeatMs, link.left.signal, {
      lastHeard: () => link.lastHeard,
      ping: () => this.#outbox.send({ t: "ping", at: Date.now() }),
      silent: () => {
        closeQuietly(socket, CLOSE.noHeartbeat, "no heartbeat");
        this.#onDrop(
          socket,
          dropped(CLOSE.noHeartbeat, "no heartbeat from the relay"),
          CLOSE.noHeartbeat,
        );
      },
    });
    for (const data of handOver()) frames.push(data);
    if (socket.readyState > OPEN) this.#onDrop(socket, "the connection closed as it opened");
  }

  #current(socket: WebSocket): boolean {
    return this.#link.state === "open" && this.#link.socket === socket;
  }

  #onFrame(socket: WebSocket, frame: Frame): void {
    if (!this.#current(socket)) return;
    if (frame.kind === "unknown") {
      this.#fail(socket, `a frame of a type no WebSocket delivers: ${frame.what}`);
    } else if (frame.kind === "text") {
      this.#onText(socket, frame.text);
    } else {
      const output = decodeOutput(frame.bytes);
      if (output === undefined) this.#fail(socket, "a binary frame shorter than its header");
      else if (this.#arrive(socket, output.seq)) {
        this.#output.stdout(output.bytes);
        this.#settleGone();
      }
    }
  }

  #onText(socket: WebSocket, text: string): void {
    const parsed = parseRelayMessage(text);
    if (!parsed.ok) {
      this.#fail(socket, `${parsed.reason}, in ${excerptOf(text, 120)}`);
      return;
    }
    const message = parsed.message;
    switch (message.t) {
      case "err":
        if (this.#arrive(socket, message.seq)) {
          this.#output.stderrLine(message.line);
          this.#settleGone();
        }
        return;
      case "exit":
        if (!this.#arrive(socket, message.seq)) return;
        this.#outbox.acknowledge(); // sent as the outbox closes
        // Ours when we asked for the close and the relay's close ended the CLI: a CLI that exited
        // by itself while our close was on its way is reported as its own end.
        this.#end({
          ...message.exit,
          requested: this.#ending === "close" && message.exit.requested,
        });
        return;
      case "ack":
        this.#input.acknowledge(message.seq);
        return;
      case "ping":
        this.#outbox.send({ t: "pong", at: message.at });
        return;
      case "pong":
        return;
      case "error":
        this.#end(this.#lostExit(`the relay refused: ${message.kind}: ${message.message}`));
        return;
      case "ready":
        this.#fail(socket, "a second ready");
        return;
    }
  }

  /** Checks an output sequence number: true to deliver, false for a duplicate (or a gap). */
  #arrive(socket: WebSocket, seq: number): boolean {
    const arrival = this.#outbox.arrive(seq);
    if (arrival === "gap") {
      this.#fail(socket, `output ${seq} after ${this.#outbox.delivered} (a gap)`);
    }
    return arrival === "next";
  }

  #fail(socket: WebSocket, what: string): void {
    closeQuietly(socket, CLOSE.relayBrokeProtocol, "protocol error");
    this.#end(this.#lostExit(`the relay broke the protocol: ${what}`));
  }

  /**
   * A socket that throws on `send` fires no `close` (in workerd: I/O on behalf
   * of another request): the transport ends now, in the runtime's words. It
   * does not reconnect: the same use would fail the same way.
   */
  #onSendError(socket: WebSocket, error: unknown): void {
    if (!this.#current(socket)) return;
    closeQuietly(socket, CLOSE.normal);
    this.#end(this.#lostExit(`sending to the relay failed: ${reasonOf(error)}`));
  }

  #onDrop(socket: WebSocket, why: string, closeCode?: number): void {
    const link = this.#link;
    if (link.state !== "open" || link.socket !== socket) return;
    link.left.abort();
    this.#outbox.detach();
    if (this.#settings.attempts === 0) {
      this.#end(this.#lostExit(why, closeCode));
      return;
    }
    this.#link = { state: "reconnecting" };
    void this.#reconnect(why, closeCode);
  }

  async #reconnect(why: string, closeCode: number | undefined): Promise<void> {
    const after = this.#outbox.delivered;
    const resume = {
      session: this.#session,
      after,
      applied: this.#input.acknowledged,
      ...(this.#answered === undefined ? {} : { answered: this.#answered }),
    };
    const hello: ClientMessage = { t: "hello", v: 1, resume, ...this.#traced };
    let outcome;
    try {
      outcome = await reconnect(this.#settings, hello, this.#stop.signal, this.#url);
    } catch (error) {
      if (!this.#stop.signal.aborted) {
        this.#end(this.#lostExit(`reconnecting failed (${why}): ${reasonOf(error)}`, closeCode));
      }
      return;
    }
    if (outcome.kind === "connected") {
      const { connected } = outcome;
      if (this.#link.state === "ended") {
        closeQuietly(connected.socket, CLOSE.normal);
        return;
      }
      this.#url = outcome.url;
      this.#resume(connected.ready);
      this.#attach(connected);
    } else if (outcome.kind === "refused") {
      const { kind, message } = outcome.refusal;
      this.#end(this.#lostExit(`the relay cannot resume the session: ${kind}: ${message}`));
    } else {
      const { attempts } = this.#settings;
      this.#end(
        this.#lostExit(
          `could not reconnect after ${attempts} attempt(s) (${why}): ${outcome.reason}`,
          closeCode,
        ),
      );
    }
  }

  /** After a resume: settle the input the relay applied, send the rest again, acknowledge. */
  #resume(ready: ReadyMessage): void {
    this.#input.acknowledge(ready.inSeq);
    if (ready.gone !== undefined) {
      this.#gone = ready.gone;
      this.#settleGone();
    }
    for (const { seq, line } of this.#input.pending()) this.#outbox.send({ t: "in", seq, line });
    if (this.#ending !== "open") this.#outbox.send({ t: this.#ending });
    this.#outbox.acknowledge();
  }

  #lostExit(reason: string, closeCode?: number): TransportExit {
    return {
      code: null,
      signal: null,
      ...(closeCode !== undefined && { closeCode }),
      reason,
      stderrTail: this.#output.stderrTail,
      requested: this.#ending === "close",
    };
  }

  /** Ends the transport once: settles every pending write, ends the streams, reports the exit. */
  #end(exit: TransportExit): void {
    const link = this.#link;
    if (link.state === "ended") return;
    this.#link = { state: "ended", exit };
    if (link.state === "open") link.left.abort();
    this.#stop.abort(new DuplexError("closed", "The remote transport ended"));
    this.#outbox.close();
    this.#input.rejectAll(exitedError(exit));
    this.#output.end();
    if (link.state === "open") closeQuietly(link.socket, CLOSE.normal);
    this.#resolveClosed(exit);
  }
}

function exitedError(exit: TransportExit): DuplexError {
  return new DuplexError(
    "process_exited",
    `Cannot write to claude: it has gone (${describeExit(exit)}); start a new session`,
    { exit },
  );
}

function dropped(code: number, reason: string): string {
  return `the connection dropped (code ${code}${reason ? `, ${reason}` : ""})`;
}
