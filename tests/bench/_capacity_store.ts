/**
 * The session stores' per-unit costs, for the capacity model: appends per
 * second with 1 and with `writers` conversations appending at once (one
 * `append` per turn, what a relay's mirror sends), the rows and bytes a
 * turn adds (tables and indexes for PostgreSQL, blocks on disk for the
 * directory store) by transcript length. PostgreSQL is a throwaway local
 * server with production durability (fsync, synchronous commit), sharing
 * this machine's cores. A turn is {@linkcode fixtureTurn}'s: the last turn
 * of a real CLI transcript (6 entries, 2872 B of JSON) with fresh uuids.
 *
 * @module
 */

import postgres from "postgres";
import { DirectorySessionStore } from "../../adapters/subprocess/store/directory_session_store.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import { postgresStatus, startPostgres } from "../stores/_postgres_server.ts";
import { cpuMsOf, type Figure, figure, progress } from "./_capacity_proc.ts";
import { descendants } from "./_pool_bench.ts";
import { fixtureTurn, TURN_TEMPLATE } from "./_capacity_turns.ts";

/** Parameters of {@linkcode measureStores}. */
export interface StoreParams {
  readonly rounds: number;
  /** Turns each writer appends per round. */
  readonly turns: number;
  /** Conversations appending at once, in the concurrent runs. */
  readonly writers: number;
  /** Transcript lengths (turns) whose storage is measured. */
  readonly lengths: readonly number[];
}

let keys = 0;
function freshKey() {
  return { projectKey: "-capacity", sessionId: `capacity-${Date.now()}-${++keys}` };
}

/* Turns per second: `writers` conversations appending `turns` turns each, one per append. */
async function appendRate(store: SessionStore, writers: number, turns: number): Promise<number> {
  const began = performance.now();
  await Promise.all(Array.from({ length: writers }, async () => {
    const key = freshKey();
    for (let i = 0; i < turns; i++) await store.append(key, fixtureTurn());
  }));
  return (writers * turns) / ((performance.now() - began) / 1000);
}

/* The CPU of the PostgreSQL processes below this one (the server, its backends, its workers). */
function serverCpuMs(): number {
  return descendants().filter((p) => p.name.startsWith("postgres"))
    .reduce((sum, p) => sum + cpuMsOf(p.pid), 0);
}

async function rates(
  name: string,
  store: SessionStore,
  params: StoreParams,
  serverCpu?: () => number,
): Promise<{ one: number[]; many: number[]; cpu: number[] }> {
  const one: number[] = [];
  const many: number[] = [];
  const cpu: number[] = [];
  await appendRate(store, 1, 20); // warm-up
  for (let round = 0; round < params.rounds; round++) {
    one.push(await appendRate(store, 1, params.turns));
    const before = serverCpu?.() ?? 0;
    const perWriter = Math.ceil(params.turns / 4);
    many.push(await appendRate(store, params.writers, perWriter));
    if (serverCpu) cpu.push((serverCpu() - before) / (params.writers * perWriter));
  }
  progress(`${name}: ${one.map(Math.round)} / ${many.map(Math.round)} turns/s`);
  return { one, many, cpu };
}

/* Appends conversations of `length` turns (at least 100 turns in all), as a mirror does. */
async function fill(store: SessionStore, length: number): Promise<number> {
  const conversations = Math.max(1, Math.ceil(100 / length));
  for (let c = 0; c < conversations; c++) {
    const key = freshKey();
    for (let i = 0; i < length; i++) await store.append(key, fixtureTurn());
  }
  return conversations * length;
}

async function directoryBytes(dir: string): Promise<number> {
  let bytes = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) bytes += await directoryBytes(path);
    else if (entry.isFile) bytes += ((await Deno.stat(path)).blocks ?? 0) * 512;
  }
  return bytes;
}

async function directory(params: StoreParams): Promise<Figure[]> {
  const dir = await Deno.makeTempDir({ prefix: "duplex-capacity-store-" });
  try {
    const got = await rates(
      "directory (sync)",
      new DirectorySessionStore(dir, { sync: true }),
      params,
    );
    const bytes: number[] = [];
    for (const length of params.lengths) {
      const sub = `${dir}/length-${length}`;
      const turns = await fill(new DirectorySessionStore(sub), length);
      bytes.push((await directoryBytes(sub)) / turns);
    }
    return [
      figure("dirTurnsPerSec1", "directory store (sync): turns/s, 1 writer", "turns/s", got.one),
      figure(
        "dirTurnsPerSecN",
        `directory store (sync): turns/s, ${params.writers} writers`,
        "turns/s",
        got.many,
      ),
      figure(
        "dirTurnBytes",
        `directory store: disk per turn (lengths ${params.lengths.join(", ")})`,
        "B",
        bytes,
      ),
    ];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function postgresql(params: StoreParams): Promise<Figure[] | string> {
  const status = postgresStatus();
  if (!status.available) return `PostgreSQL is unavailable (${status.reason})`;
  await using server = await startPostgres({ durable: true });
  const sql = postgres(server.url, { onnotice: () => {}, max: 4 });
  try {
    const store = new PostgresSessionStore(sql, { table: "capacity" });
    await store.ensureSchema();
    const got = await rates("PostgreSQL", store, params, serverCpuMs);
    const bytes: number[] = [];
    const rows: number[] = [];
    for (const length of params.lengths) {
      const table = `capacity_${length}`;
      const sized = new PostgresSessionStore(sql, { table });
      await sized.ensureSchema();
      const turns = await fill(sized, length);
      await sql.unsafe(`VACUUM ${table}, ${table}_keys`);
      const [size] = await sql.unsafe(
        `SELECT pg_total_relation_size('${table}') + pg_total_relation_size('${table}_keys') AS b,
          (SELECT count(*) FROM ${table}) AS n`,
      );
      bytes.push(Number(size!.b) / turns);
      rows.push(Number(size!.n) / turns);
    }
    progress(`PostgreSQL: ${bytes.map(Math.round)} B per turn (lengths ${params.lengths})`);
    return [
      figure("pgTurnsPerSec1", "PostgreSQL: turns/s, 1 writer (durable)", "turns/s", got.one),
      figure(
        "pgTurnsPerSecN",
        `PostgreSQL: turns/s, ${params.writers} writers (durable, 4 connections)`,
        "turns/s",
        got.many,
      ),
      figure(
        "pgCpuMsPerAppend",
        `PostgreSQL: the server's CPU per append of a turn (${params.writers} writers)`,
        "ms",
        got.cpu,
      ),
      figure("pgRowsPerTurn", "PostgreSQL: entry rows per turn", "rows", rows),
      figure(
        "pgTurnBytes",
        `PostgreSQL: table + index bytes per turn (lengths ${params.lengths.join(", ")})`,
        "B",
        bytes,
      ),
    ];
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/**
 * Measures both stores.
 *
 * @param params The sizes.
 * @returns The figures, and why PostgreSQL was left out, if it was.
 */
export async function measureStores(
  params: StoreParams,
): Promise<{ figures: Figure[]; missing?: string }> {
  const json = TURN_TEMPLATE.map((entry) => JSON.stringify(entry) + "\n").join("");
  const figures = [
    figure("turnJsonBytes", "a stored turn's entries as JSON lines", "B", [
      new TextEncoder().encode(json).length,
    ]),
    ...await directory(params),
  ];
  const pg = await postgresql(params);
  if (typeof pg === "string") return { figures, missing: pg };
  return { figures: [...figures, ...pg] };
}
