/**
 * `PostgresSessionStore` through a PostgreSQL outage (the server stopped in
 * the middle of the test, then started again on the same port and data):
 * calls reject at once with a DuplexError carrying the driver's error, never
 * hang, and work again through the same client once the server is back;
 * replaying what failed stores each entry once.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { type DuplexError, isDuplexError } from "../../../src/errors.ts";
import type { SessionStoreEntry } from "../../../src/store/session_store.ts";
import { PostgresSessionStore } from "../../../stores/postgres/mod.ts";
import { postgresTest } from "../_postgres_server.ts";

const KEY = { projectKey: "-srv-project", sessionId: "outage" };
const TIMEOUT_MS = 5_000;

async function failure(call: () => Promise<unknown>): Promise<DuplexError> {
  const started = performance.now();
  const error = await call().then(() => undefined, (error: unknown) => error);
  const took = performance.now() - started;
  assert.ok(isDuplexError(error), `a DuplexError, got ${error}`);
  assert.notEqual(error.kind, "timeout", `rejected at once, not by the timeout: ${error.message}`);
  assert.ok(took < TIMEOUT_MS, `took ${took} ms`);
  assert.match(error.message, /^Cannot [a-z ]+ the PostgreSQL session store \(table outage\): /);
  assert.ok(error.cause instanceof Error, "the driver's error is the cause");
  return error;
}

function entries(from: number, to: number): SessionStoreEntry[] {
  return Array.from({ length: to - from }, (_, i) => ({ type: "user", uuid: `e${from + i}` }));
}

postgresTest("PostgresSessionStore through a PostgreSQL outage", async (t, server) => {
  // The client's own reconnect backoff (3^n/100 s, up to 20 s) capped at 0.5 s, for a fast test.
  const backoff = (retries: number) => Math.min(3 ** retries / 100, 0.5);
  const sql = postgres(server.url, { onnotice: () => {}, max: 3, connect_timeout: 3, backoff });
  try {
    const store = new PostgresSessionStore(sql, { table: "outage", timeoutMs: TIMEOUT_MS });
    await store.append(KEY, entries(0, 10));

    await t.step(
      "with the server stopped, every call rejects at once with the driver's error",
      async () => {
        await server.stop();
        const causes = [];
        for (
          const call of [
            () => store.append(KEY, entries(10, 20)),
            () => store.append(KEY, entries(10, 20)),
            () => store.load(KEY),
            () => store.listSessions(KEY.projectKey),
            () => store.listSubkeys(KEY),
            () => store.delete({ ...KEY, subpath: "subagents/x" }),
          ]
        ) causes.push((await failure(call)).cause as { code?: string });
        assert.ok(causes.some((cause) => cause.code === "ECONNREFUSED"), "connections refused");
      },
    );

    await t.step(
      "a store whose first call finds the server down creates its tables later",
      async () => {
        const late = new PostgresSessionStore(sql, { table: "outage", timeoutMs: TIMEOUT_MS });
        await failure(() => late.ensureSchema());
        await server.start();
        await late.append({ ...KEY, sessionId: "late" }, entries(0, 1));
        assert.deepEqual(await late.load({ ...KEY, sessionId: "late" }), entries(0, 1));
      },
    );

    await t.step(
      "once the server is back, the same client works; the failed batch lands once",
      async () => {
        await store.append(KEY, entries(10, 20)); // the retry of what failed
        await store.append(KEY, entries(5, 25)); // a catch-up that overlaps
        assert.deepEqual(await store.load(KEY), entries(0, 25));
      },
    );

    await t.step(
      "stopped in the middle of a stream of appends: replaying the rest loses nothing",
      async () => {
        const key = { ...KEY, sessionId: "mid-stream" };
        const settled: ("ok" | "failed")[] = [];
        const writing = (async () => {
          for (let i = 0; i < 60; i++) {
            await store.append(key, entries(i, i + 1)).then(
              () => settled.push("ok"),
              (error) => {
                assert.ok(isDuplexError(error), `a DuplexError, got ${error}`);
                settled.push("failed");
              },
            );
            if (i === 20) await server.stop();
            if (i === 30) await server.start();
          }
        })();
        await writing;
        assert.ok(settled.includes("failed"), "some appends failed while the server was down");
        assert.ok(settled.lastIndexOf("failed") < 40, "and the later ones worked");
        const stored = (await store.load(key))!;
        for (const [i, outcome] of settled.entries()) {
          if (outcome === "ok") assert.ok(stored.some((e) => e.uuid === `e${i}`), `e${i} kept`);
        }
        await store.append(key, entries(0, 60)); // the catch-up from the local transcript
        const caughtUp = (await store.load(key))!;
        assert.equal(caughtUp.length, 60, "each entry once");
        assert.deepEqual(
          new Set(caughtUp.map((e) => e.uuid)),
          new Set(entries(0, 60).map((e) => e.uuid)),
        );
      },
    );
  } finally {
    await sql.end({ timeout: 2 });
  }
});
