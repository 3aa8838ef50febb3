/**
 * A query past `timeoutMs` is cancelled, best effort, and a cancel that
 * cannot reach the server leaves no rejection unhandled (found by the
 * fleet soak: postgres.js 3's `Query.cancel()` drops the promise of its
 * cancel request, and a relay died of `read ECONNRESET` while PostgreSQL
 * restarted).
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { isDuplexError } from "../../../src/errors.ts";
import { PostgresSessionStore } from "../../../stores/postgres/mod.ts";
import { postgresTest } from "../_postgres_server.ts";

postgresTest(
  "a timed-out query whose cancel cannot connect leaves nothing unhandled",
  async (t, server) => {
    const unhandled: unknown[] = [];
    const listen = (event: PromiseRejectionEvent) => {
      unhandled.push(event.reason);
      event.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", listen);
    // A proxy that lets one connection through, then listens no more: the cancel request, on a
    // connection of its own, is refused.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    const piped: Promise<unknown>[] = [];
    const accepting = (async () => {
      const client = await listener.accept();
      listener.close();
      const upstream = await Deno.connect({ hostname: server.host, port: server.port });
      piped.push(
        client.readable.pipeTo(upstream.writable).catch(() => {}),
        upstream.readable.pipeTo(client.writable).catch(() => {}),
      );
    })();
    const sql = postgres(`postgres://${server.user}@127.0.0.1:${port}/${server.database}`, {
      max: 1,
      onnotice: () => {},
      connect_timeout: 3,
    });
    try {
      const store = new PostgresSessionStore(sql, { timeoutMs: 300, table: "cancel" });
      await store.append({ projectKey: "p", sessionId: "s" }, [{ type: "user", uuid: "u1" }]);
      await accepting;
      await t.step("the call times out, its query is cancelled", async () => {
        // A lock held by another session keeps the store's next append waiting past its bound.
        const holder = postgres(server.url, { max: 1, onnotice: () => {} });
        try {
          await holder.begin(async (tx) => {
            await tx.unsafe("LOCK TABLE cancel IN ACCESS EXCLUSIVE MODE");
            const error = await store.load({ projectKey: "p", sessionId: "s" }).then(
              () => undefined,
              (e: unknown) => e,
            );
            assert.ok(isDuplexError(error, "timeout"), String(error));
            // The cancel's own connection is refused at once; give its rejection time to surface.
            await new Promise((resolve) => setTimeout(resolve, 500));
          });
        } finally {
          await holder.end({ timeout: 2 });
        }
      });
      await t.step("no rejection went unhandled", () => {
        assert.deepEqual(unhandled.map(String), []);
      });
    } finally {
      globalThis.removeEventListener("unhandledrejection", listen);
      await sql.end({ timeout: 2 });
      try {
        listener.close();
      } catch { /* closed */ }
      await Promise.all(piped); // they end with the client's connection, and close both ends
    }
  },
);
