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
import { Refusal } from "../../src/wire/wire.ts";

/** Frames held while the session is being spawned, at most. */
const MAX_EARLY_FRAMES = 1024;

/**
 * A refused connection is closed once its client has been quiet this long
 * (Deno drops a connection whose peer still sends after our close frame, and
 * the peer's kernel then discards the close frame, and its reason, unread:
 * a client caught sending gets a moment to read the refusal and stop). More
 * than TCP's delayed acknowledgement (40 ms on Linux, up to 200 ms), which
 * holds the tail of a client's last burst back: at 25 ms that tail came
 * after the close in most runs, and the client lost the close frame in some...
 */
export const QUIET_MS = 250;
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
 * How long after a check that found the peer quiet a second one confirms it:
 * a check whose timer fired late ran after a stall of the event loop, ahead
 * of the frames that came in meanwhile, and saw a quiet that was not there.
 */
export const CONFIRM_MS = 5;

/**
 * Calls `close` once the peer has been quiet for {@linkcode QUIET_MS}, and at
 * the latest {@linkcode LINGER_MS} after this call, always on a later turn of
 * the event loop (after the refusal's own frame went out). The quiet is
 * trusted only when a second check, {@linkcode CONFIRM_MS} later and on time,
 * still finds nothing heard: under load the loop stalls, and the check that
 * fell due in the stall runs before the frames that arrived in it are read
 * (closing then, Deno drops the socket at the next frame, and the client's
 * kernel discards the refusal and the close frame unread).
 *
 * @param lastHeard When the peer last sent something (`Date.now()` time).
 * @param close Closes the socket.
 * @returns Cancels the wait (the socket closed meanwhile).
 */
export function closeWhenQuiet(lastHeard: () => number, close: () => void): () => void {
  const deadline = Date.now() + LINGER_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let due = Date.now();
  /** True when the last check found the peer quiet: this one confirms it. */
  let foundQuiet = false;
  const arm = (at: number): void => {
    due = Math.min(at, deadline);
    timer = setTimeout(check, Math.max(0, due - Date.now()));
  };
  const check = (): void => {
    const now = Date.now();
    const heard = lastHeard();
    if (now < deadline && now < heard + QUIET_MS) {
      foundQuiet = false;
      arm(heard + QUIET_MS);
      return;
    }
    if (now < deadline && (!foundQuiet || now - due > CONFIRM_MS)) {
      foundQuiet = true;
      arm(now + CONFIRM_MS);
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
