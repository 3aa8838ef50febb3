/**
 * Helpers of the end-to-end tests, which run the real `claude` CLI offline
 * against {@linkcode startFakeApi}.
 *
 * - {@linkcode cliPath} says where the installed CLI is (`.ci/install_claude.ts`
 *   records it), or why it is unavailable (from `_cli.ts`, re-exported).
 * - {@linkcode e2eTest} registers a test only when the CLI is available. When
 *   it is not, one test is registered per module and reported as IGNORED with
 *   the reason (never silently passed); with `CI=true` that test FAILS instead.
 * - {@linkcode withSandbox} gives each scenario fresh temp folders and a fake
 *   API, and always removes and closes them.
 * - {@linkcode cliAtLeast} and {@linkcode stepSince} (from `_cli.ts`,
 *   re-exported) let a scenario that needs a newer CLI than the one under test
 *   (an older version of the support window, `CLAUDE_E2E_BIN`) say so: the
 *   step is IGNORED with the reason.
 *
 * @module
 */

import type { TransportFactory } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { type FakeApi, type FakeApiOptions, startFakeApi } from "./fake_api.ts";
import type { WebSocketConstructor } from "../../adapters/remote/mod.ts";
import { unavailableTest } from "../_unavailable.ts";
import { cliPath } from "./_cli.ts";

export { CLI_CHANGES, cliAtLeast, cliPath, type CliStatus, cliVersion, stepSince } from "./_cli.ts";

/**
 * The environment that keeps the CLI offline and inside `dir`
 * (see `offline-cli.md`). `PATH` is kept so the Bash tool finds commands.
 *
 * @param api The fake API (its `url` becomes `ANTHROPIC_BASE_URL`).
 * @param dir A temp folder used as `HOME` and temp folder of the CLI.
 * @returns The variables to give the CLI.
 */
export function sandboxEnv(api: { readonly url: string }, dir: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: dir,
    TMPDIR: dir,
    CLAUDE_CODE_TMPDIR: dir,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: "test",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_MAX_RETRIES: "1",
  };
}

/** What {@linkcode withSandbox} gives a scenario. */
export interface Sandbox {
  /** The fake Messages API (closed by `withSandbox`). */
  readonly api: FakeApi;
  /** The temp root (removed by `withSandbox`). */
  readonly root: string;
  /** `HOME` and temp folder of the CLI (inside `root`). */
  readonly home: string;
  /** The CLI's working directory (inside `root`), where tools write. */
  readonly work: string;
  /** {@linkcode sandboxEnv} for `api` and `home`. */
  readonly env: Record<string, string>;
}

/**
 * The real CLI inside a sandbox: its working directory, its environment and
 * nothing of the host's.
 *
 * @param cli The binary.
 * @param sandbox Where it runs (`work`, `env`).
 * @param options More subprocess options (for example `includePartialMessages`).
 * @returns The transport factory.
 */
export function sandboxedCli(
  cli: string,
  sandbox: Pick<Sandbox, "work" | "env">,
  options: SubprocessOptions = {},
): TransportFactory {
  return subprocess({
    binary: cli,
    cwd: sandbox.work,
    env: sandbox.env,
    clearEnv: true,
    ...options,
  });
}

/** Tells whether a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `fn` with fresh temp folders and a fresh fake API; always closes the
 * API and removes the folders afterwards, also when `fn` throws. `fn` must
 * reap the processes it starts.
 *
 * @param fn The scenario.
 * @param options Options of the fake API.
 * @returns What `fn` returns.
 */
export async function withSandbox<T>(
  fn: (sandbox: Sandbox) => Promise<T>,
  options: FakeApiOptions = {},
): Promise<T> {
  const root = await Deno.makeTempDir({ prefix: "duplex-e2e-" });
  const home = `${root}/home`;
  const work = `${root}/work`;
  await Deno.mkdir(home);
  await Deno.mkdir(work);
  const api = await startFakeApi(options);
  try {
    return await fn({ api, root, home, work, env: sandboxEnv(api, home) });
  } finally {
    await api.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

let unavailableRegistered = false;

/** Longest a scenario may run before it is failed (it must not hang the suite). */
const SCENARIO_LIMIT_MS = 90_000;

/**
 * Awaits `run`, or fails after `limitMs` (a scenario must not hang the suite).
 *
 * @param name The test, for the error.
 * @param run The scenario, already started.
 * @param limitMs How long it may take.
 * @returns Once `run` resolved.
 * @throws {Error} When `run` rejects, or takes longer than `limitMs`.
 */
export async function withinLimit(
  name: string,
  run: Promise<void>,
  limitMs = SCENARIO_LIMIT_MS,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Cannot finish ${name}: over ${limitMs} ms`)),
      limitMs,
    );
  });
  try {
    await Promise.race([run, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Registers an end-to-end test that runs the real CLI.
 *
 * When the CLI is unavailable, registers (once per module) a single test
 * reported as ignored with the reason, or, with `CI=true`, a failing one
 * ({@linkcode unavailableTest}).
 *
 * @param name The test name.
 * @param fn The test; it receives the CLI path.
 */
export function e2eTest(
  name: string,
  fn: (t: Deno.TestContext, cli: string) => Promise<void>,
): void {
  const cli = cliPath();
  if (cli.available) {
    Deno.test(name, (t) => withinLimit(name, fn(t, cli.path)));
    return;
  }
  if (unavailableRegistered) return;
  unavailableRegistered = true;
  unavailableTest("the e2e tests", `the real claude CLI is unavailable: ${cli.reason}`);
}

// ---------------------------------------------------------------------------
// Reading NDJSON frames from a process

/** A parsed stdout frame (a JSON object). */
export type Frame = Record<string, unknown>;

interface FrameWaiter {
  pred: (frame: Frame) => boolean;
  from: number;
  resolve: (frame: Frame) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Reads NDJSON frames from a byte stream in the background and lets a test
 * wait for the next frame matching a condition (bounded).
 */
export class FrameReader {
  /** Every frame read so far. */
  readonly frames: Frame[] = [];
  /** Lines that were not JSON objects. */
  readonly noise: string[] = [];
  /** Resolves when the stream ended (never rejects). */
  readonly done: Promise<void>;
  #cursor = 0;
  #waiters = new Set<FrameWaiter>();
  #ended = false;

  /**
   * Starts reading.
   *
   * @param readable The process's stdout.
   */
  constructor(readable: ReadableStream<Uint8Array>) {
    this.done = this.#pump(readable);
  }

  async #pump(readable: ReadableStream<Uint8Array>): Promise<void> {
    let pending = "";
    try {
      for await (const chunk of readable.pipeThrough(new TextDecoderStream())) {
        pending += chunk;
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#line(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
      }
    } catch {
      // The stream broke (process killed): treat it as its end.
    }
    if (pending.trim()) this.#line(pending);
    this.#ended = true;
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`Cannot find the frame: stdout ended; ${this.#summary()}`));
    }
    this.#waiters.clear();
  }

  #line(line: string): void {
    if (!line.trim()) return;
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch {
      this.noise.push(line);
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      this.noise.push(line);
      return;
    }
    const index = this.frames.push(frame as Frame) - 1;
    for (const waiter of [...this.#waiters]) {
      if (index < waiter.from || !waiter.pred(frame as Frame)) continue;
      clearTimeout(waiter.timer);
      this.#waiters.delete(waiter);
      waiter.resolve(frame as Frame);
    }
  }

  #summary(): string {
    const last = this.frames.slice(-6).map((f) => `${f.type}/${f.subtype ?? ""}`).join(", ");
    return `${this.frames.length} frames so far, last: ${last}`;
  }

  /**
   * Waits for the next frame (after the previously returned one) matching
   * `pred`, and moves the cursor past it.
   *
   * @param pred The condition.
   * @param timeoutMs How long to wait.
   * @returns The frame.
   */
  async next(pred: (frame: Frame) => boolean, timeoutMs = 15_000): Promise<Frame> {
    const from = this.#cursor;
    const frame = await this.#find(pred, from, timeoutMs);
    this.#cursor = this.frames.indexOf(frame, from) + 1;
    return frame;
  }

  #find(pred: (frame: Frame) => boolean, from: number, timeoutMs: number): Promise<Frame> {
    const found = this.frames.slice(from).find(pred);
    if (found) return Promise.resolve(found);
    if (this.#ended) {
      return Promise.reject(new Error(`Cannot find the frame: stdout ended; ${this.#summary()}`));
    }
    const { promise, resolve, reject } = Promise.withResolvers<Frame>();
    const waiter: FrameWaiter = {
      pred,
      from,
      resolve,
      reject,
      timer: setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`Cannot find the frame within ${timeoutMs} ms; ${this.#summary()}`));
      }, timeoutMs),
    };
    this.#waiters.add(waiter);
    return promise;
  }
}

/**
 * Collects a text stream (stderr) in the background, keeping the last 64 KiB.
 *
 * @param readable The stream.
 * @returns A function giving the text so far, and a promise of the end.
 */
export function collectText(
  readable: ReadableStream<Uint8Array>,
): { text(): string; done: Promise<void> } {
  let text = "";
  const done = (async () => {
    try {
      for await (const chunk of readable.pipeThrough(new TextDecoderStream())) {
        text = (text + chunk).slice(-65_536);
      }
    } catch {
      // Broken pipe: the end.
    }
  })();
  return { text: () => text, done };
}

// ---------------------------------------------------------------------------
// Processes

/**
 * Tells whether a process exists and is not a zombie. Asks `ps` (Deno treats
 * `/proc` as privileged: reading it needs `--allow-all`), and falls back to
 * `/proc/<pid>/stat` when `ps` is missing.
 *
 * @param pid The process id.
 * @returns True while it runs.
 */
export async function processAlive(pid: number): Promise<boolean> {
  let state: string;
  try {
    const output = await new Deno.Command("ps", {
      args: ["-o", "stat=", "-p", String(pid)],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!output.success) return false;
    state = new TextDecoder().decode(output.stdout).trim();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    let stat: string;
    try {
      stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
    // "pid (comm) S ...": the state follows the last ")".
    state = stat.slice(stat.lastIndexOf(")") + 2);
  }
  return state !== "" && !state.startsWith("Z") && !state.startsWith("X");
}

/**
 * Polls `condition` until it holds (bounded).
 *
 * @param condition What to wait for.
 * @param what A description for the error.
 * @param timeoutMs How long to wait.
 * @returns Nothing, once it holds.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Cannot see ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Resolves with the child's status, or kills it (SIGKILL) after `timeoutMs`
 * and then resolves with the status: never leaves the process running.
 *
 * @param child The process.
 * @param timeoutMs How long it may take to exit by itself.
 * @returns Its status and whether it had to be killed.
 */
export async function reap(
  child: Deno.ChildProcess,
  timeoutMs = 5_000,
): Promise<{ status: Deno.CommandStatus; killed: boolean }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let killed = false;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), timeoutMs);
  });
  try {
    const first = await Promise.race([child.status, expired]);
    if (first !== "expired") return { status: first, killed };
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    return { status: await child.status, killed };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `WebSocket` constructor that keeps every socket it makes, so that a test
 * can cut the connection under a `remote()` transport.
 *
 * @returns The sockets made so far, and the constructor to pass as `WebSocket`.
 */
export function trackedWebSockets(): { sockets: WebSocket[]; WebSocket: WebSocketConstructor } {
  const sockets: WebSocket[] = [];
  class Tracked extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  }
  return { sockets, WebSocket: Tracked };
}
