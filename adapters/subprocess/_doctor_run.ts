/**
 * The doctor's one way to run a program: bounded in time and in output,
 * stdin closed, the child always reaped (killed with SIGKILL at the bound,
 * its status awaited), its pipes cancelled rather than drained to the end
 * (a grandchild that kept them open cannot hold the doctor).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";

/** The most of each of stdout and stderr kept, in bytes. */
const MAX_OUTPUT_BYTES = 16_384;

/** How a bounded run ended. */
export type RunOutcome =
  | {
    /** The program ran and exited. */
    readonly state: "exited";
    readonly code: number;
    /** The start of its stdout, as text. */
    readonly stdout: string;
    /** The start of its stderr, as text. */
    readonly stderr: string;
  }
  | {
    /** It did not exit within the bound, and was killed. */
    readonly state: "timed_out";
    readonly ms: number;
  }
  | {
    /** It could not start: the spawn's error (`Deno.errors.NotCapable`, `NotFound`, …). */
    readonly state: "not_started";
    readonly error: unknown;
    readonly message: string;
  };

/** Options of {@linkcode runBounded}. */
export interface RunOptions {
  /** Its environment; it replaces the host's when given. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** The bound, in milliseconds. */
  readonly timeoutMs: number;
  /** Aborting it kills the program and rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Runs a program to its exit, within a bound.
 *
 * @param program The program.
 * @param args Its arguments.
 * @param options The environment, the bound, the signal.
 * @returns How it ended.
 * @throws The signal's reason when it aborts (the program killed and reaped first).
 */
export async function runBounded(
  program: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunOutcome> {
  options.signal?.throwIfAborted();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      ...(options.env !== undefined && { env: { ...options.env }, clearEnv: true }),
    }).spawn();
  } catch (error) {
    return { state: "not_started", error, message: messageOf(error) };
  }
  const stdout = readSome(child.stdout);
  const stderr = readSome(child.stderr);
  const { promise: stopped, resolve } = Promise.withResolvers<void>();
  const timer = setTimeout(resolve, options.timeoutMs);
  const onAbort = (): void => resolve();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const first = await Promise.race([child.status, stopped.then(() => undefined)]);
    if (first === undefined) {
      try {
        child.kill("SIGKILL");
      } catch {
        // exited meanwhile
      }
      await child.status;
      options.signal?.throwIfAborted();
      return { state: "timed_out", ms: options.timeoutMs };
    }
    // Its output up to now; a grandchild holding the pipes open is not waited for.
    const [out, err] = await Promise.all([stdout.text(), stderr.text()]);
    return { state: "exited", code: first.code, stdout: out, stderr: err };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    await Promise.all([stdout.cancel(), stderr.cancel()]);
  }
}

/** A pipe read in the background, up to {@linkcode MAX_OUTPUT_BYTES}. */
interface Reading {
  /** What was read, once the pipe ended or briefly after the exit. */
  text(): Promise<string>;
  /** Stops reading; never rejects. */
  cancel(): Promise<void>;
}

/* How long, after the exit, the pipes are given to deliver what the program wrote. */
const DRAIN_MS = 500;

function readSome(stream: ReadableStream<Uint8Array>): Reading {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  const done = (async () => {
    try {
      // Past the cap the output is read and dropped: a full pipe would stall the program.
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        if (bytes < MAX_OUTPUT_BYTES) text += decoder.decode(value, { stream: true });
        bytes += value.length;
      }
    } catch {
      // cancelled
    }
  })();
  let cancelled: Promise<void> | undefined;
  function cancel(): Promise<void> {
    cancelled ??= reader.cancel().catch(() => {}).then(() => done);
    return cancelled;
  }
  return {
    async text() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => timer = setTimeout(resolve, DRAIN_MS));
      await Promise.race([done, late]);
      clearTimeout(timer);
      await cancel();
      return text;
    },
    cancel,
  };
}
