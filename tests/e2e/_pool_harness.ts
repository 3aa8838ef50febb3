/**
 * Helpers of the `SessionPool` end-to-end tests (`pool_e2e_test.ts`,
 * `pool_resume_e2e_test.ts`): a pool on the real CLI inside a sandbox whose
 * every process is recorded as it is launched, a bounded wait for the pool's
 * events, and the orphan check of `orphans_e2e_test.ts` applied to a pool
 * (no recorded pid alive, no process carrying one of their markers).
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Transport } from "../../mod.ts";
import {
  type PoolEvent,
  SessionPool,
  type SessionPoolOptions,
  subprocess,
  type SubprocessOptions,
} from "../../adapters/subprocess/mod.ts";
import type { Sandbox } from "./_harness.ts";
import type { FakeApi, FakeApiRequest } from "./fake_api.ts";

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

// ---------------------------------------------------------------------------
// Orphans: the marker check of orphans_e2e_test.ts, for the processes of a pool

/** The adapter's marker variable (see `adapters/subprocess/_marked_processes.ts`). */
const MARKER = "DUPLEX_CLAUDE_SESSION";

async function psText(args: readonly string[]): Promise<string> {
  const output = await new Deno.Command("ps", {
    args: [...args],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout); // exits 1 when no listed pid exists
}

/**
 * The marker of a running CLI, read from its environment.
 *
 * @param pid The CLI's pid.
 * @returns Its `DUPLEX_CLAUDE_SESSION` value.
 */
export async function markerOf(pid: number): Promise<string> {
  const found = new RegExp(`(?:^|\\s)${MARKER}=([0-9a-f-]{36})(?:\\s|$)`)
    .exec(await psText(["-ww", "-o", "args=", "e", "-p", String(pid)]));
  assert.ok(found, `the CLI ${pid} carries no ${MARKER} (is it alive?)`);
  return found[1]!;
}

/** A live process that should be gone. */
interface Survivor {
  readonly pid: number;
  /** Carries a duplex marker (so it is ours: a reused pid never carries one). */
  readonly marked: boolean;
  /** `pid stat command`, for the failure. */
  readonly shown: string;
}

/** Every live process that is one of `pids` or carries one of `markers`. */
async function survivors(pids: readonly number[], markers: readonly string[]): Promise<Survivor[]> {
  const left: Survivor[] = [];
  for (const line of (await psText(["-e", "-ww", "-o", "pid=,stat=,args=", "e"])).split("\n")) {
    const row = /^\s*(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!row || row[2]!.startsWith("Z") || Number(row[1]) === Deno.pid) continue;
    const args = `${row[3]} `;
    const pid = Number(row[1]);
    if (pids.includes(pid) || markers.some((m) => args.includes(` ${MARKER}=${m} `))) {
      const command = JSON.stringify(args.split(/ [A-Z_]+=/)[0]!.slice(0, 100));
      left.push({
        pid,
        marked: args.includes(` ${MARKER}=`),
        shown: `${pid} ${row[2]} ${command}`,
      });
    }
  }
  return left;
}

/**
 * Asserts that within `timeoutMs` none of `pids` runs and no process carries
 * one of `markers`; otherwise kills the marked ones (SIGKILL, so no test
 * leaves them) and fails listing them all.
 *
 * @param pids Processes that must be gone.
 * @param markers Markers of the CLIs whose descendants must be gone.
 * @param timeoutMs How long they may take.
 */
export async function assertNoneLeft(
  pids: readonly number[],
  markers: readonly string[],
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let left = await survivors(pids, markers);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await survivors(pids, markers);
  }
  if (left.length === 0) return;
  for (const row of left.filter((row) => row.marked)) {
    try {
      Deno.kill(row.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  const shown = left.map((row) => row.shown).join("\n  ");
  assert.fail(`${left.length} process(es) survived the pool:\n  ${shown}`);
}
