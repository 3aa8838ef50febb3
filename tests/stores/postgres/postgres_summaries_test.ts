/**
 * `PostgresSessionStore` keeps session summaries (the `summary` column of
 * its keys table) on a real PostgreSQL: the contract of
 * `tests/store/_summary_contract.ts`, two hosts appending to one session at
 * once, and a database of the previous version (no `summary` column) that
 * keeps working and gets each session's summary, folded from the whole
 * transcript, at its next append.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { PostgresSessionStore } from "../../../stores/postgres/mod.ts";
import { listSessions } from "../../../adapters/subprocess/history/mod.ts";
import { type PostgresServer, postgresTest } from "../_postgres_server.ts";
import { assertFolded, summaryContract } from "../../store/_summary_contract.ts";

function client(server: PostgresServer, options: postgres.Options<never> = {}): postgres.Sql {
  return postgres(server.url, { onnotice: () => {}, max: 4, ...options });
}

const PROJECT = "-srv-pg";

function prompt(i: number): Record<string, unknown> & { type: string } {
  return {
    type: "user",
    uuid: `u-${i}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    message: { role: "user", content: `prompt ${i}` },
  };
}

postgresTest("PostgresSessionStore keeps session summaries", async (t, server) => {
  const sql = client(server);
  let tables = 0;
  try {
    await summaryContract(
      t,
      () => new PostgresSessionStore(sql, { table: `summaries_${++tables}`, timeoutMs: 10_000 }),
    );

    await t.step("two hosts appending to one session at once: the summary folds all", async () => {
      const [a, b] = [client(server, { max: 2 }), client(server, { max: 2 })];
      try {
        const hosts = [a, b].map((c) => new PostgresSessionStore(c, { table: "two_hosts" }));
        await hosts[0]!.ensureSchema();
        const key = { projectKey: PROJECT, sessionId: "shared" };
        await Promise.all(
          Array.from(
            { length: 16 },
            (_, i) =>
              hosts[i % 2]!.append(key, [prompt(i), { type: "last-prompt", lastPrompt: `p${i}` }]),
          ),
        );
        await assertFolded(hosts[0]!, PROJECT);
        const [summary] = await hosts[1]!.listSessionSummaries(PROJECT);
        assert.equal(summary?.data.firstPrompt !== undefined, true);
      } finally {
        await Promise.all([a.end(), b.end()]);
      }
    });

    await t.step(
      "a database of the previous version (no summary column) keeps working and is folded",
      async () => {
        // The previous version's tables (keys with seq, no summary) and a session it wrote.
        await sql.unsafe(`CREATE TABLE before_summaries (seq bigserial NOT NULL,
          project_key text NOT NULL, session_id text NOT NULL, subpath text NOT NULL,
          uuid text, entry json NOT NULL,
          PRIMARY KEY (project_key, session_id, subpath, seq),
          UNIQUE (project_key, session_id, subpath, uuid))`);
        await sql.unsafe(`CREATE TABLE before_summaries_keys (project_key text NOT NULL,
          session_id text NOT NULL, subpath text NOT NULL, mtime bigint NOT NULL, seq bigint,
          PRIMARY KEY (project_key, session_id, subpath))`);
        await sql.unsafe(`CREATE INDEX before_summaries_kidx ON before_summaries_keys
          (project_key, mtime DESC, seq DESC NULLS LAST) WHERE subpath = ''`);
        await sql.unsafe(
          `INSERT INTO before_summaries_keys VALUES ($1, 'old', '', 1000, 1)`,
          [PROJECT],
        );
        await sql.unsafe(
          `INSERT INTO before_summaries (project_key, session_id, subpath, uuid, entry)
           VALUES ($1, 'old', '', 'u-0', $2::text::json)`,
          [PROJECT, JSON.stringify(prompt(0))],
        );
        const store = new PostgresSessionStore(sql, { table: "before_summaries" });
        assert.deepEqual(await store.listSessionSummaries(PROJECT), [], "migrated, none yet");
        const where = { sessionStore: store, projectKey: PROJECT };
        assert.deepEqual((await listSessions(where)).map((s) => s.summary), ["prompt 0"]);
        await store.append({ projectKey: PROJECT, sessionId: "old" }, [prompt(1)]);
        await assertFolded(store, PROJECT);
        const [summary] = await store.listSessionSummaries(PROJECT);
        assert.equal(summary?.data.firstPrompt, "prompt 0", "folded from the whole transcript");
        // A host of the previous version appends (no summary update): the summary is stale,
        // readers load the session, and the next append folds it again.
        await sql.unsafe(
          `UPDATE before_summaries_keys SET mtime = mtime + 1000 WHERE session_id = 'old'`,
        );
        await sql.unsafe(
          `INSERT INTO before_summaries (project_key, session_id, subpath, uuid, entry)
           VALUES ($1, 'old', '', 'u-2', $2::text::json)`,
          [PROJECT, JSON.stringify({ type: "custom-title", customTitle: "Set by the old host" })],
        );
        assert.deepEqual(
          (await listSessions(where)).map((s) => s.summary),
          ["Set by the old host"],
          "a stale summary is not used",
        );
        await store.append({ projectKey: PROJECT, sessionId: "old" }, [prompt(3)]);
        await assertFolded(store, PROJECT);
      },
    );
  } finally {
    await sql.end();
  }
});
