/**
 * Helpers of the `SessionPool` end-to-end tests (`pool_e2e_test.ts`,
 * `pool_resume_e2e_test.ts`): a pool on the real CLI inside a sandbox whose
 * every process is recorded as it is launched, a bounded wait for the pool's
 * events, and the Messages requests a turn made (the orphan check is
 * `_ps.ts`'s `assertNoneLeft`, on the recorded pids).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Transport } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import {
  type PoolEvent,
  SessionPool,
  type SessionPoolOptions,
} from "../../adapters/subprocess/pool/mod.ts";
import type { Sandbox } from "./_harness.ts";
import type { FakeApi, FakeApiRequest } from "./fake_api.ts";
import { assertNoneLeft } from "./_ps.ts";

/** Bound on every awaited turn. */
export const TURN = { timeoutMs: 20_000 } as const;

/** One CLI process the pool launched. */
export interface Launched {
  readonly pid: number;
  /** Started with `--await-claim` (a parked spare). */
  readonly parked: boolean;
  /** The session it was started to resume (`--resume`). */
  readonly resume: string | undefined;
  /** The folder it was started in. */
  readonly cwd: string | undefined;
}

/** A pool under test, with what it launched and every event it published. */
export interface PoolUnderTest {
  readonly pool: SessionPool;
  /** Every process started, in order. */
  readonly launched: Launched[];
  /** Every event, in order. */
  readonly events: PoolEvent[];
  /**
   * Resolves with the first event of `type` matching `pred` that no earlier
   * call returned (past or future); rejects after `timeoutMs` naming the
   * events seen.
   */
  next<T extends PoolEvent["type"]>(
    type: T,
    pred?: (event: Extract<PoolEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<PoolEvent, { type: T }>>;
}

function text(value: string | URL | undefined): string | undefined {
  return value instanceof URL ? decodeURIComponent(value.pathname) : value;
}

/**
 * Makes a pool on the real CLI in the sandbox (`cwd: work`, the sandbox's
 * environment only) that records each process it launches and each event.
 *
 * @param cli The binary.
 * @param sandbox Where it runs.
 * @param options More pool options (`process` is merged over the sandbox's).
 * @returns The pool and its records; close the pool.
 */
export function poolUnderTest(
  cli: string,
  sandbox: Pick<Sandbox, "work" | "env">,
  options: Omit<SessionPoolOptions, "launch" | "onEvent"> = {},
): PoolUnderTest {
  const launched: Launched[] = [];
  const events: PoolEvent[] = [];
  const waiters = new Set<() => void>();
  const taken = new Set<number>();
  const launch = (process: SubprocessOptions) => {
    const factory = subprocess(process);
    return async (context: Parameters<typeof factory>[0]): Promise<Transport> => {
      const transport = await factory(context);
      assert.ok(transport.info.pid !== undefined, "the subprocess transport tells its pid");
      launched.push({
        pid: transport.info.pid,
        parked: process.awaitClaim === true,
        resume: process.resume,
        cwd: text(process.cwd),
      });
      return transport;
    };
  };
  const pool = new SessionPool({
    ...options,
    process: {
      binary: cli,
      cwd: sandbox.work,
      env: sandbox.env,
      clearEnv: true,
      ...options.process,
    },
    launch,
    onEvent(event) {
      events.push(event);
      for (const wake of [...waiters]) wake();
    },
  });
  async function next<T extends PoolEvent["type"]>(
    type: T,
    pred: (event: Extract<PoolEvent, { type: T }>) => boolean = () => true,
    timeoutMs = 20_000,
  ): Promise<Extract<PoolEvent, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!;
        if (taken.has(i) || event.type !== type) continue;
        const typed = event as Extract<PoolEvent, { type: T }>;
        if (!pred(typed)) continue;
        taken.add(i);
        return typed;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `Cannot see a pool event ${type} within ${timeoutMs} ms; seen: ${
            events.map((e) => e.type === "started" ? `started/${e.via}` : e.type).join(", ")
          }`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        waiters.add(done);
      });
    }
  }
  return { pool, launched, events, next };
}

/**
 * The Messages request whose prompt is `prompt` (bounded wait).
 *
 * @param api The fake API.
 * @param prompt The prompt of the turn.
 * @returns The request.
 */
export function requestOf(api: FakeApi, prompt: string): Promise<FakeApiRequest> {
  return api.waitForRequest((request) => request.prompt === prompt, { timeoutMs: 5_000 });
}

/**
 * The text of the messages a request carried (the history the model saw).
 *
 * @param request A Messages request.
 * @returns Its `messages`, as JSON text.
 */
export function messagesOf(request: FakeApiRequest): string {
  const body = request.body as { messages?: unknown } | null;
  return JSON.stringify(body?.messages ?? []);
}

/**
 * Runs `fn` with a {@linkcode poolUnderTest}; always closes the pool, then
 * (when `fn` succeeded) asserts that no process the pool launched is left.
 *
 * @param cli The binary.
 * @param sandbox Where it runs.
 * @param options More pool options.
 * @param fn The scenario.
 * @returns Once the pool is closed and its processes are gone.
 */
export async function withPool(
  cli: string,
  sandbox: Pick<Sandbox, "work" | "env">,
  options: Omit<SessionPoolOptions, "launch" | "onEvent">,
  fn: (p: PoolUnderTest) => Promise<void>,
): Promise<void> {
  const p = poolUnderTest(cli, sandbox, options);
  try {
    await fn(p);
  } finally {
    await p.pool.close();
  }
  await assertNoneLeft(p.launched.map((l) => l.pid), [], "after the pool closed");
}
