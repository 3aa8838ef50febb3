/**
 * Test helper: reads a transport's `readable` (byte chunks cut anywhere) back
 * into parsed lines, without the core codec.
 *
 * @module
 */

import type { Transport } from "../../src/transport/transport.ts";

/** Reads lines from a transport, one at a time, with a bounded wait. */
export class FrameReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #decoder = new TextDecoder();
  #buffer = "";
  #lines: string[] = [];
  #done = false;
  /** Every chunk read, as received. */
  readonly chunks: Uint8Array[] = [];

  constructor(transport: Transport) {
    this.#reader = transport.readable.getReader();
  }

  /** The next line (raw text), or undefined at the end of the stream. */
  async nextLine(timeoutMs = 2000): Promise<string | undefined> {
    if (this.#lines.length > 0 || this.#done) return this.#lines.shift();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`No output within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      while (this.#lines.length === 0 && !this.#done) {
        const { done, value } = await Promise.race([this.#reader.read(), timeout]);
        if (done) {
          this.#done = true;
          this.#buffer += this.#decoder.decode();
          if (this.#buffer !== "") this.#lines.push(this.#buffer);
          this.#buffer = "";
        } else {
          this.chunks.push(value);
          this.#buffer += this.#decoder.decode(value, { stream: true });
          const parts = this.#buffer.split("\n");
          this.#buffer = parts.pop()!;
          this.#lines.push(...parts);
        }
      }
    } finally {
      clearTimeout(timer);
    }
    return this.#lines.shift();
  }

  /** The next line, parsed; throws at the end of the stream. */
  async next(timeoutMs?: number): Promise<Record<string, unknown>> {
    const line = await this.nextLine(timeoutMs);
    if (line === undefined) throw new Error("The stream ended");
    return JSON.parse(line);
  }

  /** Every remaining line, parsed, until the stream ends. */
  async rest(timeoutMs?: number): Promise<Record<string, unknown>[]> {
    const frames: Record<string, unknown>[] = [];
    for (;;) {
      const line = await this.nextLine(timeoutMs);
      if (line === undefined) return frames;
      frames.push(JSON.parse(line));
    }
  }

  /** Reads until a frame matches; returns the frames read, the match last. */
  async until(
    match: (frame: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>[]> {
    const frames: Record<string, unknown>[] = [];
    for (;;) {
      const frame = await this.next(timeoutMs);
      frames.push(frame);
      if (match(frame)) return frames;
    }
  }

  /** Releases the reader (the stream stays as it is). */
  release(): void {
    this.#reader.releaseLock();
  }
}

/** A user line as the session writes it. */
export function userLine(text: string, uuid?: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    message: { role: "user", content: [{ type: "text", text }] },
    ...(uuid === undefined ? {} : { uuid }),
  });
}

/** An open context for a factory call. */
export function openContext(): { signal: AbortSignal } {
  return { signal: new AbortController().signal };
}
