/**
 * One WebSocket connection to the relay: the hello, then the messages of
 * the session it attached to, with a heartbeat.
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, type Deadline, deadline } from "../../src/_deadline.ts";
import { heartbeat } from "../../src/wire/_heartbeat.ts";
import type { ClientMessage, RelayMessage } from "../../src/wire/wire.ts";
import { parseClientFrame } from "../../src/wire/wire_parse.ts";
import type { TraceContext } from "../../src/telemetry/_trace_context.ts";
import type { Credential } from "./_access.ts";
import type { ConnectionHost, ResumePoint } from "./_connection_host.ts";
import {
  closeWhenQuiet,
  cutReason,
  EarlyFrames,
  frameBytes,
  frameTooLarge,
  inputOverflow,
} from "./_frame_bounds.ts";
import { closeCodeFor, Refusal } from "./_policy.ts";
import type { Peer, RelaySession } from "./_relay_session.ts";
import type { ConnectionTrace } from "./_relay_telemetry.ts";

type State = "hello" | "starting" | "open" | "closed";

/**
 * How long a refused connection stays counted after the close frame was
 * sent, waiting for its client's: Deno cannot end a socket whose peer never
 * answers, and such a peer must not hold a slot of `maxPendingConnections`
 * for good.
 */
const CLOSE_WAIT_MS = 2_000;

/**
 * The most a refused connection may send after its refusal before it is
 * closed at once: what a client that stops on reading the refusal still has
 * on its way (the burst it sent before it read it), with room to spare.
 */
const AFTER_REFUSAL_BYTES = 1024 * 1024;

/** One client connection. */
export class RelayConnection implements Peer {
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>;
  readonly #socket: WebSocket;
  readonly #host: ConnectionHost;
  #state: State = "hello";
  #session: RelaySession | undefined;
  readonly #credential: Credential;
  /** Frames that arrive while the session starts. */
  readonly #early: EarlyFrames;
  #settled = false;
  #removed = false;
  #lastSeen = Date.now();
  #helloTimer: Deadline | undefined;
  /** Cancels the wait of a refused connection for its client to be quiet. */
  #stopLinger: (() => void) | undefined;
  /** Ends that wait now: closes the socket with the refusal. */
  #lingerEnd: (() => void) | undefined;
  /** The bound on the wait for the client's close frame, once ours was sent. */
  #closeWait: ReturnType<typeof setTimeout> | undefined;
  /** The bytes a refused connection sent since its refusal. */
  #sentSinceRefusal = 0;
  /** Aborted when the connection is done: stops the heartbeat. */
  readonly #done = new AbortController();
  /** Settles at the next pong (one shared wait, whoever asks). */
  #pong: PromiseWithResolvers<void> | undefined;
  readonly #trace: ConnectionTrace;

  /**
   * Takes over an upgraded socket (its origin and credential were checked
   * before the upgrade).
   *
   * @param socket The server side of the WebSocket.
   * @param host The relay.
   * @param credential The credential it was admitted with.
   * @param trace Its span (`claude.relay.connection`).
   */
  constructor(
    socket: WebSocket,
    host: ConnectionHost,
    credential: Credential,
    trace: ConnectionTrace,
  ) {
    this.#socket = socket;
    this.#host = host;
    this.#trace = trace;
    this.#credential = credential;
    this.#early = new EarlyFrames(host.maxPendingInputBytes);
    socket.binaryType = "arraybuffer";
    const { promise, resolve } = Promise.withResolvers<void>();
    this.closed = promise;
    socket.onopen = () => {
      if (this.#state === "closed") return;
      const timer = this.#helloTimer = deadline(host.helloTimeoutMs);
      timer.signal.addEventListener("abort", () => {
        this.#helloTimer = undefined;
        this.#refuse(new Refusal("protocol", `No hello within ${host.helloTimeoutMs} ms`));
      }, { once: true });
    };
    socket.onmessage = (event) => this.#onMessage(event);
    socket.onerror = () => {};
    socket.onclose = (event) => {
      this.#stopLinger?.();
      this.#stopLinger = this.#lingerEnd = undefined;
      this.#state = "closed";
      this.#cleanUp(event.code);
      this.#release();
      resolve();
    };
  }

  /**
   * Sends a text frame, unless the socket is closing.
   *
   * @param text The text.
   */
  sendText(text: string): void {
    if (this.#state === "closed" || this.#socket.readyState !== WebSocket.OPEN) return;
    try {
      this.#socket.send(text);
    } catch {
      // Closed meanwhile: the close event detaches the session.
    }
  }

  /**
   * Sends a binary frame, unless the socket is closing.
   *
   * @param frame The bytes.
   */
  sendBinary(frame: Uint8Array<ArrayBuffer>): void {
    if (this.#state === "closed" || this.#socket.readyState !== WebSocket.OPEN) return;
    try {
      this.#socket.send(frame);
    } catch {
      // As above.
    }
  }

  /**
   * Whether the client is still at the other end of this connection now: a
   * ping it answers within the bound (a client that left, or a connection
   * the relay read late after a stall, answers nothing).
   *
   * @param timeoutMs The bound.
   * @returns True when its pong came; false when the bound passed or the connection ended.
   */
  async answers(timeoutMs: number): Promise<boolean> {
    if (this.#state !== "open") return false;
    const pong = this.#pong ??= Promise.withResolvers<void>();
    this.send({ t: "ping", at: Date.now() });
    using limit = deadline(timeoutMs, { signal: this.#done.signal });
    return await abortable(pong.promise, limit.signal).then(
      () => this.#state === "open",
      () => false,
    );
  }

  /**
   * Closes the socket and detaches from the session. Idempotent.
   *
   * @param code The close code.
   * @param reason The close reason (cut to the WebSocket limit).
   */
  end(code: number | undefined, reason = ""): void {
    if (this.#state !== "closed") {
      this.#state = "closed";
      this.#cleanUp(code);
      this.#closeSocket(code, reason);
    } else {
      this.#lingerEnd?.(); // refused, not yet closed: its own close goes out now
    }
    this.#release();
  }

  #closeSocket(code: number | undefined, reason: string): void {
    try {
      if (code === undefined) this.#socket.close();
      else this.#socket.close(code, cutReason(reason));
    } catch {
      // Already closing.
    }
    // Counted until the client answers our close frame, or for a bounded time.
    clearTimeout(this.#closeWait);
    this.#closeWait = setTimeout(() => this.#release(), CLOSE_WAIT_MS);
  }

  /** The socket closed (or its close was not answered in time): the slot is free. */
  #release(): void {
    clearTimeout(this.#closeWait);
    this.#closeWait = undefined;
    this.#settle();
    if (this.#removed) return;
    this.#removed = true;
    this.#host.removeConnection(this);
  }

  /**
   * Sends a message, unless the socket is closing.
   *
   * @param message The message.
   */
  send(message: RelayMessage): void {
    this.sendText(JSON.stringify(message));
  }

  /**
   * Sends the refusal, detaches, and closes with its reason once the client
   * has been quiet a moment (a client caught sending gets to read the
   * refusal and stop: closing while its frames still arrive loses the close
   * frame), at the latest 1 s after the refusal (a deadline its frames
   * cannot move), and at once when it goes on sending past
   * {@linkcode AFTER_REFUSAL_BYTES}. It stays counted among the handshakes
   * in progress until its socket has closed.
   */
  #refuse(refusal: Refusal): void {
    if (this.#state === "closed") return;
    this.send({ t: "error", kind: refusal.kind, message: refusal.message });
    this.#state = "closed";
    const code = closeCodeFor(refusal.kind);
    this.#trace.refused(refusal, code);
    this.#cleanUp(code);
    const close = this.#lingerEnd = () => {
      this.#stopLinger?.();
      this.#stopLinger = this.#lingerEnd = undefined;
      this.#closeSocket(code, refusal.message);
    };
    this.#stopLinger = closeWhenQuiet(() => this.#lastSeen, close);
  }

  /**
   * A frame of a refused connection, dropped unread. Past
   * {@linkcode AFTER_REFUSAL_BYTES} since the refusal the client is not
   * stopping: its close goes out now, its reason forfeit.
   */
  #afterRefusal(data: unknown): void {
    if (this.#lingerEnd === undefined) return;
    this.#sentSinceRefusal += frameBytes(data, AFTER_REFUSAL_BYTES);
    if (this.#sentSinceRefusal > AFTER_REFUSAL_BYTES) this.#lingerEnd();
  }

  #protocolError(message: string): void {
    this.#refuse(new Refusal("protocol", message));
  }

  #cleanUp(code: number | undefined): void {
    if (this.#done.signal.aborted) return;
    this.#done.abort();
    this.#trace.closed(code);
    this.#clearHelloTimer();
    this.#early.take();
    this.#session?.detach(this);
  }

  #onMessage(event: MessageEvent): void {
    this.#lastSeen = Date.now();
    const data: unknown = event.data;
    if (this.#state === "closed") {
      this.#afterRefusal(data);
      return;
    }
    // Checked before anything reads it.
    const max = this.#host.maxFrameBytes;
    const size = frameBytes(data, max);
    if (size > max) {
      this.#refuse(frameTooLarge(max));
      return;
    }
    if (typeof data !== "string") {
      this.#protocolError("The relay takes only text frames from clients");
      return;
    }
    if (this.#state === "starting") {
      const refusal = this.#early.hold(data, size);
      if (refusal !== undefined) this.#refuse(refusal);
      return;
    }
    this.#handle(data);
  }

  #handle(text: string): void {
    // A frame holds one message, or a batch: a JSON array of messages, handled in order.
    const parsed = parseClientFrame(text);
    if (!parsed.ok) {
      this.#protocolError(parsed.reason);
      return;
    }
    const messages = parsed.message;
    if (messages.length > 1 && messages.some((message) => message.t === "hello")) {
      // What follows a hello waits for its session: it would have none to go to.
      this.#protocolError("A hello travels alone in its frame, not in a batch");
      return;
    }
    for (const message of messages) {
      if (this.#state === "closed") return;
      this.#handleMessage(message);
    }
  }

  #handleMessage(message: ClientMessage): void {
    if (this.#state === "hello") {
      if (message.t !== "hello") {
        this.#protocolError(`The first message must be a hello, got "${message.t}"`);
        return;
      }
      this.#clearHelloTimer();
      this.#hello(message);
      return;
    }
    const session = this.#session;
    if (session === undefined) {
      this.#protocolError(`A ${message.t} message came before the session was ready`);
      return;
    }
    switch (message.t) {
      case "in":
        switch (session.input(message.seq, message.line)) {
          case "gap":
            this.#protocolError(`Input ${message.seq} arrived before the input before it`);
            return;
          case "full":
            this.#refuse(inputOverflow(session.pendingInputBytes, this.#host.maxPendingInputBytes));
            return;
          case "ok":
            return;
        }
        return;
      case "ack":
        if (!session.ack(message.seq)) {
          this.#protocolError("An ack must name output the relay has sent");
        }
        return;
      case "eof":
        session.endInput();
        return;
      case "close":
        session.requestClose();
        return;
      case "ping":
        this.send({ t: "pong", at: message.at });
        return;
      case "pong":
        this.#pong?.resolve();
        this.#pong = undefined;
        return;
      case "hello":
        this.#protocolError("A connection sends one hello");
    }
  }

  #hello(message: Extract<ClientMessage, { t: "hello" }>): void {
    this.#trace.hello(message.trace, message.resume !== undefined);
    if (message.resume !== undefined) {
      const { session, ...from } = message.resume;
      this.#resume(session, from, message.trace);
      return;
    }
    this.#state = "starting";
    this.#host.spawn(message.spawn, this.#credential, message.trace).then(
      (session) => {
        if (this.#state === "closed" || this.#host.closing) {
          // Nobody learned the token: nothing can resume it.
          void session.forget();
          return;
        }
        this.#attach(session, 0, false);
      },
      (error: unknown) => {
        this.#state = "open";
        this.#refuse(
          error instanceof Refusal ? error : new Refusal("spawn_failed", messageOf(error)),
        );
      },
    );
  }

  #resume(token: string, from: ResumePoint, trace: TraceContext | undefined): void {
    const credential = this.#credential;
    // Another owner's session is answered exactly as an unknown one, before anything about
    // it (how much output it has) can show.
    const found = this.#host.find(token, credential.owner);
    if (!credential.policy.allowResume) return this.#unknownSession();
    if (found !== undefined) {
      // Another relay may have resumed it from the store meanwhile: take it back first.
      this.#state = "starting";
      void found.retake().then((known) => {
        if (this.#state === "closed" || this.#host.closing) {
          found.unclaimed();
          return;
        }
        this.#state = "open";
        if (!known) {
          found.unclaimed();
          this.#refuse(
            new Refusal(
              "busy",
              "Cannot resume yet: the session store does not answer, and another relay may " +
                "have run the conversation; try again",
            ),
          );
          return;
        }
        // Fenced off meanwhile (its session ended): the store knows where it stands.
        if (found.forgotten) this.#resume(token, from, trace);
        else this.#resumeLive(found, from.after);
      });
      return;
    }
    this.#state = "starting";
    this.#host.wake(token, from, credential, trace).then(
      (session) => {
        if (this.#state === "closed" || this.#host.closing) {
          // Its token is known: it waits for the next resume (a closing relay keeps it too).
          session?.unclaimed();
          return;
        }
        this.#state = "open";
        if (session === undefined) this.#unknownSession();
        else this.#resumeLive(session, from.after);
      },
      (error: unknown) => {
        this.#state = "open";
        this.#refuse(
          error instanceof Refusal ? error : new Refusal("spawn_failed", messageOf(error)),
        );
      },
    );
  }

  #unknownSession(): void {
    this.#refuse(
      new Refusal(
        "unknown_session",
        "Cannot resume: the relay has no such session (it ended, or the relay restarted); " +
          "start a new session",
      ),
    );
  }

  #resumeLive(session: RelaySession, after: number): void {
    const check = session.canResume(after);
    if (check === "ahead") {
      this.#protocolError(`Cannot resume after output ${after}: the relay sent only up to it`);
      session.unclaimed(); // woken for this connection, it waits for the next one
      return;
    }
    if (check === "gap") {
      void session.forget();
      this.#refuse(
        new Refusal(
          "resume_gap",
          `Cannot resume after output ${after}: output the client lacks was dropped from the ` +
            `relay's buffer; start a new session`,
        ),
      );
      return;
    }
    this.#attach(session, after, true);
  }

  #attach(session: RelaySession, after: number, resumed: boolean): void {
    this.#session = session;
    this.#state = "open";
    this.#settle();
    this.#trace.ready(session.trace.id, resumed);
    session.attach(this, after, resumed);
    this.#lastSeen = Date.now();
    void heartbeat(this.#host.heartbeatMs, this.#done.signal, {
      lastHeard: () => this.#lastSeen,
      ping: () => this.send({ t: "ping", at: Date.now() }),
      // Treated as a dropped connection: the session waits for a resume.
      silent: () => this.end(undefined),
    });
    for (const text of this.#early.take()) {
      if (this.#state !== "open") break;
      this.#handle(text);
    }
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#host.settled(this);
  }

  #clearHelloTimer(): void {
    this.#helloTimer?.[Symbol.dispose]();
    this.#helloTimer = undefined;
  }
}
