/**
 * The baseline the library is compared with: a bare `Deno.Command` pipe to
 * the CLI, with no library code. It writes a user line and reads stdout
 * until a `result` frame: split on the `\n` byte, decode each line, parse.
 *
 * @module
 */

const LF = 10;

/** What to spawn. */
export interface BareSpawn {
  readonly binary: string;
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
  readonly clearEnv?: boolean;
  readonly cwd?: string;
}

/** A CLI process driven by hand. */
export class BarePipe implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #chunk: Uint8Array = new Uint8Array(0);
  #start = 0;
  #pending: Uint8Array[] = [];

  /** @param spawn The program, its arguments and environment. */
  constructor(spawn: BareSpawn) {
    this.#child = new Deno.Command(spawn.binary, {
      args: [...(spawn.args ?? [])],
      ...(spawn.env && { env: spawn.env }),
      clearEnv: spawn.clearEnv === true,
      ...(spawn.cwd && { cwd: spawn.cwd }),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.getReader();
  }

  /** The child's pid. */
  get pid(): number {
    return this.#child.pid;
  }

  /**
   * Writes one line (a newline is added).
   *
   * @param line One JSON text.
   */
  write(line: string): Promise<void> {
    return this.#writer.write(this.#encoder.encode(line + "\n"));
  }

  /**
   * Reads frames until one satisfies `stop` (that one is returned).
   *
   * @param onFrame Called with each frame, `stop` included.
   * @returns The frame that stopped the read.
   */
  async readUntilResult(
    onFrame?: (frame: Record<string, unknown>) => void,
  ): Promise<Record<string, unknown>> {
    for (;;) {
      const newline = this.#chunk.indexOf(LF, this.#start);
      if (newline === -1) {
        if (this.#start < this.#chunk.length) this.#pending.push(this.#chunk.slice(this.#start));
        const { value, done } = await this.#reader.read();
        if (done) throw new Error("Cannot read a result: the CLI's stdout ended");
        this.#chunk = value;
        this.#start = 0;
        continue;
      }
      let bytes = this.#chunk.subarray(this.#start, newline);
      this.#start = newline + 1;
      if (this.#pending.length > 0) {
        this.#pending.push(bytes);
        bytes = join(this.#pending);
        this.#pending = [];
      }
      if (bytes.length === 0) continue;
      const frame = JSON.parse(this.#decoder.decode(bytes)) as Record<string, unknown>;
      onFrame?.(frame);
      if (frame.type === "result") return frame;
    }
  }

  /**
   * Sends a line and waits for the result.
   *
   * @param line One JSON text.
   * @returns The result frame.
   */
  async turn(line: string): Promise<Record<string, unknown>> {
    await this.write(line);
    return await this.readUntilResult();
  }

  /** Ends stdin, waits for the exit (SIGKILL after 5 s), and releases the pipes. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    const timer = setTimeout(() => {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }, 5000);
    try {
      await this.#reader.cancel().catch(() => {});
      await this.#child.status;
    } finally {
      clearTimeout(timer);
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The user line a turn writes, the same shape `DuplexSession.send` writes.
 *
 * @param text The prompt.
 * @returns One JSON text.
 */
export function userLine(text: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    message: { role: "user", content: [{ type: "text", text }] },
    uuid: crypto.randomUUID(),
  });
}
