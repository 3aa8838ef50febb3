import type { ScriptedCli as ScriptedCliType } from "../../src/testing/scripted_cli.ts";
import {
  DuplexSession,
  type DuplexSessionOptions,
  type SessionEvent,
  type Subscription,
} from "../../mod.ts";
import { ScriptedCli, type ScriptedCliOptions } from "../../src/testing/scripted_cli.ts";
import type { Transport } from "../../src/transport/transport.ts";

/** Starts a session over a scripted CLI. */
export async function scripted(
  cliOptions: ScriptedCliOptions = { echo: true },
  sessionOptions: Omit<DuplexSessionOptions, "transport"> = {},
): Promise<{ cli: ScriptedCli; session: DuplexSession }> {
  const cli = new ScriptedCli(cliOptions);
  const session = await DuplexSession.start({ transport: cli.transport, ...sessionOptions });
  return { cli, session };
}

/** Reads events (without ending the subscription) until one matches, inclusive; bounded. */
export async function eventsUntil(
  subscription: Subscription<SessionEvent>,
  stop: (event: SessionEvent) => boolean,
  timeoutMs = 3000,
): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([subscription.next(), timedOut]);
      if (next === "timeout") throw new Error(`No matching event within ${timeoutMs} ms`);
      if (next.done) throw new Error(`The subscription ended first; saw ${out.map((e) => e.type)}`);
      out.push(next.value);
      if (stop(next.value)) return out;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Counts listeners added to and removed from a signal. */
export function countListeners(signal: AbortSignal): () => number {
  let count = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    count++;
    add(...args);
  }) as typeof add;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    count--;
    remove(...args);
  }) as typeof remove;
  return () => count;
}

/** Waits a macrotask or a few. */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for the session's control_response to the CLI's request `requestId`; returns its `response`. */
export async function replyTo(
  cli: ScriptedCliType,
  requestId: string,
): Promise<Record<string, unknown>> {
  const frame = await cli.nextWrite(
    (f) =>
      f.type === "control_response" &&
      (f.response as { request_id?: string }).request_id === requestId,
    { timeoutMs: 2000 },
  );
  return frame.response as Record<string, unknown>;
}

/** A transport that is `inner` but for `overrides`. */
export function wrap(inner: Transport, overrides: Partial<Transport>): Transport {
  return {
    readable: inner.readable,
    ...(inner.stderr ? { stderr: inner.stderr } : {}),
    info: inner.info,
    closed: inner.closed,
    write: (line) => inner.write(line),
    endInput: () => inner.endInput(),
    close: () => inner.close(),
    [Symbol.asyncDispose]: () => inner[Symbol.asyncDispose](),
    ...overrides,
  };
}
