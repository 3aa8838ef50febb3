// This module is browser compatible.
/* Opens one WebSocket to the relay and completes the hello/ready exchange. */

import { DuplexError } from "../../src/errors.ts";
import {
  bearerProtocol,
  type ClientMessage,
  parseMessage,
  Refusal,
  type RelayErrorKind,
  SUBPROTOCOL,
} from "../../src/remote/wire.ts";

export { Refusal };

/** What the relay answered to `hello`. */
export interface Ready {
  readonly session: string;
  readonly resumed: boolean;
  readonly inSeq: number;
  readonly pid?: number;
  readonly graceMs: number;
}

/** The constructor of the Web `WebSocket` (replaceable in tests). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

/**
 * Opens a socket and sends `hello`; resolves with the socket and the relay's
 * `ready` once it arrives. Rejects with {@linkcode Refusal} when the relay
 * says no, or with a `DuplexError` (`timeout`, `aborted`, `closed`) when the
 * connection fails, times out or the signal aborts. Never leaves a socket open
 * on failure.
 */
export function openSocket(
  Socket: WebSocketConstructor,
  url: string,
  token: string,
  hello: ClientMessage,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{ socket: WebSocket; ready: Ready }> {
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new Socket(url, [SUBPROTOCOL, bearerProtocol(token)]);
    } catch (error) {
      reject(
        new DuplexError("invalid_argument", `Cannot connect to the relay at ${url}: ${error}`, {
          cause: error,
        }),
      );
      return;
    }
    socket.binaryType = "arraybuffer";
    let settled = false;
    const finish = (error: Error | undefined, ready?: Ready): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      socket.removeEventListener("open", onOpen);
      socket.removeEventListener("message", onMessage);
      socket.removeEventListener("close", onClose);
      socket.removeEventListener("error", onError);
      if (error !== undefined) {
        try {
          socket.close();
        } catch { /* already closing */ }
        reject(error);
      } else {
        resolve({ socket, ready: ready as Ready });
      }
    };
    const onOpen = (): void => {
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
      socket.send(JSON.stringify(hello));
    };
    const onMessage = (event: MessageEvent): void => {
      if (typeof event.data !== "string") return; // output before ready is replayed after it
      const message = parseMessage(event.data);
      if (message?.t === "ready" && typeof message.session === "string") {
        finish(undefined, message as unknown as Ready);
      } else if (message?.t === "error") {
        finish(new Refusal(message.kind as RelayErrorKind, String(message.message)));
      }
    };
    const onClose = (event: CloseEvent): void => {
      finish(
        new DuplexError(
          "closed",
          `Cannot connect to the relay at ${url}: the connection closed (code ${event.code}` +
            `${event.reason ? `, ${event.reason}` : ""}) before it was ready`,
        ),
      );
    };
    const onError = (): void => {
      finish(
        new DuplexError(
          "closed",
          `Cannot connect to the relay at ${url}: the WebSocket failed; is the relay running ` +
            "and the URL right?",
        ),
      );
    };
    const onAbort = (): void => {
      finish(
        signal?.reason instanceof Error ? signal.reason : new DuplexError("aborted", "Aborted"),
      );
    };
    const timer = setTimeout(() => {
      finish(
        new DuplexError(
          "timeout",
          `Cannot connect to the relay at ${url}: no answer within ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.addEventListener("open", onOpen);
    socket.addEventListener("message", onMessage);
    socket.addEventListener("close", onClose);
    socket.addEventListener("error", onError);
  });
}
