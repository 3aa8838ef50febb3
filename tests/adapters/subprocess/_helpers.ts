/** Helpers of the subprocess transport tests. */

import { subprocess, type SubprocessOptions } from "../../../adapters/subprocess/mod.ts";
import type { Transport } from "../../../src/transport/transport.ts";

/** The path of the stand-in CLI. */
export const FAKE_CLAUDE: string = decodeURIComponent(
  new URL("../../fixtures/fake_claude.ts", import.meta.url).pathname,
);

/**
 * A folder for test files inside the repository (under the ignored `.cache/`),
 * so that tests run with the project's least-privilege permissions (`read: ["."]`).
 */
export const TEST_TMP: string = decodeURIComponent(
  new URL("../../../.cache/test-tmp", import.meta.url).pathname,
);

/** Makes a fresh folder under {@linkcode TEST_TMP}; the caller removes it. */
export async function makeTestDir(): Promise<string> {
  await Deno.mkdir(TEST_TMP, { recursive: true });
  return await Deno.realPath(await Deno.makeTempDir({ dir: TEST_TMP }));
}

/** The arguments that run a Deno script as a quiet, config-free program. */
export function denoRunArgs(script: string, permissions: readonly string[] = ["-A"]): string[] {
  return ["run", ...permissions, "--no-config", "--quiet", script];
}

/**
 * Options that run the stand-in CLI.
 *
 * @param env `FAKE_CLAUDE_*` variables and others.
 * @param extra More options.
 */
export function fakeOptions(
  env: Record<string, string | undefined> = {},
  extra: SubprocessOptions = {},
): SubprocessOptions {
  // `env` in extra is taken as variables over the host's (what `env` meant in 0.1).
  const { env: overHost, ...rest } = extra;
  return {
    binary: Deno.execPath(),
    binaryArgs: denoRunArgs(FAKE_CLAUDE),
    closeGraceMs: 2000,
    terminateGraceMs: 2000,
    ...rest,
    extraEnv: { ...env, ...overHost, ...extra.extraEnv },
  };
}

/**
 * Opens a subprocess transport on the stand-in CLI.
 *
 * @param env `FAKE_CLAUDE_*` variables and others.
 * @param extra More options.
 */
export function openFake(
  env: Record<string, string | undefined> = {},
  extra: SubprocessOptions = {},
): Promise<Transport> {
  return subprocess(fakeOptions(env, extra))({ signal: new AbortController().signal });
}

/** Reads NDJSON frames from a transport's byte stream. */
export class FrameReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array | string>;
  readonly #decoder = new TextDecoder();
  #buffer = "";

  constructor(transport: Transport) {
    this.#reader = transport.readable.getReader();
  }

  /** The next frame, or `undefined` at the end of the stream. */
  async next(): Promise<Record<string, unknown> | undefined> {
    for (;;) {
      const newline = this.#buffer.indexOf("\n");
      if (newline >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        if (line.trim() !== "") return JSON.parse(line);
        continue;
      }
      const { done, value } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += typeof value === "string"
        ? value + "\n"
        : this.#decoder.decode(value, { stream: true });
    }
  }

  /** The next frame of the given type (others skipped). */
  async nextOfType(type: string): Promise<Record<string, unknown>> {
    for (;;) {
      const frame = await this.next();
      if (frame === undefined) throw new Error(`End of stream before a ${type} frame`);
      if (frame.type === type) return frame;
    }
  }

  /** Every remaining frame. */
  async rest(): Promise<Record<string, unknown>[]> {
    const frames: Record<string, unknown>[] = [];
    for (let frame = await this.next(); frame !== undefined; frame = await this.next()) {
      frames.push(frame);
    }
    return frames;
  }

  /** Stops reading (cancels the stream). */
  async cancel(): Promise<void> {
    await this.#reader.cancel();
  }
}

/** A JSON user line for the stand-in CLI. */
export function userLine(text: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    message: { role: "user", content: [{ type: "text", text }] },
  });
}

/** True when `/proc` can be read and `Deno.kill` may be used (the process-tree features). */
export function canTrackProcesses(): boolean {
  try {
    Deno.readTextFileSync("/proc/self/stat");
  } catch {
    return false;
  }
  return Deno.permissions.querySync({ name: "run" }).state === "granted";
}

/** Tells whether a process is gone (no such pid, or a zombie). */
export function isGone(pid: number): boolean {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    // Deno lets only --allow-all read /proc: ask `cat` (a zombie still takes signals,
    // so Deno.kill cannot tell it from a living process).
    const output = new Deno.Command("cat", {
      args: [`/proc/${pid}/stat`],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!output.success) return true;
    stat = new TextDecoder().decode(output.stdout);
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  return state === "Z" || state === "X";
}

/** Polls until the process is gone, for at most `ms`; returns whether it is. */
export async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!isGone(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Kills a process left behind by a failed test. */
export function killIfAlive(pid: number | undefined): void {
  if (pid === undefined || isGone(pid)) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // gone meanwhile
  }
}

/** Rejects after `ms` with a named timeout error, so a hang fails the test instead of stalling it. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
