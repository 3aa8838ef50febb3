/**
 * The bounds on what one client connection sends: the size of a frame
 * (`maxFrameBytes`, checked before it is parsed), the frames held while its
 * session starts (counted against `maxPendingInputBytes`), and how a refused
 * connection is closed so that its client can read why, without letting it
 * put its close off.
 *
 * @module
 */

import { utf8Length } from "../../src/_utf8.ts";
import { Refusal } from "../../src/remote/wire.ts";

/** Frames held while the session is being spawned, at most. */
const MAX_EARLY_FRAMES = 1024;

/**
 * A refused connection is closed once its client has been quiet this long
 * (Deno drops a connection whose peer still sends after our close frame, and
 * the peer's kernel then discards the close frame, and its reason, unread:
 * a client caught sending gets a moment to read the refusal and stop)...
 */
export const QUIET_MS = 25;
/**
 * ...and at the latest this long after the refusal: a deadline fixed when it
 * is refused, which nothing the client sends moves (and a client that sends
 * more than 1 MiB after its refusal is closed at once, see `RelayConnection`).
 */
export const LINGER_MS = 1000;

/** The most bytes of a close reason (the WebSocket limit is 123). */
const MAX_REASON_BYTES = 120;

/**
 * The size of a frame in bytes, from its length alone when that is over
 * `max` already (a text frame takes at least one UTF-8 byte per UTF-16 unit).
 *
 * @param data What the socket delivered.
 * @param max The bound it is checked against.
 * @returns Its size, exact up to `max`.
 */
export function frameBytes(data: unknown, max: number): number {
  if (typeof data === "string") return data.length > max ? data.length : utf8Length(data);
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

/** The refusal of a frame over `maxFrameBytes`. */
export function frameTooLarge(max: number): Refusal {
  return new Refusal(
    "too_large",
    `Cannot take a frame of more than ${max} bytes (the relay's maxFrameBytes)`,
  );
}

/** The refusal of input beyond `maxPendingInputBytes`. */
export function inputOverflow(pending: number, max: number): Refusal {
  return new Refusal(
    "too_large",
    `Cannot take more input: ${pending} bytes wait for claude (maxPendingInputBytes ${max}); ` +
      `wait for acknowledgements`,
  );
}

/** The frames that arrive while a connection's session starts, bounded in number and bytes. */
export class EarlyFrames {
  readonly #maxBytes: number;
  #frames: string[] = [];
  #bytes = 0;

  /** @param maxBytes The most bytes held (the relay's `maxPendingInputBytes`). */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * Holds a frame.
   *
   * @param text The frame.
   * @param bytes Its size.
   * @returns Undefined when held, else the refusal to send.
   */
  hold(text: string, bytes: number): Refusal | undefined {
    if (this.#frames.length >= MAX_EARLY_FRAMES) {
      return new Refusal("protocol", "Too many messages before ready");
    }
    if (this.#bytes + bytes > this.#maxBytes) return inputOverflow(this.#bytes, this.#maxBytes);
    this.#frames.push(text);
    this.#bytes += bytes;
    return undefined;
  }

  /**
   * Hands the held frames over and forgets them.
   *
   * @returns The frames, oldest first.
   */
  take(): string[] {
    const frames = this.#frames;
    this.#frames = [];
    this.#bytes = 0;
    return frames;
  }
}

/**
 * Calls `close` once the peer has been quiet for {@linkcode QUIET_MS}, and at
 * the latest {@linkcode LINGER_MS} after this call, always on a later turn of
 * the event loop (after the refusal's own frame went out).
 *
 * @param lastHeard When the peer last sent something (`Date.now()` time).
 * @param close Closes the socket.
 * @returns Cancels the wait (the socket closed meanwhile).
 */
export function closeWhenQuiet(lastHeard: () => number, close: () => void): () => void {
  const deadline = Date.now() + LINGER_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = (): void => {
    const now = Date.now();
    const quietAt = lastHeard() + QUIET_MS;
    if (now < quietAt && now < deadline) {
      timer = setTimeout(check, Math.min(quietAt, deadline) - now);
      return;
    }
    timer = undefined;
    close();
  };
  timer = setTimeout(check, 0);
  return () => clearTimeout(timer);
}

/**
 * Cuts a close reason to what a WebSocket close frame carries, on a character boundary.
 *
 * @param reason The reason.
 * @returns It, or its longest prefix of at most 120 UTF-8 bytes.
 */
export function cutReason(reason: string): string {
  const bytes = new TextEncoder().encode(reason);
  if (bytes.length <= MAX_REASON_BYTES) return reason;
  let cut = reason.slice(0, MAX_REASON_BYTES);
  while (new TextEncoder().encode(cut).length > MAX_REASON_BYTES) cut = cut.slice(0, -1);
  return cut;
}
