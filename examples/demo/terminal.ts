/**
 * The demo's terminal: lines read from stdin (a wait for one can be
 * abandoned without losing it), and output that knows whether the cursor is
 * at the start of a line.
 *
 * @module
 */

const encoder = new TextEncoder();

/** Lines typed by the person, read in the background. */
export class LineReader {
  #lines: string[] = [];
  #ended = false;
  #wake: (() => void)[] = [];

  /**
   * Starts reading.
   *
   * @param readable The terminal's input, usually `Deno.stdin.readable`.
   */
  constructor(readable: ReadableStream<Uint8Array>) {
    void this.#pump(readable);
  }

  async #pump(readable: ReadableStream<Uint8Array>): Promise<void> {
    let pending = "";
    try {
      for await (const text of readable.pipeThrough(new TextDecoderStream())) {
        pending += text;
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#lines.push(pending.slice(0, newline).replace(/\r$/, ""));
          pending = pending.slice(newline + 1);
        }
        this.#notify();
      }
    } catch {
      // The terminal went away: the end of input.
    }
    if (pending !== "") this.#lines.push(pending);
    this.#ended = true;
    this.#notify();
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }

  /**
   * The next line, or `null` at the end of input (Ctrl-D).
   *
   * @param signal Abandons the wait (rejects with its reason); no line is taken then.
   * @returns The line, without its newline.
   */
  async next(signal?: AbortSignal): Promise<string | null> {
    for (;;) {
      signal?.throwIfAborted();
      const line = this.#lines.shift();
      if (line !== undefined) return line;
      if (this.#ended) return null;
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.#wake = this.#wake.filter((wake) => wake !== done);
          reject(signal?.reason);
        };
        const done = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        this.#wake.push(done);
      });
    }
  }
}

/** Writes to the terminal, keeping track of the cursor being at a line's start. */
export class Output {
  #atLineStart = true;

  /** Writes text as is. */
  write(text: string): void {
    if (text === "") return;
    Deno.stdout.writeSync(encoder.encode(text));
    this.#atLineStart = text.endsWith("\n");
  }

  /** The person pressed Enter: the terminal's echo moved the cursor to a new line. */
  entered(): void {
    this.#atLineStart = true;
  }

  /** Ends the current line if something is on it. */
  newline(): void {
    if (!this.#atLineStart) this.write("\n");
  }

  /** Writes a whole line (on a line of its own). */
  line(text: string): void {
    this.newline();
    this.write(`${text}\n`);
  }
}

/**
 * A short, one-line form of a tool's input: the command, path or pattern,
 * else its JSON.
 *
 * @param input The tool's input.
 * @returns At most 80 characters.
 */
export function summarize(input: Readonly<Record<string, unknown>>): string {
  const main = input.command ?? input.file_path ?? input.path ?? input.pattern ?? input.url;
  const text = typeof main === "string" ? main : JSON.stringify(input);
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}
