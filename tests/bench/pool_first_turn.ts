/**
 * First turn of a new conversation (Deno side), workload 8a-8f, on the real
 * CLI against the fake Messages API. Each mode repeats `samples` times in
 * this process (the runner drops the first as warm-up):
 *
 * - `cold`: `DuplexSession.start` over `subprocess()` then `send`, spawn to
 *   result (no `initialize`, as a plain session starts).
 * - `spare`: `SessionPool({ spares: 1 })`; once the spare is ready, `waitMs`
 *   later, `acquire` to the first result (with `primeSpares` given: the
 *   spare primed, see the pool's option).
 * - `parked`: `SessionPool({ parkedSpares: 1 })`; once ready, `waitMs`
 *   later, `acquire(key, { cwd: claimCwd })` (`claim_session`) to the first
 *   result.
 * - `init-early` / `no-init`: a `DuplexSession` over `subprocess()` started
 *   with or without `initialize`; `waitMs` after the start, the first `send`
 *   to its result: what sending `initialize` early saves, without the pool.
 *
 * Every mode then runs one more turn (a warm turn, for reference) and closes
 * the process before the next sample.
 *
 * @module
 */

import { DuplexSession, type TransportFactory } from "../../mod.ts";
import { subprocess, type SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { type PoolEvent, SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import { echoTurn, loadAverage, processOf, sleep, timed, until } from "./_pool_bench.ts";
import type { CliTarget } from "./turns.ts";

/** The ways a first turn is served. */
export type FirstTurnMode = "cold" | "spare" | "parked" | "init-early" | "no-init";

/** Parameters of {@linkcode poolFirstTurn}. */
export interface FirstTurnParams {
  readonly target: CliTarget;
  readonly mode: FirstTurnMode;
  /** Repetitions (the runner drops the first). */
  readonly samples: number;
  /** How long a spare (or a started process) waits, ready, before its first turn. */
  readonly waitMs: number;
  /** The folder a parked spare is claimed for. */
  readonly claimCwd: string;
  /** Where parked spares wait. */
  readonly parkDir: string;
  /**
   * Pool modes: hold the replacement spare's spawn until the first turn's
   * result (through the pool's `launch` option), to see what the
   * replacement, spawned during that turn, costs it.
   */
  readonly holdReplacement?: boolean;
  /** Pool modes: `primeSpares` (the spare primed before it is ready). */
  readonly primeSpares?: boolean;
}

/**
 * Measures first turns in one mode.
 *
 * @param params The CLI, the mode and the sizes.
 * @returns `times` (first turns) and `warm` (the turn after each), in ms.
 */
export async function poolFirstTurn(params: FirstTurnParams): Promise<Record<string, unknown>> {
  const load = loadAverage();
  if (params.mode === "spare" || params.mode === "parked") {
    return { ...await pooled(params), loadAverage: load };
  }
  const times: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < params.samples; i++) {
    let session: DuplexSession | undefined;
    try {
      const transport = subprocess(processOf(params.target));
      if (params.mode === "cold") {
        times.push(
          await timed(async () => {
            session = await DuplexSession.start({ transport });
            await echoTurn(session, `cold ${i}`);
          }),
        );
      } else {
        const open = await DuplexSession.start({
          transport,
          ...(params.mode === "init-early" && { initialize: true }),
        });
        session = open;
        await sleep(params.waitMs);
        times.push(await timed(() => echoTurn(open, `${params.mode} ${i}`)));
      }
      const live = session as DuplexSession;
      warm.push(await timed(() => echoTurn(live, `warm ${i}`)));
    } finally {
      await session?.close();
    }
  }
  return { times, warm, loadAverage: load };
}

async function pooled(params: FirstTurnParams): Promise<Record<string, unknown>> {
  const kind = params.mode === "spare" ? "warm" : "parked";
  let ready = 0;
  const vias: string[] = [];
  let gate: PromiseWithResolvers<void> | undefined;
  const pool = new SessionPool({
    process: processOf(params.target),
    ...(params.primeSpares && { primeSpares: true }),
    ...(params.holdReplacement && {
      launch: (options: SubprocessOptions): TransportFactory => {
        const open = subprocess(options);
        return async (context) => {
          await gate?.promise;
          return await open(context);
        };
      },
    }),
    ...(kind === "warm" ? { spares: 1 } : { parkedSpares: 1, parkDir: params.parkDir }),
    onEvent: (event: PoolEvent) => {
      if (event.type === "spare_ready" && event.kind === kind) ready++;
      if (event.type === "started") vias.push(event.via);
    },
  });
  const times: number[] = [];
  const warm: number[] = [];
  try {
    for (let i = 0; i < params.samples; i++) {
      const readyBefore = i;
      await until(`spare ${i + 1} ready`, () => ready > readyBefore, 60_000);
      await sleep(params.waitMs);
      const key = `${params.mode}-${i}`;
      const text = `${params.mode} ${i}`;
      const options = kind === "parked" ? { cwd: params.claimCwd } : {};
      let session: DuplexSession | undefined;
      gate = Promise.withResolvers();
      times.push(
        await timed(async () => {
          session = await pool.acquire(key, options);
          await echoTurn(session, text);
        }),
      );
      gate.resolve();
      const live = session as DuplexSession;
      warm.push(await timed(() => echoTurn(live, `warm ${i}`)));
      pool.release(key);
      await pool.forget(key);
    }
  } finally {
    gate?.resolve();
    await pool.close();
  }
  const expected = params.mode === "spare" ? "spare" : "parked";
  if (vias.some((via) => via !== expected)) {
    throw new Error(`Cannot trust the ${params.mode} run: conversations started ${vias}`);
  }
  return { times, warm, vias };
}
