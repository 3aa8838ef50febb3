// deno-lint-ignore-file no-console
/**
 * The session stores side by side: append throughput (entries per second)
 * and resume-load time by transcript size (10, 100, 1,000 turns), for the
 * directory store (`DirectorySessionStore`, without and with `sync`) and
 * PostgreSQL (`PostgresSessionStore` over the `postgres` npm client, on a
 * throwaway local server with PostgreSQL's default durability: fsync and
 * synchronous commit on).
 *
 * ```sh
 * deno run -P=bench tests/bench/store_bench.ts               # full sizes, about a minute
 * deno run -P=bench tests/bench/store_bench.ts --smoke       # tiny sizes, seconds
 * deno run -P=bench tests/bench/store_bench.ts --json=store.json
 * ```
 *
 * A turn is the last turn of a real CLI transcript
 * (`tests/fixtures/history/three_turns.jsonl`: queue operations, the user
 * and assistant entries, last-prompt, cost-state; 6 entries, about 2.4 KB)
 * with fresh uuids. Appends: 1,000 turns to a fresh key, one `append` per
 * turn (what the mirror sends during a conversation) and 500 entries per
 * `append` (a catch-up or an import). Loads: `load` of a key holding N
 * turns, on the store that wrote it (warm), and for PostgreSQL also through
 * a new client and store (what another host does on resume: connect, check
 * the tables, load). Medians of the rounds, the first dropped. Progress goes
 * to stderr; the table alone goes to stdout.
 *
 * @module
 */

import postgres from "postgres";
import { DirectorySessionStore } from "../../adapters/subprocess/store/directory_session_store.ts";
import type { SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import { postgresStatus, startPostgres } from "../stores/_postgres_server.ts";
import { median, quantile } from "./_measure.ts";
import { fixtureTurn, TURN_TEMPLATE } from "./_capacity_turns.ts";

const smoke = Deno.args.includes("--smoke");
const jsonPath = Deno.args.find((arg) => arg.startsWith("--json="))?.slice("--json=".length);
const SIZES = smoke
  ? { appendTurns: 50, appendRounds: 2, loadTurns: [10, 100], loadRounds: 3 }
  : { appendTurns: 1_000, appendRounds: 4, loadTurns: [10, 100, 1_000], loadRounds: 11 };

function turns(count: number): SessionStoreEntry[][] {
  return Array.from({ length: count }, fixtureTurn);
}

interface Row {
  store: string;
  workload: string;
  value: number;
  unit: string;
  p90?: number;
}
const rows: Row[] = [];

function progress(text: string): void {
  console.error(`[store bench] ${text}`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

let keys = 0;
function freshKey() {
  return { projectKey: "-bench-project", sessionId: `bench-${Date.now()}-${++keys}` };
}

async function appends(name: string, open: () => SessionStore): Promise<void> {
  for (
    const [label, perAppend] of [["1 turn per append", 0], ["500 entries per append", 500]] as const
  ) {
    const rates: number[] = [];
    for (let round = 0; round < SIZES.appendRounds; round++) {
      const store = open();
      const key = freshKey();
      const all = turns(SIZES.appendTurns);
      const batches = perAppend === 0 ? all : chunk(all.flat(), perAppend);
      const entries = batches.reduce((sum, batch) => sum + batch.length, 0);
      const ms = await timed(async () => {
        for (const batch of batches) await store.append(key, batch);
      });
      rates.push(entries / (ms / 1000));
    }
    const kept = rates.length > 1 ? rates.slice(1) : rates;
    rows.push({
      store: name,
      workload: `append, ${label}`,
      value: median(kept),
      unit: "entries/s",
    });
    progress(`${name}: append ${label}: ${Math.round(median(kept))} entries/s`);
  }
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

async function loads(
  name: string,
  store: SessionStore,
  reopen?: { label: string; open: () => Promise<{ store: SessionStore; close(): Promise<void> }> },
): Promise<void> {
  for (const count of SIZES.loadTurns) {
    const key = freshKey();
    for (const batch of chunk(turns(count).flat(), 500)) await store.append(key, batch);
    const expected = count * TURN_TEMPLATE.length;
    const check = (loaded: SessionStoreEntry[] | null) => {
      if (loaded?.length !== expected) {
        throw new Error(`${name}: loaded ${loaded?.length} of ${expected}`);
      }
    };
    const warm: number[] = [];
    for (let round = 0; round < SIZES.loadRounds; round++) {
      warm.push(await timed(async () => check(await store.load(key))));
    }
    record(name, `load ${count} turns`, warm);
    if (!reopen) continue;
    const cold: number[] = [];
    for (let round = 0; round < SIZES.loadRounds; round++) {
      let close = () => Promise.resolve();
      cold.push(
        await timed(async () => {
          const opened = await reopen.open();
          close = opened.close;
          check(await opened.store.load(key));
        }),
      );
      await close();
    }
    record(name, `load ${count} turns, ${reopen.label}`, cold);
  }
}

function record(store: string, workload: string, samples: number[]): void {
  const kept = samples.length > 1 ? samples.slice(1) : samples;
  rows.push({ store, workload, value: median(kept), unit: "ms", p90: quantile(kept, 0.9) });
  progress(`${store}: ${workload}: ${median(kept).toFixed(2)} ms`);
}

async function benchDirectory(): Promise<void> {
  for (const sync of [false, true]) {
    const dir = await Deno.makeTempDir({ prefix: "store-bench-" });
    try {
      const name = sync ? "directory (sync)" : "directory";
      const open = () => new DirectorySessionStore(dir, { sync });
      await appends(name, open);
      await loads(name, open());
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
}

async function benchPostgres(): Promise<void> {
  const status = postgresStatus();
  if (!status.available) {
    progress(`PostgreSQL skipped: ${status.reason}`);
    return;
  }
  await using server = await startPostgres({ durable: true });
  progress(`${server.version}, durable (fsync, synchronous_commit on), ${server.url}`);
  const sql = postgres(server.url, { onnotice: () => {}, max: 4 });
  try {
    const open = () => new PostgresSessionStore(sql, { table: "bench" });
    await open().ensureSchema();
    await appends("PostgreSQL", open);
    await loads("PostgreSQL", open(), {
      label: "new client",
      open: () => {
        const fresh = postgres(server.url, { onnotice: () => {}, max: 1 });
        const store = new PostgresSessionStore(fresh, { table: "bench" });
        return Promise.resolve({ store, close: () => fresh.end() });
      },
    });
  } finally {
    await sql.end();
  }
}

await benchDirectory();
await benchPostgres();

const width = Math.max(...rows.map((row) => row.workload.length));
console.log(`| store | workload${" ".repeat(width - 8)} | median | p90 |`);
console.log(`|---|---|---:|---:|`);
for (const row of rows) {
  const value = row.unit === "ms"
    ? `${row.value.toFixed(2)} ms`
    : `${Math.round(row.value)} ${row.unit}`;
  const p90 = row.p90 === undefined ? "" : `${row.p90.toFixed(2)} ms`;
  console.log(`| ${row.store} | ${row.workload.padEnd(width)} | ${value} | ${p90} |`);
}
if (jsonPath) {
  await Deno.writeTextFile(jsonPath, JSON.stringify({ smoke, sizes: SIZES, rows }, null, 2));
}
