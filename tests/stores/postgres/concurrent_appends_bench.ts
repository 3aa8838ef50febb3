// deno-lint-ignore-file no-console
/**
 * Appends to many keys of ONE project at once (what a relay cluster does:
 * every session under one project key), through one `postgres` client of
 * 16 connections, on a throwaway local server: appends per second, the
 * median of the rounds (the first dropped).
 *
 * ```sh
 * deno run -P=bench tests/stores/postgres/concurrent_appends_bench.ts
 * deno run -P=bench tests/stores/postgres/concurrent_appends_bench.ts --fast   # fsync off
 * deno run -P=bench tests/stores/postgres/concurrent_appends_bench.ts \
 *   --module=/tmp/old/stores/postgres/mod.ts,stores/postgres/mod.ts            # an A/B
 * ```
 *
 * Each of the 32 keys gets its appends one after the other (the store runs
 * one key's appends in call order anyway), all keys at once; an append is
 * one entry with a uuid (`--batch=N`: N entries of about 350 bytes). `--module` takes one or more versions of the store
 * (a `stores/postgres/mod.ts` of a checkout or `git archive`, comma
 * separated): each round runs each of them in turn, on tables of its own,
 * so that they share the machine's load. By default the server keeps
 * PostgreSQL's durability (fsync, synchronous commit on), as
 * `tests/bench/store_bench.ts` does. Other options: `--keys=`,
 * `--connections=`, `--per-key=`, `--rounds=`, `--batch=`.
 *
 * @module
 */

import postgres from "postgres";
import type { PostgresClient } from "../../../stores/postgres/mod.ts";
import { startPostgres } from "../_postgres_server.ts";
import { median } from "../../bench/_measure.ts";

interface StoreModule {
  PostgresSessionStore: new (sql: PostgresClient, options?: { table?: string }) => {
    ensureSchema(): Promise<void>;
    append(key: { projectKey: string; sessionId: string }, entries: unknown[]): Promise<void>;
    listSessions(projectKey: string): Promise<{ sessionId: string; mtime: number }[]>;
  };
}

function option(name: string): string | undefined {
  return Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}
const KEYS = Number(option("keys") ?? 32);
const CONNECTIONS = Number(option("connections") ?? 16);
const PER_KEY = Number(option("per-key") ?? 100);
const ROUNDS = Number(option("rounds") ?? 6);
const BATCH = Number(option("batch") ?? 1);
const modulePaths = (option("module") ?? "stores/postgres/mod.ts").split(",");
const durable = !Deno.args.includes("--fast");

const modules: StoreModule[] = await Promise.all(
  modulePaths.map((path) => import(new URL(path, `file://${Deno.cwd()}/`).href)),
);

async function round(module: StoreModule, sql: PostgresClient, table: string): Promise<number> {
  const store = new module.PostgresSessionStore(sql, { table });
  await store.ensureSchema();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: KEYS }, async (_, k) => {
      for (let i = 0; i < PER_KEY; i++) {
        const batch = Array.from(
          { length: BATCH },
          (_, b) => ({ type: "user", uuid: `u-${k}-${i}-${b}`, text: "x".repeat(300) }),
        );
        await store.append({ projectKey: "-relay", sessionId: `s-${k}` }, batch);
      }
    }),
  );
  const rate = (KEYS * PER_KEY) / ((performance.now() - started) / 1000);
  const listed = await store.listSessions("-relay");
  if (listed.length !== KEYS) throw new Error(`listed ${listed.length} of ${KEYS} sessions`);
  return rate;
}

await using server = await startPostgres({ durable });
const sql = postgres(server.url, { onnotice: () => {}, max: CONNECTIONS });
try {
  const rates: number[][] = modules.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [m, module] of modules.entries()) {
      rates[m]!.push(await round(module, sql, `bench_${m}_${r}`));
      console.error(`round ${r}, ${modulePaths[m]}: ${Math.round(rates[m]!.at(-1)!)} appends/s`);
    }
  }
  for (const [m, path] of modulePaths.entries()) {
    const kept = rates[m]!.slice(1);
    console.log(
      `${path}: ${KEYS} keys of one project, ${CONNECTIONS} connections, ${PER_KEY} appends ` +
        `of ${BATCH} each, ${durable ? "durable" : "fsync off"}: median ${
          Math.round(median(kept))
        } ` +
        `appends/s (rounds ${kept.map(Math.round).join(", ")})`,
    );
  }
} finally {
  await sql.end();
}
