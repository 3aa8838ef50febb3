/**
 * Child processes of the "where it runs" tests (workerd, chromium, node, bun,
 * deno clients), always reaped: each runs in its own process group, and
 * stopping it signals the whole group (SIGTERM, a bounded wait, SIGKILL),
 * then awaits its status and the end of its output.
 *
 * @module
 */

import { collectText, waitUntil } from "../_harness.ts";

/** Options of {@linkcode Child.spawn}. */
export interface ChildOptions {
  /** Arguments. */
  readonly args?: readonly string[];
  /** The whole environment (nothing of the test's is passed on). */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory. */
  readonly cwd?: string;
  /** Text written to its stdin, which is then closed. Default: no stdin. */
  readonly stdin?: string;
}

/** A running child process with its output collected. */
export class Child implements AsyncDisposable {
  /** Its pid, which is also its process group id. */
  readonly pid: number;
  /** Its exit status, once it exited. */
  readonly status: Promise<Deno.CommandStatus>;
  readonly #stdout: ReturnType<typeof collectText>;
  readonly #stderr: ReturnType<typeof collectText>;
  readonly #name: string;
  #exited = false;
  #stopping: Promise<Deno.CommandStatus> | undefined;

  /**
   * Takes over a spawned process (use {@linkcode Child.spawn}).
   *
   * @param name Its name, for messages.
   * @param process The process, with piped stdout and stderr.
   */
  constructor(name: string, process: Deno.ChildProcess) {
    this.#name = name;
    this.pid = process.pid;
    this.status = process.status;
    this.status.then(() => (this.#exited = true));
    this.#stdout = collectText(process.stdout);
    this.#stderr = collectText(process.stderr);
  }

  /**
   * Starts `binary` in its own process group, stdout and stderr collected.
   *
   * @param binary The program.
   * @param options Arguments, environment, working directory, stdin text.
   * @returns The running child.
   */
  static async spawn(binary: string, options: ChildOptions = {}): Promise<Child> {
    const process = new Deno.Command(binary, {
      args: [...(options.args ?? [])],
      env: { ...options.env },
      clearEnv: true,
      ...(options.cwd && { cwd: options.cwd }),
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const child = new Child(binary.split("/").at(-1) ?? binary, process);
    if (options.stdin !== undefined) {
      const writer = process.stdin.getWriter();
      try {
        await writer.write(new TextEncoder().encode(options.stdin));
        await writer.close();
      } catch {
        // It exited before reading: its status and stderr tell why.
      }
    }
    return child;
  }

  /** Whether it has exited. */
  get exited(): boolean {
    return this.#exited;
  }

  /** What it wrote to stdout so far (the last 64 KiB). */
  get stdout(): string {
    return this.#stdout.text();
  }

  /** What it wrote to stderr so far (the last 64 KiB). */
  get stderr(): string {
    return this.#stderr.text();
  }

  /**
   * Waits until its stdout or stderr matches `pattern` (bounded), failing
   * early when it exits first.
   *
   * @param stream Which output.
   * @param pattern What to find.
   * @param timeoutMs How long to wait.
   * @returns The match.
   */
  async waitFor(
    stream: "stdout" | "stderr",
    pattern: RegExp,
    timeoutMs = 15_000,
  ): Promise<RegExpMatchArray> {
    let match: RegExpMatchArray | null = null;
    await waitUntil(
      () => {
        match = this[stream].match(pattern);
        if (match === null && this.#exited) {
          throw new Error(`${this.#name} exited before printing ${pattern}; ${this.describe()}`);
        }
        return match !== null;
      },
      `${this.#name} printing ${pattern} (${this.describe()})`,
      timeoutMs,
    );
    return match!;
  }

  /**
   * Waits for its exit (bounded; killed past it).
   *
   * @param timeoutMs How long it may take.
   * @returns Its status.
   */
  async exit(timeoutMs = 30_000): Promise<Deno.CommandStatus> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), timeoutMs);
    });
    try {
      const first = await Promise.race([this.status, expired]);
      if (first !== "expired") return await this.stop();
    } finally {
      clearTimeout(timer);
    }
    await this.stop();
    throw new Error(`${this.#name} did not exit within ${timeoutMs} ms; ${this.describe()}`);
  }

  /** The tail of its output, for failure messages. */
  describe(): string {
    return `stdout: ${this.stdout.slice(-2000)} | stderr: ${this.stderr.slice(-2000)}`;
  }

  /**
   * Ends the process group: SIGTERM, up to `graceMs` for the leader to exit,
   * SIGKILL to whatever is left of the group; then awaits the status and
   * the end of its output. Idempotent.
   *
   * @param graceMs How long SIGTERM has.
   * @returns Its status.
   */
  stop(graceMs = 3_000): Promise<Deno.CommandStatus> {
    this.#stopping ??= (async () => {
      signalGroup(this.pid, "SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([this.status, expired]);
      clearTimeout(timer);
      signalGroup(this.pid, "SIGKILL"); // the leader if it ignored SIGTERM, and stragglers
      const status = await this.status;
      await Promise.all([this.#stdout.done, this.#stderr.done]);
      return status;
    })();
    return this.#stopping;
  }

  /** Same as {@linkcode Child.stop}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

function signalGroup(pgid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // The group is gone.
  }
}

/**
 * The live (not zombie) processes whose command line contains `needle`,
 * from `ps`: with `children`, only those whose parent is this test process
 * (the relay's `claude` processes).
 *
 * @param needle Part of the command line.
 * @param children Only this process's children.
 * @returns Their pids, ascending.
 */
export async function processesWith(needle: string, children = false): Promise<number[]> {
  const output = await new Deno.Command("ps", {
    args: ["-o", "pid=,stat=,args=", ...(children ? ["--ppid", String(Deno.pid)] : ["-e"])],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const pids: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const match = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!match || match[2]!.startsWith("Z") || !match[3]!.includes(needle)) continue;
    pids.push(Number(match[1]));
  }
  return pids.sort((a, b) => a - b);
}
