/**
 * Host memory per hibernated conversation (Deno side), workload 8g. The real
 * CLI is too slow for a thousand starts, so the pool's `launch` option gives
 * each process an in-memory {@linkcode ScriptedCli} (echo: it answers
 * `initialize`, and each turn's `system/init` carries a session id, which the
 * pool records). Every conversation runs one turn and is hibernated
 * (`idleMs: 1`, `maxLive: 4`); the heap is read after a forced GC while the
 * pool holds only their records.
 *
 * @module
 */

import type { TransportFactory } from "../../mod.ts";
import type { SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import { ScriptedCli } from "../../src/testing/mod.ts";
import { echoTurn, loadAverage, until } from "./_pool_bench.ts";
import { forceGc } from "./_measure.ts";

/** Parameters of {@linkcode poolMemory}. */
export interface PoolMemoryParams {
  /** Conversations measured. */
  readonly conversations: number;
  /** Conversations run (and forgotten) before the baseline, to warm the code up. */
  readonly warmup: number;
  /** Conversations running at once. */
  readonly concurrency: number;
}

function launch(options: SubprocessOptions): TransportFactory {
  // A resumed conversation keeps its id, as the real CLI's `--resume` does.
  return new ScriptedCli({ echo: true, sessionId: options.resume ?? crypto.randomUUID() })
    .transport;
}

function heapUsed(): number {
  forceGc();
  return Deno.memoryUsage().heapUsed;
}

async function runAll(pool: SessionPool, keys: readonly string[], concurrency: number) {
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++] as string;
      await pool.withSession(key, (session) => echoTurn(session, `hello from ${key}`));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await until(
    "every conversation hibernated",
    () => pool.health.live === 0 && pool.health.closing === 0,
  );
}

/**
 * Heap per hibernated conversation.
 *
 * @param params The sizes.
 * @returns Bytes per conversation, the heap before, with the records, and after forgetting them.
 */
export async function poolMemory(params: PoolMemoryParams): Promise<Record<string, unknown>> {
  if (!forceGc()) throw new Error("Cannot measure the heap: run with --v8-flags=--expose-gc");
  const pool = new SessionPool({ launch, maxLive: 4, idleMs: 1 });
  try {
    const keyOf = (prefix: string, i: number): string => `${prefix}-${String(i).padStart(6, "0")}`;
    const warm = Array.from({ length: params.warmup }, (_, i) => keyOf("warm-up", i));
    await runAll(pool, warm, params.concurrency);
    for (const key of warm) await pool.forget(key);
    const before = heapUsed();
    const keys = Array.from({ length: params.conversations }, (_, i) => keyOf("conversation", i));
    await runAll(pool, keys, params.concurrency);
    const withRecords = heapUsed();
    const health = pool.health;
    const withoutId = keys.filter((key) => pool.peek(key)?.sessionId === undefined).length;
    if (health.hibernated !== keys.length || withoutId > 0) {
      throw new Error(
        `Cannot trust the run: ${health.hibernated} of ${keys.length} hibernated, ` +
          `${withoutId} without a session id`,
      );
    }
    for (const key of keys) await pool.forget(key);
    const forgotten = heapUsed();
    return {
      loadAverage: loadAverage(),
      conversations: keys.length,
      bytesPerConversation: (withRecords - before) / keys.length,
      // What forgetting them gave back: the records themselves.
      recordBytes: (withRecords - forgotten) / keys.length,
      heapBeforeMb: before / 1048576,
      heapWithRecordsMb: withRecords / 1048576,
      heapForgottenMb: forgotten / 1048576,
      hibernations: health.hibernations,
    };
  } finally {
    await pool.close();
  }
}
