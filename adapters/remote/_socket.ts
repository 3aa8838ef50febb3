// This module is browser compatible.
/* Opens one WebSocket to the relay and completes the hello/ready exchange. */

import { deadline, sleep } from "../../src/_deadline.ts";
import { DuplexError, type DuplexErrorKind, type TransportExit } from "../../src/errors.ts";
import {
  bearerProtocol,
  type ClientMessage,
  type ReadyMessage,
  Refusal,
  type RelayErrorKind,
  SUBPROTOCOL,
} from "../../src/wire/wire.ts";
import { parseRelayMessage } from "../../src/wire/wire_parse.ts";
import type { Settings } from "./remote_options.ts";
import { askWhyRefused, worthAsking } from "./_refusal_probe.ts";

export { Refusal };

/** An open socket and the relay's answer to its hello. */
export interface Connected {
  readonly socket: WebSocket;
  readonly ready: ReadyMessage;
  /**
   * Stops listening and returns the data of the messages that arrived after
   * `ready` (in order): the new owner adds its own listener first, then calls it.
   */
  handOver(): unknown[];
}

/** What {@linkcode openSocket} needs of the settings. */
export interface SocketTarget extends Pick<Settings, "Socket" | "url" | "connectTimeoutMs"> {
  /** The bearer token of this attempt. */
  readonly token: string;
}

/** Names of the errors a runtime throws for a connection it does not permit. */
const PERMISSION_ERRORS: ReadonlySet<string> = new Set([
  "NotCapable", // Deno 2 without --allow-net
  "PermissionDenied", // Deno 1
  "SecurityError", // browsers: a blocked port, mixed content, a content security policy
]);

/** What each kind of refusal means to the caller of `remote()`. */
const REFUSAL_KINDS: ReadonlyMap<RelayErrorKind, DuplexErrorKind> = new Map(
  [
    ["unauthorized", "unauthorized"],
    ["not_permitted", "not_permitted"],
    ["spawn_failed", "process_exited"],
    ["busy", "closed"],
    ["protocol", "protocol"],
    // A conversation (`spawn.resume`) or session the relay does not know, or not for this owner.
    ["unknown_session", "not_found"],
    ["resume_gap", "closed"],
  ] as const,
);

/** `WebSocket.CLOSING`, without reading a global. */
const CLOSING = 2;

/** After an error event, how long to wait for the close event that tells its code. */
const CLOSE_AFTER_ERROR_MS = 1_000;

/**
 * Opens a socket and sends `hello`; resolves once the relay's `ready`
 * arrives. Never leaves a socket open on failure. A connection that fails
 * before it opens is followed by one plain `GET` of the same URL (the token
 * in an `Authorization` header, within the same bound): the relay refuses a
 * bad token or origin with HTTP 401 / 403 before the upgrade, and a busy
 * relay or proxy answers 503 / 429, which a WebSocket cannot read; the
 * relay answers that request the same way.
 *
 * @param target Where and how to connect, and the bound on it.
 * @param hello The first message.
 * @param signal Aborting it rejects with its reason, unchanged.
 * @throws {Refusal} When the relay says no (in an `error` message, or with
 * HTTP 401 / 403, or 429 / 503 for `busy`, before the upgrade).
 * @throws {DuplexError} `not_permitted` (the runtime forbids the connection),
 * `invalid_argument` (the runtime rejects the URL), `timeout`, `protocol`,
 * `closed` (the connection failed: the runtime's words, close code and reason).
 */
export async function openSocket(
  target: SocketTarget,
  hello: ClientMessage,
  signal?: AbortSignal,
): Promise<Connected> {
  signal?.throwIfAborted();
  const { url, connectTimeoutMs } = target;
  const limit = deadline(connectTimeoutMs, {
    signal,
    reason: () =>
      new DuplexError(
        "timeout",
        `Cannot connect to the relay at ${url}: no answer within ${connectTimeoutMs} ms`,
      ),
  });
  try {
    const socket = construct(target);
    try {
      return await handshake(socket, target, hello, limit.signal);
    } catch (error) {
      closeQuietly(socket);
      throw error;
    }
  } finally {
    limit[Symbol.dispose]();
  }
}

/**
 * The error of a refused session start, with the kind a caller switches on.
 *
 * @param url The relay's URL.
 * @param refused The relay's refusal.
 * @returns The error to reject with.
 */
export function refusalError(url: string, refused: Refusal): DuplexError {
  return new DuplexError(
    REFUSAL_KINDS.get(refused.kind) ?? "closed",
    `Cannot start a session on the relay at ${url}: ${refused.kind}: ${refused.message}`,
    { cause: refused },
  );
}

/**
 * Closes a socket, ignoring a socket that cannot be closed (already closing, or broken).
 *
 * @param socket The socket.
 * @param code The close code, if any.
 * @param reason The close reason, if any.
 */
export function closeQuietly(socket: WebSocket, code?: number, reason?: string): void {
  try {
    // Inside the try: in workerd even reading readyState of another request's socket throws.
    if (socket.readyState >= CLOSING) return; // the first close code stands
    if (code === undefined) socket.close();
    else socket.close(code, reason);
  } catch {
    // Closing already, or the runtime refuses: either way it is not ours any more.
  }
}

/**
 * The message in an error or an error event, if it has one (not the
 * ground floor's `messageOf`: an event is no `Error`, and an empty message
 * counts as none).
 *
 * @param value What was thrown, or the event.
 * @returns Its message, or undefined.
 */
export function messageIn(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("message" in value)) return undefined;
  return typeof value.message === "string" && value.message !== "" ? value.message : undefined;
}

/**
 * Why something failed, for a message: the message in an error or an error
 * event ({@linkcode messageIn}), else the value as text.
 *
 * @param error What was thrown, or the event.
 * @returns Text for a message.
 */
export function reasonOf(error: unknown): string {
  return messageIn(error) ?? String(error);
}

function construct({ Socket, url, token }: SocketTarget): WebSocket {
  let socket: WebSocket;
  try {
    socket = new Socket(url, [SUBPROTOCOL, bearerProtocol(token)]);
  } catch (error) {
    const name = typeof error === "object" && error !== null && "name" in error
      ? String(error.name)
      : "";
    if (PERMISSION_ERRORS.has(name)) {
      throw new DuplexError(
        "not_permitted",
        `Cannot connect to the relay at ${url}: the runtime does not permit it ` +
          `(${name}: ${messageIn(error) ?? "no message"}); allow the connection, for example ` +
          `with deno run --allow-net=${hostOf(url)}`,
        { cause: error },
      );
    }
    throw new DuplexError(
      "invalid_argument",
      `Cannot connect to the relay at ${url}: ${reasonOf(error)}`,
      { cause: error },
    );
  }
  socket.binaryType = "arraybuffer";
  return socket;
}

function handshake(
  socket: WebSocket,
  { url, token }: SocketTarget,
  hello: ClientMessage,
  signal: AbortSignal,
): Promise<Connected> {
  const { promise, resolve, reject } = Promise.withResolvers<Connected>();
  const done = new AbortController();
  let failure: Event | undefined;
  let opened = false;
  let asking = false;
  /** Once `ready` came: the messages after it, kept for the transport (it attaches later). */
  let early: unknown[] | undefined;
  const finish = (error: unknown, ready?: ReadyMessage): void => {
    if (done.signal.aborted) return;
    done.abort();
    // Removed one by one: a WebSocket given by the caller may not honour `{ signal }`.
    signal.removeEventListener("abort", onAbort);
    socket.removeEventListener("open", onOpen);
    socket.removeEventListener("close", onClose);
    socket.removeEventListener("error", onError);
    if (ready === undefined) {
      socket.removeEventListener("message", onMessage);
      reject(error);
      return;
    }
    const kept: unknown[] = early = [];
    resolve({
      socket,
      ready,
      handOver() {
        socket.removeEventListener("message", onMessage);
        return kept.splice(0);
      },
    });
  };
  /** The connection failed: before it opened, the relay may have refused it over HTTP. */
  const failed = (error: DuplexError): void => {
    if (done.signal.aborted || asking) return;
    // Deno names the status it got: one that is no refusal (404, 502) is not asked about.
    if (opened || !worthAsking(failure === undefined ? undefined : messageIn(failure))) {
      finish(error);
      return;
    }
    asking = true;
    askWhyRefused(url, token, signal).then(
      (refusal) => finish(refusal ?? error),
      () => finish(error),
    );
  };
  const onOpen = (): void => {
    opened = true;
    if (socket.protocol !== SUBPROTOCOL) {
      finish(
        new DuplexError(
          "protocol",
          `Cannot use the relay at ${url}: it chose subprotocol "${socket.protocol}", ` +
            `not "${SUBPROTOCOL}"; is it a @duplex/claude relay of the same version?`,
        ),
      );
      return;
    }
    try {
      socket.send(JSON.stringify(hello));
    } catch (error) {
      finish(
        new DuplexError(
          "closed",
          `Cannot connect to the relay at ${url}: sending the hello failed: ` +
            (reasonOf(error)),
          { cause: error },
        ),
      );
    }
  };
  const onMessage = (event: MessageEvent): void => {
    if (early !== undefined) {
      early.push(event.data);
      return;
    }
    if (typeof event.data !== "string") return; // output before ready is replayed after it
    const parsed = parseRelayMessage(event.data);
    if (!parsed.ok) {
      finish(
        new DuplexError(
          "protocol",
          `Cannot use the relay at ${url}: it answered the hello with a bad message: ` +
            parsed.reason,
        ),
      );
    } else if (parsed.message.t === "ready") {
      finish(undefined, parsed.message);
    } else if (parsed.message.t === "error") {
      finish(new Refusal(parsed.message.kind, parsed.message.message));
    }
  };
  const onClose = (event: CloseEvent): void => {
    failed(refused(url, failure, event));
  };
  const onError = (event: Event): void => {
    // The close event that follows tells the code; wait for it, a bounded time.
    failure = event;
    sleep(CLOSE_AFTER_ERROR_MS, { signal: done.signal }).then(
      () => failed(refused(url, failure, undefined)),
      () => {},
    );
  };
  const onAbort = (): void => finish(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  socket.addEventListener("open", onOpen);
  socket.addEventListener("message", onMessage);
  socket.addEventListener("close", onClose);
  socket.addEventListener("error", onError);
  if (signal.aborted) onAbort();
  return promise;
}

/** The error of a connection that ended before `ready`, in the runtime's words. */
function refused(
  url: string,
  failure: Event | undefined,
  close: CloseEvent | undefined,
): DuplexError {
  const said = failure === undefined ? undefined : messageIn(failure) ?? "the WebSocket failed";
  const how = close === undefined
    ? "no close event followed"
    : `close code ${close.code}${close.reason ? `, ${close.reason}` : ""}`;
  const exit: TransportExit = {
    code: null,
    signal: null,
    ...(close !== undefined && { closeCode: close.code }),
    reason: said ?? how,
    stderrTail: "",
    requested: false,
  };
  return new DuplexError(
    "closed",
    said === undefined
      ? `Cannot connect to the relay at ${url}: the connection closed (${how}) before it was ready`
      : `Cannot connect to the relay at ${url}: ${said} (${how}); is the relay running and ` +
        "the URL right?",
    { cause: failure === undefined ? close : errorOf(failure), exit },
  );
}

/** What an error event carries: its `error` (an ErrorEvent's), or the event itself. */
function errorOf(event: Event): unknown {
  return "error" in event && event.error !== undefined && event.error !== null
    ? event.error
    : event;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "<host>";
  }
}
