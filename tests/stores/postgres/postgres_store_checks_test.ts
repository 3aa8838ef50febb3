/**
 * `PostgresSessionStore` without a PostgreSQL: what it refuses before any
 * SQL is sent (identifiers that could inject SQL, bad options, keys and
 * entries), the migration text, and its bounds against servers that refuse
 * or never answer (the real `postgres` client on 127.0.0.1).
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { isDuplexError } from "../../../src/errors.ts";
import {
  type PostgresClient,
  type PostgresQueryable,
  PostgresSessionStore,
  postgresSessionStoreSchema,
} from "../../../stores/postgres/mod.ts";

/* A client that records what reaches it and answers nothing: nothing must reach it. */
function recordingClient(): PostgresClient & { readonly sent: string[] } {
  const sent: string[] = [];
  const tx: PostgresQueryable = {
    unsafe(query) {
      sent.push(query);
      return Promise.reject(new Error("no server"));
    },
  };
  return {
    sent,
    unsafe: tx.unsafe,
    begin(fn) {
      sent.push("BEGIN");
      return fn(tx);
    },
  };
}

const KEY = { projectKey: "p", sessionId: "s" };

Deno.test({
  name: "PostgresSessionStore refuses table and schema names that are not plain identifiers",
  permissions: "none",
  async fn(t) {
    const injections = [
      'x"; DROP TABLE users; --',
      "entries; DELETE FROM entries",
      "a b",
      "1abc",
      '"quoted"',
      "naïve",
      "a".repeat(59),
      "",
    ];
    for (const table of injections) {
      await t.step(`table ${JSON.stringify(table.slice(0, 30))}`, () => {
        const client = recordingClient();
        assert.throws(
          () => new PostgresSessionStore(client, { table }),
          (error) => error instanceof TypeError && /table name/.test(error.message),
        );
        assert.throws(() => postgresSessionStoreSchema({ table }), /table name/);
        assert.deepEqual(client.sent, []);
      });
    }
    await t.step("schema names too, and names that are not strings", () => {
      const client = recordingClient();
      for (const schema of ['public"; DROP SCHEMA app; --', "app.x", "a".repeat(64)]) {
        assert.throws(() => new PostgresSessionStore(client, { schema }), /schema name/);
      }
      const table = 7 as unknown as string;
      assert.throws(() => new PostgresSessionStore(client, { table }), /Cannot use number as/);
      assert.deepEqual(client.sent, []);
    });
    await t.step("the longest names that fit (58 and 63 characters) are taken, quoted", () => {
      const table = `T${"a".repeat(57)}`;
      const schema = `s${"b".repeat(62)}`;
      new PostgresSessionStore(recordingClient(), { table, schema });
      const sql = postgresSessionStoreSchema({ table, schema });
      assert.ok(sql.includes(`CREATE TABLE IF NOT EXISTS "${schema}"."${table}" (`));
      assert.ok(sql.includes(`CREATE TABLE IF NOT EXISTS "${schema}"."${table}_keys" (`));
      assert.ok(
        sql.includes(
          `CREATE INDEX IF NOT EXISTS "${table}_kidx"\nON "${schema}"."${table}_keys" (`,
        ),
      );
    });
  },
});

Deno.test({
  name: "PostgresSessionStore refuses a client, a timeout, keys and entries it cannot use",
  permissions: "none",
  async fn(t) {
    await t.step("not a client, a bad timeoutMs", () => {
      for (const sql of [undefined, {}, { unsafe() {} }, "postgres://x"]) {
        assert.throws(
          () => new PostgresSessionStore(sql as unknown as PostgresClient),
          (error) => error instanceof TypeError && /unsafe\(\) and begin\(\)/.test(error.message),
        );
      }
      for (const timeoutMs of [0, -1, Number.NaN, 2 ** 31]) {
        assert.throws(
          () => new PostgresSessionStore(recordingClient(), { timeoutMs }),
          (error) => error instanceof RangeError && /timeoutMs must be 1 to/.test(error.message),
        );
      }
      assert.throws(
        () => new PostgresSessionStore(recordingClient(), { timeoutMs: "5" as unknown as number }),
        (error) => error instanceof TypeError && /timeoutMs must be a number/.test(error.message),
      );
    });
    const cyclic: Record<string, unknown> = { type: "x" };
    cyclic.self = cyclic;
    const bad: [string, unknown, unknown, RegExp][] = [
      ["no key", undefined, [], /the key must be an object/],
      ["an empty projectKey", { projectKey: "", sessionId: "s" }, [], /key.projectKey/],
      ["an empty subpath", { ...KEY, subpath: "" }, [], /key.subpath.*omit it/],
      [
        "a NUL in sessionId",
        { projectKey: "p", sessionId: "a\u0000b" },
        [],
        /key.sessionId holds a NUL/,
      ],
      ["a lone surrogate in subpath", { ...KEY, subpath: "x\ud800" }, [], /key.subpath holds/],
      ["entries not an array", KEY, { type: "x" }, /entries must be an array/],
      ["an entry without type", KEY, [{ type: "x" }, { uuid: "u" }], /entries\[1\].type/],
      ["a numeric uuid", KEY, [{ type: "x", uuid: 7 }], /entries\[0\].uuid/],
      ["a null entry", KEY, [{ type: "x" }, null], /entries\[1\] must be an object/],
      ["a cycle", KEY, [{ type: "x" }, cyclic], /entries\[1\] is not JSON/],
      ["a BigInt", KEY, [{ type: "x", n: 1n }], /entries\[0\] is not JSON/],
    ];
    for (const [what, key, entries, message] of bad) {
      await t.step(`append refuses ${what}, sending nothing`, async () => {
        const client = recordingClient();
        const store = new PostgresSessionStore(client);
        await assert.rejects(
          store.append(key as typeof KEY, entries as []),
          (error) =>
            error instanceof TypeError &&
            /^Cannot append to the PostgreSQL session store: /.test(error.message) &&
            message.test(error.message),
        );
        assert.deepEqual(client.sent, []);
      });
    }
    await t.step("load, listSessions, delete and listSubkeys check their keys too", async () => {
      const client = recordingClient();
      const store = new PostgresSessionStore(client);
      const nul = { projectKey: "p\u0000", sessionId: "s" };
      for (
        const call of [
          () => store.load(nul),
          () => store.delete(nul),
          () => store.listSubkeys(nul),
          () => store.listSessions(""),
        ]
      ) {
        await assert.rejects(call(), TypeError);
      }
      assert.deepEqual(client.sent, []);
    });
    await t.step("append(key, []) sends nothing", async () => {
      const client = recordingClient();
      await new PostgresSessionStore(client).append(KEY, []);
      assert.deepEqual(client.sent, []);
    });
  },
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

Deno.test("PostgresSessionStore rejects at once, with the driver's error, when nothing listens", async () => {
  const port = freePort();
  const sql = postgres({ host: "127.0.0.1", port, user: "u", database: "d", max: 1 });
  try {
    const store = new PostgresSessionStore(sql, { timeoutMs: 5_000 });
    for (const call of [() => store.append(KEY, [{ type: "x" }]), () => store.load(KEY)]) {
      const started = performance.now();
      const error = await call().then(() => undefined, (error: unknown) => error);
      assert.ok(isDuplexError(error), `a DuplexError, got ${error}`);
      assert.notEqual(error.kind, "timeout");
      assert.match(
        error.message,
        /^Cannot (append to|load from) the PostgreSQL session store \(table claude_session_entries\): .*ECONNREFUSED/,
      );
      assert.equal((error.cause as { code?: string }).code, "ECONNREFUSED");
      assert.ok(performance.now() - started < 2_000, "no wait for the timeout");
    }
  } finally {
    await sql.end({ timeout: 0 });
  }
});

Deno.test("PostgresSessionStore times out, bounded by timeoutMs, on a server that never answers", async () => {
  // A TCP server that accepts and says nothing: the client waits for the server's first message.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) accepted.push(conn);
  })();
  const sql = postgres({
    host: "127.0.0.1",
    port: listener.addr.port,
    user: "u",
    database: "d",
    max: 1,
  });
  try {
    const store = new PostgresSessionStore(sql, { timeoutMs: 300 });
    for (const call of [() => store.append(KEY, [{ type: "x" }]), () => store.listSessions("p")]) {
      const started = performance.now();
      const error = await call().then(() => undefined, (error: unknown) => error);
      const took = performance.now() - started;
      assert.ok(isDuplexError(error, "timeout"), `a timeout DuplexError, got ${error}`);
      assert.match(error.message, /no answer within 300 ms \(timeoutMs\)/);
      assert.ok(took >= 290 && took < 1_500, `took ${took} ms`);
    }
    assert.ok(accepted.length >= 1, "the client did connect");
  } finally {
    await sql.end({ timeout: 0 });
    listener.close();
    for (const conn of accepted) conn.close();
    await accepting;
  }
});

Deno.test({
  name: "postgresSessionStoreSchema() is the migration: both tables, the keys' seq and index, " +
    "idempotent, the default names",
  permissions: "none",
  fn() {
    const sql = postgresSessionStoreSchema();
    assert.match(sql, /^CREATE TABLE IF NOT EXISTS "claude_session_entries" \(/);
    assert.match(sql, /CREATE TABLE IF NOT EXISTS "claude_session_entries_keys" \([^;]*\sseq /);
    assert.match(sql, /UNIQUE \(project_key, session_id, subpath, uuid\)/);
    // The tables of the previous version: the keys' seq added, numbered by the last entry.
    assert.match(
      sql,
      /ALTER TABLE "claude_session_entries_keys" ADD COLUMN IF NOT EXISTS seq bigint;\n/,
    );
    assert.match(
      sql,
      /UPDATE "claude_session_entries_keys" AS k SET seq = \(SELECT max\(e\.seq\) FROM "claude_session_entries" [^;]*WHERE k\.seq IS NULL;\n/,
    );
    assert.match(
      sql,
      /CREATE INDEX IF NOT EXISTS "claude_session_entries_kidx"\nON "claude_session_entries_keys" \(project_key, mtime DESC, seq DESC NULLS LAST\) WHERE subpath = '';\n$/,
    );
    // An earlier version's keys table: the summary column added, empty (folded at the next append).
    assert.match(
      sql,
      /ALTER TABLE "claude_session_entries_keys" ADD COLUMN IF NOT EXISTS summary json;\n/,
    );
    assert.doesNotMatch(sql, /_proj/);
    assert.equal(sql.match(/;\n/g)?.length, 6);
  },
});
