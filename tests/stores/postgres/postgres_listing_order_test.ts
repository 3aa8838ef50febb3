/**
 * `PostgresSessionStore.listSessions` lists sessions in the order they were
 * last appended to, within one millisecond too, from many clients at once,
 * while appends to the keys of one project do not wait for one another (one
 * throwaway server for the file; PostgreSQL's own clock, nothing frozen).
 * The listing is checked as the store gives it and as the official SDK
 * reads it (`.slice().sort((a, b) => b.mtime - a.mtime)`, a stable sort).
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import type { StoredSessionRef } from "../../../src/store/session_store.ts";
import { type PostgresClient, PostgresSessionStore } from "../../../stores/postgres/mod.ts";
import { type PostgresServer, postgresTest } from "../_postgres_server.ts";

const PROJECT = "-srv-project";

function client(server: PostgresServer, options: postgres.Options<never> = {}): postgres.Sql {
  return postgres(server.url, { onnotice: () => {}, max: 4, ...options });
}

function append(store: PostgresSessionStore, sessionId: string): Promise<void> {
  return store.append({ projectKey: PROJECT, sessionId }, [{ type: "x" }]);
}

/* The sessions of a run of appends, the last appended to first. */
function lastAppendedFirst(appended: readonly string[]): string[] {
  const order: string[] = [];
  for (const id of [...appended].reverse()) if (!order.includes(id)) order.push(id);
  return order;
}

/*
 * The listing's session ids, after checking that it comes sorted by mtime
 * (so the SDK's stable sort keeps it as it is).
 */
async function listed(store: PostgresSessionStore): Promise<string[]> {
  const refs = await store.listSessions(PROJECT);
  const sdk = refs.slice().sort((a, b) => b.mtime - a.mtime);
  assert.deepEqual(sdk, refs, "listed by mtime, newest first: the SDK's sort keeps the order");
  return refs.map((ref) => ref.sessionId);
}

/* How many neighbours of the listing share an mtime (appends of one millisecond). */
function ties(refs: readonly StoredSessionRef[]): number {
  return refs.filter((ref, i) => i > 0 && ref.mtime === refs[i - 1]!.mtime).length;
}

postgresTest("PostgresSessionStore lists sessions in append order", async (t, server) => {
  const sql = client(server);
  try {
    await t.step(
      "mtime is the server's clock in integer ms, strictly increasing per key; newest first",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "mtimes" });
        const seen: number[] = [];
        for (let i = 0; i < 20; i++) {
          await append(store, "one");
          const [ref] = await store.listSessions(PROJECT);
          seen.push(ref!.mtime);
        }
        const [row] =
          await sql`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`;
        assert.ok(
          seen.every((m, i) => Number.isSafeInteger(m) && (i === 0 || m > seen[i - 1]!)),
          `${seen}`,
        );
        assert.ok(Math.abs(Number(row?.now) - seen.at(-1)!) < 5_000, "near the server's clock");
        // Back to back: c and d (and the second b) are often stamped in one millisecond.
        for (const id of ["b", "c", "d", "b"]) await append(store, id);
        assert.deepEqual(await listed(store), ["b", "d", "c", "one"]);
      },
    );

    await t.step(
      "many keys back to back, some twice or three times in a row: in append order",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "back_to_back" });
        const sequence: string[] = [];
        for (let i = 0; i < 200; i++) {
          const id = `k-${String((i * 7) % 40).padStart(2, "0")}`;
          sequence.push(...Array(i % 5 === 0 ? 3 : i % 3 === 0 ? 2 : 1).fill(id));
        }
        for (const id of sequence) await append(store, id);
        const refs = await store.listSessions(PROJECT);
        assert.deepEqual(
          await listed(store),
          lastAppendedFirst(sequence),
          `${sequence.length} appends; ${ties(refs)} neighbours stamped in one millisecond`,
        );
      },
    );

    await t.step(
      "after a session stamped a minute ahead, every append shares or passes its mtime",
      async () => {
        // A session stamped ahead of the clock (one key appended to in a burst, each one past
        // its own mtime, or a row of the previous version) makes the next appends of the
        // project take its millisecond: their order is the tie-breaker's alone.
        const store = new PostgresSessionStore(sql, { table: "ahead" });
        await append(store, "ahead");
        await sql.unsafe(`UPDATE ahead_keys SET mtime = mtime + 60000`);
        const [{ mtime: ahead }] = await store.listSessions(PROJECT) as [StoredSessionRef];
        const sequence = ["a", "b", "c", "c", "d", "e", "a", "f", "g", "g", "g", "h", "b", "i"];
        for (const id of sequence) await append(store, id);
        const refs = await store.listSessions(PROJECT);
        assert.deepEqual(await listed(store), [...lastAppendedFirst(sequence), "ahead"]);
        assert.ok(refs.every((ref) => ref.mtime >= ahead), "none below an earlier append's");
        assert.ok(ties(refs) >= 5, `appends that share a millisecond: ${ties(refs)}`);
      },
    );

    await t.step(
      "eight clients at once, in two waves, each client's appends one after the other",
      async () => {
        const clients = Array.from({ length: 8 }, () => client(server, { max: 2 }));
        try {
          const stores = clients.map((c) => new PostgresSessionStore(c, { table: "many" }));
          await stores[0]!.ensureSchema();
          const chain = (wave: string, who: number) =>
            Array.from({ length: 10 }, (_, i) => `${wave}-${who}-${String(i).padStart(2, "0")}`);
          const wave = async (name: string) => {
            const started = performance.now();
            await Promise.all(stores.map(async (store, who) => {
              for (const id of chain(name, who)) await append(store, id);
            }));
            return performance.now() - started;
          };
          const took = [await wave("first"), await wave("second")];
          const order = await listed(stores[3]!);
          assert.equal(order.length, 160);
          assert.deepEqual(
            order.map((id) => id.split("-")[0]),
            [...Array(80).fill("second"), ...Array(80).fill("first")],
            `the second wave first (waves took ${took.map(Math.round)} ms): ${order}`,
          );
          for (const name of ["first", "second"]) {
            for (const who of stores.keys()) {
              const mine = chain(name, who);
              assert.deepEqual(order.filter((id) => mine.includes(id)), [...mine].reverse());
            }
          }
        } finally {
          await Promise.all(clients.map((c) => c.end()));
        }
      },
    );

    await t.step(
      "an append waits for no other key's: one held in an open transaction blocks nothing",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "unblocked", timeoutMs: 10_000 });
        await append(store, "held");
        const held = client(server, { max: 1 });
        const other = client(server, { max: 1 });
        const release = Promise.withResolvers<void>();
        try {
          const appended = Promise.withResolvers<void>();
          // A store whose statements run in one transaction, kept open until released: its
          // append holds the row locks it takes until the commit.
          const transaction = held.begin(async (tx) => {
            const inTx: PostgresClient = {
              unsafe: (query, parameters) => tx.unsafe(query, parameters),
              begin: () => Promise.reject(new Error("no nested transaction")),
            };
            const holder = new PostgresSessionStore(inTx, {
              table: "unblocked",
              createSchema: false,
            });
            await append(holder, "held");
            appended.resolve();
            await release.promise;
          });
          transaction.catch(appended.reject);
          await appended.promise;
          const others = new PostgresSessionStore(other, { table: "unblocked", timeoutMs: 5_000 });
          const outcome = await Promise.all([append(others, "new"), append(others, "newer")])
            .then(() => "appended", (error: unknown) => `failed: ${error}`);
          release.resolve();
          await transaction;
          assert.equal(outcome, "appended", "appends to other keys of the project went through");
          assert.deepEqual((await listed(store)).sort(), ["held", "new", "newer"]);
          const key = { projectKey: PROJECT, sessionId: "held" };
          assert.equal((await store.load(key))?.length, 2, "and the held one was committed");
        } finally {
          release.resolve();
          await Promise.all([held.end({ timeout: 5 }), other.end({ timeout: 5 })]);
        }
      },
    );
  } finally {
    await sql.end();
  }
});
