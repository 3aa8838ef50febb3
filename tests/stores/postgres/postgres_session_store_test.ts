/**
 * `PostgresSessionStore` on a real PostgreSQL (one throwaway server for the
 * file): the SessionStore contract, then what only PostgreSQL shows —
 * several clients at once, schema creation racing, big transcripts, exact
 * text, schemas and migrations, clients with transforms (the listing's
 * order: postgres_listing_order_test.ts).
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { isDuplexError } from "../../../src/errors.ts";
import { sessionStoreConformance } from "../../../src/testing/session_store_conformance.ts";
import type { SessionStoreEntry } from "../../../src/store/session_store.ts";
import {
  type PostgresClient,
  PostgresSessionStore,
  postgresSessionStoreSchema,
} from "../../../stores/postgres/mod.ts";
import { type PostgresServer, postgresTest } from "../_postgres_server.ts";

const KEY = { projectKey: "-srv-project", sessionId: "9b2f0c3e-1111-4c1e-9a55-000000000001" };

function client(server: PostgresServer, options: postgres.Options<never> = {}): postgres.Sql {
  return postgres(server.url, { onnotice: () => {}, max: 4, ...options });
}

function turn(i: number): SessionStoreEntry[] {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  return [
    {
      type: "user",
      uuid: `u-${i}`,
      parentUuid: i ? `a-${i - 1}` : null,
      timestamp: at,
      message: { role: "user", content: `question ${i}` },
    },
    {
      type: "assistant",
      uuid: `a-${i}`,
      parentUuid: `u-${i}`,
      timestamp: at,
      message: { role: "assistant", content: [{ type: "text", text: `answer ${i} `.repeat(20) }] },
    },
    { type: "queue-operation", operation: "dequeue", timestamp: at },
  ];
}

let tables = 0;
/* A store on a table of its own: each contract step starts empty. */
function freshStore(sql: PostgresClient): PostgresSessionStore {
  return new PostgresSessionStore(sql, { table: `contract_${++tables}`, timeoutMs: 10_000 });
}

postgresTest("PostgresSessionStore on a real PostgreSQL", async (t, server) => {
  const sql = client(server);
  try {
    await sessionStoreConformance(t, () => freshStore(sql));

    await t.step(
      "two clients append to one key at once: each entry once, each in call order",
      async () => {
        const other = client(server);
        try {
          const table = "two_clients";
          const stores = [sql, other].map((c) => new PostgresSessionStore(c, { table }));
          const batches = (who: number) =>
            Array.from({ length: 40 }, (_, b) => [
              { type: "user", uuid: `shared-${b}`, from: who }, // both write it: stored once
              { type: "user", uuid: `c${who}-${b}` },
              { type: "tag", tag: `c${who}-${b}` }, // no uuid: always appended
            ]);
          await Promise.all(
            stores.flatMap((store, who) => batches(who).map((b) => store.append(KEY, b))),
          );
          const loaded = (await stores[0]!.load(KEY))!;
          const uuids = loaded.flatMap((e) => e.uuid === undefined ? [] : [e.uuid]);
          assert.equal(new Set(uuids).size, uuids.length, "no uuid twice");
          assert.equal(uuids.length, 40 * 3);
          assert.equal(loaded.filter((e) => e.type === "tag").length, 80);
          for (const who of [0, 1]) {
            const mine = loaded.filter((e) =>
              e.uuid?.startsWith(`c${who}-`) || e.tag?.toString().startsWith(`c${who}-`)
            );
            const expected = batches(who).flatMap((b) => b.slice(1));
            assert.deepEqual(mine, expected, `client ${who}'s entries in its call order`);
          }
        } finally {
          await other.end();
        }
      },
    );

    await t.step(
      "eight clients creating the same tables at once all succeed (advisory lock)",
      async () => {
        const clients = Array.from({ length: 8 }, () => client(server, { max: 1 }));
        try {
          const stores = clients.map((c) => new PostgresSessionStore(c, { table: "race" }));
          await Promise.all(
            stores.map((store, i) =>
              store.append({ ...KEY, sessionId: `s${i}` }, [{ type: "x", i }])
            ),
          );
          const listed = await stores[0]!.listSessions(KEY.projectKey);
          assert.deepEqual(
            listed.map((s) => s.sessionId).sort(),
            stores.map((_, i) => `s${i}`),
          );
        } finally {
          await Promise.all(clients.map((c) => c.end()));
        }
      },
    );

    await t.step("1,000 turns and a 5 MB entry load back equal and in order", async () => {
      const store = new PostgresSessionStore(sql, { table: "large" });
      const turns = Array.from({ length: 1_000 }, (_, i) => turn(i));
      for (let i = 0; i < turns.length; i += 50) {
        await store.append(KEY, turns.slice(i, i + 50).flat());
      }
      const big = {
        type: "user",
        uuid: "big",
        toolUseResult: { stdout: "x".repeat(5 * 1024 * 1024) },
      };
      await store.append(KEY, [big]);
      const loaded = await store.load(KEY);
      assert.equal(loaded?.length, 3_001);
      assert.deepEqual(loaded, [...turns.flat(), big]);
    });

    await t.step(
      "entries load back as appended, to the byte (a json column keeps the text)",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "exact" });
        const odd: SessionStoreEntry[] = [
          { type: "x", uuid: "nul", text: "a\u0000b", z: 1, a: 2 }, // jsonb refuses \u0000
          { type: "x", uuid: "surrogate", text: "lone \ud800 high" }, // and lone surrogates
          { uuid: "order", type: "x", b: { y: [1, 2.5, -0.125, 1e21], x: null } }, // jsonb reorders keys
          { type: "x", uuid: "unicode", text: '日本語 🎉 \u2028 "quoted" \\ tab\t' },
          { type: "x", uuid: "nul\u0000id" }, // a uuid text cannot hold: kept, not deduplicated
          { type: "x", uuid: "nul\u0000id" },
        ];
        await store.append(KEY, odd);
        const loaded = await store.load(KEY);
        assert.deepEqual(loaded?.map((e) => JSON.stringify(e)), odd.map((e) => JSON.stringify(e)));
      },
    );

    await t.step(
      "a database of the previous version (no keys' seq, mtimes that tie) is migrated",
      async () => {
        // The previous version's DDL and append, as it created and wrote the tables.
        const previousAppend = (table: string, id: string, mtime: number) =>
          sql.unsafe(
            `WITH k AS (INSERT INTO ${table}_keys AS k (project_key, session_id, subpath, mtime)
              VALUES ($1, $2, '', $3) ON CONFLICT (project_key, session_id, subpath)
              DO UPDATE SET mtime = greatest(excluded.mtime, k.mtime + 1) RETURNING 1)
            INSERT INTO ${table} (project_key, session_id, subpath, entry)
            SELECT $1, $2, '', '{"type":"x"}' FROM k`,
            [KEY.projectKey, id, String(mtime)],
          );
        const ahead = Date.now() + 60_000;
        for (const table of ["legacy", "legacy_manual"]) {
          await sql.unsafe(`CREATE TABLE ${table} (seq bigserial NOT NULL,
            project_key text NOT NULL, session_id text NOT NULL, subpath text NOT NULL,
            uuid text, entry json NOT NULL,
            PRIMARY KEY (project_key, session_id, subpath, seq),
            UNIQUE (project_key, session_id, subpath, uuid))`);
          await sql.unsafe(`CREATE TABLE ${table}_keys (project_key text NOT NULL,
            session_id text NOT NULL, subpath text NOT NULL, mtime bigint NOT NULL,
            PRIMARY KEY (project_key, session_id, subpath))`);
          // "old-b" after "old-a" in one millisecond, and a session stamped a minute ahead of
          // the clock (appended to in a burst).
          for (const [id, mtime] of [["old-a", 1e12], ["old-b", 1e12], ["ahead", ahead]] as const) {
            await previousAppend(table, id, mtime);
          }
        }
        const order = ["ahead", "old-b", "old-a"];
        const store = new PostgresSessionStore(sql, { table: "legacy" });
        assert.deepEqual(
          (await store.listSessions(KEY.projectKey)).map((s) => s.sessionId),
          order,
          "ties go by the last entry: old-b was appended after old-a",
        );
        const seqs = await sql`SELECT session_id, seq::text FROM legacy_keys ORDER BY seq`;
        assert.deepEqual(seqs.map((r) => r.session_id), ["old-a", "old-b", "ahead"], "backfilled");
        await store.append({ ...KEY, sessionId: "new" }, [{ type: "x" }]);
        const listed = await store.listSessions(KEY.projectKey);
        assert.deepEqual(listed.map((s) => s.sessionId), ["new", ...order]);
        assert.ok(listed[0]!.mtime >= ahead, "never below an earlier append's mtime");
        // A host of the previous version still appending (a rolling upgrade): its new row has
        // no seq, and among sessions of its millisecond it lists last, until a migration
        // (run again: idempotent) numbers it by its last entry.
        await previousAppend("legacy", "old-c", 1e12);
        const names = async (s: PostgresSessionStore) =>
          (await s.listSessions(KEY.projectKey)).map((ref) => ref.sessionId);
        assert.deepEqual(await names(store), ["new", ...order, "old-c"]);
        await sql.unsafe(postgresSessionStoreSchema({ table: "legacy" }));
        assert.deepEqual(await names(store), ["new", "ahead", "old-c", "old-b", "old-a"]);

        const manual = new PostgresSessionStore(sql, {
          table: "legacy_manual",
          createSchema: false,
        });
        const hint = /: the tables are of an earlier version of the store; migrate them/;
        for (const call of [() => manual.append(KEY, [{ type: "x" }]), () => names(manual)]) {
          const error = await call().then(() => undefined, (e) => e);
          assert.ok(isDuplexError(error, "store_failed"), `a DuplexError, got ${error}`);
          assert.match(error.message, /column .*seq.* does not exist \(42703\)/);
          assert.match(error.message, hint);
        }
        assert.deepEqual(await manual.load({ ...KEY, sessionId: "old-a" }), [{ type: "x" }]);
        await sql.unsafe(postgresSessionStoreSchema({ table: "legacy_manual" }));
        await manual.append({ ...KEY, sessionId: "new" }, [{ type: "x" }]);
        assert.deepEqual(await names(manual), ["new", ...order]);
      },
    );

    await t.step("a schema of the user's: the tables are created there", async () => {
      await sql`CREATE SCHEMA tenant_a`;
      const store = new PostgresSessionStore(sql, { schema: "tenant_a", table: "transcripts" });
      await store.append(KEY, [{ type: "x" }]);
      const rows = await sql`SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'tenant_a' ORDER BY table_name`;
      assert.deepEqual(rows.map((r) => r.table_name), ["transcripts", "transcripts_keys"]);
      const [index] = await sql`SELECT indexdef FROM pg_indexes
        WHERE schemaname = 'tenant_a' AND indexname = 'transcripts_kidx'`;
      assert.match(String(index?.indexdef), /ON tenant_a\.transcripts_keys .*WHERE/);
      assert.deepEqual(await store.load(KEY), [{ type: "x" }]);
    });

    await t.step("the longest names (58 and 63 characters) work, the index's too", async () => {
      const schema = `s${"b".repeat(62)}`;
      await sql.unsafe(`CREATE SCHEMA ${schema}`);
      const table = `T${"a".repeat(57)}`;
      const store = new PostgresSessionStore(sql, { schema, table });
      for (const id of ["a", "b", "a"]) {
        await store.append({ ...KEY, sessionId: id }, [{ type: "x" }]);
      }
      assert.deepEqual((await store.listSessions(KEY.projectKey)).map((s) => s.sessionId), [
        "a",
        "b",
      ]);
      const [index] = await sql`SELECT tablename FROM pg_indexes
        WHERE schemaname = ${schema} AND indexname = ${`${table}_kidx`}`;
      assert.equal(index?.tablename, `${table}_keys`);
    });

    await t.step(
      "createSchema: false names the missing tables; the migration makes them",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "migrated", createSchema: false });
        const error = await store.append(KEY, [{ type: "x" }]).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(isDuplexError(error), `a DuplexError, got ${error}`);
        assert.match(
          error.message,
          /relation "migrated_keys" does not exist \(42P01\): create the tables first/,
        );
        await sql.unsafe(postgresSessionStoreSchema({ table: "migrated" })); // what an operator runs
        await sql.unsafe(postgresSessionStoreSchema({ table: "migrated" })); // twice: idempotent
        await store.append(KEY, [{ type: "x" }]);
        assert.deepEqual(await store.load(KEY), [{ type: "x" }]);
      },
    );

    await t.step(
      "appends, loads and listings are prepared once per connection, unless the client says not",
      async () => {
        for (const prepare of [true, false]) {
          const table = `prepared_${prepare}`;
          const one = client(server, { max: 1, prepare });
          try {
            const store = new PostgresSessionStore(one, { table });
            for (let i = 0; i < 3; i++) await store.append(KEY, [{ type: "x", i }]);
            await store.load(KEY);
            await store.listSessions(KEY.projectKey);
            await store.listSubkeys(KEY);
            // The same connection (max: 1): the statements it keeps.
            const rows = await one.unsafe(
              "SELECT statement FROM pg_prepared_statements WHERE statement LIKE $1",
              [`%"${table}%`],
            );
            const kept = rows.map((r) => String(r.statement).match(/^\s*(\w+)/)?.[1]);
            assert.deepEqual(
              kept.sort(),
              // The main key's append, its summary's update, the load, both listings.
              prepare ? ["SELECT", "SELECT", "SELECT", "UPDATE", "WITH"] : [],
              rows.map((r) => r.statement).join("\n---\n"),
            );
            assert.equal((await store.load(KEY))?.length, 3);
          } finally {
            await one.end();
          }
        }
      },
    );

    await t.step(
      "a client with postgres.camel and its own type parsers works the same",
      async () => {
        const camel = client(server, {
          transform: postgres.camel,
          types: { bigint: postgres.BigInt },
        } as postgres.Options<never>);
        try {
          const store = new PostgresSessionStore(camel, { table: "camel" });
          await store.append({ ...KEY, subpath: "subagents/agent-1" }, [{
            type: "x",
            snake_key: 1,
          }]);
          await store.append(KEY, [{ type: "x", snake_key: 1 }]);
          assert.deepEqual(await store.load(KEY), [{ type: "x", snake_key: 1 }]);
          const [ref] = await store.listSessions(KEY.projectKey);
          assert.equal(ref?.sessionId, KEY.sessionId);
          assert.equal(typeof ref?.mtime, "number");
          assert.deepEqual(await store.listSubkeys(KEY), ["subagents/agent-1"]);
        } finally {
          await camel.end();
        }
      },
    );

    await t.step(
      "a delete with appends in flight leaves no entries without their key",
      async () => {
        const store = new PostgresSessionStore(sql, { table: "delete_race" });
        const otherClient = client(server, { max: 5 });
        const others = Array.from(
          { length: 5 },
          () => new PostgresSessionStore(otherClient, { table: "delete_race" }),
        );
        try {
          // Each round races a delete of a key with no row yet against five appends; odd
          // rounds send two of them to a subkey, which the main key's delete removes too.
          const sub = { ...KEY, subpath: "subagents/agent-1" };
          for (let round = 0; round < 40; round++) {
            const appends = others.map((other, i) =>
              other.append(round % 2 === 1 && i % 2 === 1 ? sub : KEY, [{ type: "x", i }])
            );
            await Promise.all([store.delete(KEY), ...appends]);
            const loaded = await store.load(KEY);
            const listed = await store.listSessions(KEY.projectKey);
            assert.equal(
              loaded === null,
              listed.length === 0,
              `round ${round}: entries iff a key row`,
            );
            assert.equal(
              await store.load(sub) === null,
              (await store.listSubkeys(KEY)).length === 0,
              `round ${round}: a subkey's entries iff its key row`,
            );
            await store.delete(KEY);
          }
        } finally {
          await otherClient.end();
        }
      },
    );
  } finally {
    await sql.end();
  }
});
