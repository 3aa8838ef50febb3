// This module is browser compatible.
/*
 * What the relay sends, in arrival order. Runtimes hand binary frames over
 * as an ArrayBuffer (asked for with `binaryType`), a typed-array view, or a
 * Blob (whose bytes take a while to read: frames after it wait for it).
 */

/** One frame from the relay. */
export type Frame =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "binary"; readonly bytes: Uint8Array }
  /** Data of a type no WebSocket should deliver. */
  | { readonly kind: "unknown"; readonly what: string };

/** Delivers frames in arrival order, waiting for a Blob's bytes when one arrives. */
export class InboundFrames {
  /** The delivery of the frames waiting behind a Blob; undefined when none waits. */
  #tail: Promise<void> | undefined;
  #waiting = 0;
  #failed = false;
  readonly #deliver: (frame: Frame) => void;
  readonly #fail: (error: unknown) => void;

  /**
   * @param deliver Takes each frame, in order.
   * @param fail Called when a Blob cannot be read (later frames are then dropped).
   */
  constructor(deliver: (frame: Frame) => void, fail: (error: unknown) => void) {
    this.#deliver = deliver;
    this.#fail = fail;
  }

  /** Takes a message event's data. */
  push(data: unknown): void {
    if (this.#failed) return;
    const frame = frameOf(data);
    if (this.#tail === undefined && !(frame instanceof Promise)) {
      this.#deliver(frame);
      return;
    }
    this.#waiting++;
    const previous = this.#tail ?? Promise.resolve();
    this.#tail = previous.then(() => frame).then(
      (ready) => {
        if (--this.#waiting === 0) this.#tail = undefined;
        if (!this.#failed) this.#deliver(ready);
      },
      (error: unknown) => {
        if (--this.#waiting === 0) this.#tail = undefined;
        if (this.#failed) return;
        this.#failed = true; // what follows it is dropped: the transport ends
        this.#fail(error);
      },
    );
  }
}

function frameOf(data: unknown): Frame | Promise<Frame> {
  if (typeof data === "string") return { kind: "text", text: data };
  if (data instanceof ArrayBuffer) return { kind: "binary", bytes: new Uint8Array(data) };
  if (ArrayBuffer.isView(data)) {
    // Copied: a view may share its buffer (a pooled Node.js Buffer), and the session may free
    // a chunk's buffer when it is done with it (`freshChunks`).
    const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return { kind: "binary", bytes: view.slice() };
  }
  if (isBlob(data)) {
    return data.arrayBuffer().then((buffer) => ({ kind: "binary", bytes: new Uint8Array(buffer) }));
  }
  return {
    kind: "unknown",
    what: typeof data === "object" && data !== null
      ? `an object (${data.constructor?.name ?? "no constructor"})`
      : typeof data,
  };
}

function isBlob(data: unknown): data is Blob {
  return typeof Blob === "function" && data instanceof Blob;
}
