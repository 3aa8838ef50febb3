/**
 * A real terminal for the e2e tests: one program in a detached `tmux`
 * session of fixed size on a private server socket, driven with
 * `send-keys` and read with `capture-pane` (wrapped lines joined, the
 * scrollback included).
 *
 * @module
 */

import { waitUntil } from "./_harness.ts";
import { inSession } from "./_ps.ts";

/** Whether tmux runs here, or why not. */
export async function tmuxAvailable(): Promise<string | undefined> {
  try {
    const { success } = await new Deno.Command("tmux", {
      args: ["-V"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return success ? undefined : "`tmux -V` failed";
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return "tmux is not installed (apt-get install -y tmux; .ci/run installs it)";
    }
    throw error;
  }
}

/** What {@linkcode Terminal.open} runs. */
export interface TerminalProgram {
  /** The program and its arguments. */
  readonly argv: readonly string[];
  /** Its working directory. */
  readonly cwd: string;
  /** Its whole environment (`TERM` is added). */
  readonly env: Readonly<Record<string, string>>;
  /** The private server's socket path. */
  readonly socket: string;
  /** Columns and rows. @default {[120, 50]} */
  readonly size?: readonly [number, number];
}

/**
 * One program in a tmux pane. It runs under `sh`, which prints
 * `[exited <code>]` when it has exited and reaped it (tmux 3.3 leaves a Deno
 * program that had a signal listener as a zombie, without its status), then
 * the pane stays, dead, for a last look.
 */
export class Terminal implements AsyncDisposable {
  readonly #socket: string;
  /** The pid of the `sh` that runs the program. */
  pid = 0;

  private constructor(socket: string) {
    this.#socket = socket;
  }

  /** Starts the program in a detached session. */
  static async open(program: TerminalProgram): Promise<Terminal> {
    const term = new Terminal(program.socket);
    const [columns, rows] = program.size ?? [120, 50];
    const vars = Object.entries({ ...program.env, TERM: "xterm-256color" })
      .map(([name, value]) => `${name}=${value}`);
    await term.tmux(
      ["new-session", "-d", "-s", "demo", "-x", `${columns}`, "-y", `${rows}`, "-c", program.cwd],
      ["env", "-i", ...vars, "sh", "-c", 'trap : INT; "$@"; echo "[exited $?]"', "sh"],
      [...program.argv],
      [";", "set-option", "-t", "demo", "remain-on-exit", "on"],
      [";", "set-option", "-t", "demo", "history-limit", "5000"],
    );
    term.pid = Number(await term.#format("#{pane_pid}"));
    return term;
  }

  /** Runs tmux on the private server with the given argument groups, joined. */
  async tmux(...groups: readonly string[][]): Promise<string> {
    const out = await new Deno.Command("tmux", {
      args: ["-S", this.#socket, "-f", "/dev/null", ...groups.flat()],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      const why = new TextDecoder().decode(out.stderr).trim();
      throw new Error(`Cannot run tmux ${groups[0]?.[0]}: ${why}`);
    }
    return text;
  }

  async #format(format: string): Promise<string> {
    return (await this.tmux(["display-message", "-p", "-t", "demo", format])).trim();
  }

  /** The text so far: scrollback and screen, wrapped lines joined, trailing blanks cut. */
  async text(): Promise<string> {
    const text = await this.tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", "demo"]);
    // Without tmux's own "Pane is dead (status 0, <date>)" line, which comes after sh's.
    return text.replace(/\s+$/, "").replace(/\s*Pane is dead \([^)]*\)$/, "");
  }

  /** Types a line and presses Enter. */
  async typeLine(line: string): Promise<void> {
    await this.tmux(["send-keys", "-t", "demo", "-l", line]);
    await this.tmux(["send-keys", "-t", "demo", "Enter"]);
  }

  /** Presses keys by tmux name, for example `C-c` or `C-d`. */
  async press(...keys: string[]): Promise<void> {
    await this.tmux(["send-keys", "-t", "demo", ...keys]);
  }

  /**
   * Waits (bounded) until the text satisfies `pred`, and returns it.
   *
   * @param pred What the text must show.
   * @param what A description for the error, which also shows the text.
   * @param timeoutMs How long to wait.
   */
  async until(pred: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    let text = "";
    try {
      await waitUntil(async () => pred(text = await this.text()), what, timeoutMs);
    } catch (error) {
      throw new Error(`${(error as Error).message}; the terminal shows:\n${text}`);
    }
    return text;
  }

  /** The program's exit code once it has exited (128 + N for signal N), else `undefined`. */
  async exitCode(): Promise<number | undefined> {
    const code = /\[exited (\d+)\]$/.exec(await this.text())?.[1];
    return code === undefined ? undefined : Number(code);
  }

  /**
   * Ends the server (and the program, if it still runs), and waits (bounded)
   * until no process of the pane's session is left.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.tmux(["kill-server"]).catch(() => {});
    if (this.pid === 0) return;
    await waitUntil(async () => (await inSession(this.pid)).length === 0, "the pane's end");
  }
}

/**
 * What the terminal shows after the last occurrence of `marker` (for
 * example `you> hello`, a line typed at the chat's prompt).
 *
 * @param text The terminal's text.
 * @param marker What to look for.
 * @returns The text after it (empty when it is not there).
 */
export function after(text: string, marker: string): string {
  const at = text.lastIndexOf(marker);
  return at < 0 ? "" : text.slice(at + marker.length);
}
