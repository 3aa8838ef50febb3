/** Runs `_host_script.ts` in its own Deno process and reads its reports. */

import type { SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import { denoRunArgs } from "./_helpers.ts";

const SCRIPT = decodeURIComponent(new URL("./_host_script.ts", import.meta.url).pathname);

/** A running host script. */
export class HostScript implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #reader: ReadableStreamDefaultReader<string>;
  readonly #stderr: Promise<string>;
  #buffer = "";

  /**
   * @param mode What the script does (see `_host_script.ts`).
   * @param options The subprocess options it uses.
   * @param permissions The Deno permission flags it runs with.
   */
  constructor(mode: string, options: SubprocessOptions, permissions: readonly string[] = ["-A"]) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [...denoRunArgs(SCRIPT, permissions), JSON.stringify({ mode, options })],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#reader = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** The script's pid. */
  get pid(): number {
    return this.#child.pid;
  }

  /** The next report, or `undefined` at the end of its output. */
  async next(): Promise<Record<string, unknown> | undefined> {
    for (;;) {
      const newline = this.#buffer.indexOf("\n");
      if (newline >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        return JSON.parse(line);
      }
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += value;
    }
  }

  /** Sends a signal to the script. */
  kill(signal: Deno.Signal): void {
    this.#child.kill(signal);
  }

  /** Waits for the script to end; returns its status and stderr. */
  async status(): Promise<{ code: number; signal: string | null; stderr: string }> {
    const status = await this.#child.status;
    return { code: status.code, signal: status.signal, stderr: await this.#stderr };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already ended
    }
    await this.#child.status;
    await this.#reader.cancel();
    await this.#stderr;
  }
}
