// This module is browser compatible.
/* What the peer wrote, as the transport's streams: stdout bytes, stderr lines and a stderr tail. */

/** The most stderr lines kept for the exit report. */
const STDERR_TAIL_LINES = 100;
/** Stderr lines queued for a reader before later ones are only kept in the tail. */
const STDERR_QUEUE_LINES = 1024;

/** The readable side of the transport: stdout, stderr and the stderr tail. */
export class PeerOutput {
  /** The CLI's stdout, in chunks. */
  readonly readable: ReadableStream<Uint8Array>;
  /** The CLI's stderr, one line per chunk. */
  readonly stderr: ReadableStream<string>;
  readonly #stdout: Sink<Uint8Array>;
  readonly #stderr: Sink<string>;
  readonly #tail: string[] = [];

  constructor() {
    this.#stdout = new Sink();
    this.#stderr = new Sink();
    this.readable = this.#stdout.stream();
    this.stderr = this.#stderr.stream({ highWaterMark: STDERR_QUEUE_LINES });
  }

  /** The last stderr lines, joined. */
  get stderrTail(): string {
    return this.#tail.join("\n");
  }

  /** Enqueues stdout bytes (dropped when nobody reads any more). */
  stdout(bytes: Uint8Array): void {
    if (bytes.length > 0) this.#stdout.push(bytes);
  }

  /** Takes a stderr line: kept in the tail, and queued while the reader keeps up. */
  stderrLine(line: string): void {
    this.#tail.push(line);
    if (this.#tail.length > STDERR_TAIL_LINES) this.#tail.shift();
    if (this.#stderr.room()) this.#stderr.push(line);
  }

  /** Ends both streams. Idempotent. */
  end(): void {
    this.#stdout.end();
    this.#stderr.end();
  }
}

/** One stream's controller, and whether it still takes chunks. */
class Sink<T> {
  #controller: ReadableStreamDefaultController<T> | undefined;
  #open = true;

  stream(strategy?: QueuingStrategy<T>): ReadableStream<T> {
    return new ReadableStream<T>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#open = false;
      },
    }, strategy);
  }

  room(): boolean {
    return this.#open && (this.#controller?.desiredSize ?? 0) > 0;
  }

  push(chunk: T): void {
    if (this.#open) this.#controller?.enqueue(chunk);
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#controller?.close();
  }
}
