/**
 * History for a sidebar against the real `claude` CLI (offline, the fake
 * Messages API): a turn whose model reply calls the Task tool, so the CLI
 * runs a subagent (which the same fake API answers), mirrored to an
 * in-memory, a directory and (when PostgreSQL is installed) a PostgreSQL
 * store at once. Then, on the files the CLI wrote and on each store:
 * `listSubagents` / `getSubagentMessages` give the same ids and messages,
 * equal to the official SDK's functions (run in a child process); archive
 * and unarchive round-trip and show in `listSessions` (ours and the SDK's);
 * each store's `listSessionSummaries` equals a fold of the transcript, and
 * `listSessions` over it gives the files' titles.
 *
 * Observed (2.1.332): the subagent's transcript is
 * `<project>/<session>/subagents/agent-<17 hex>.jsonl` with a
 * `.meta.json` beside it (`toolUseId`, `agentType`, `description`, …); the
 * mirror sends it as subkey `subagents/agent-<id>`, whose first entry is
 * `{"type":"agent_metadata", …the meta.json's fields}`; every entry of it
 * is `isSidechain: true`. `run_in_background: false` makes the Task call
 * wait for the subagent (by default 2.1.332 launches it in the background).
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { isDuplexError } from "../../src/errors.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { foldSessionSummary } from "../../src/store/session_summary.ts";
import {
  archiveSession,
  DirectorySessionStore,
  getSubagentMessages,
  listSessions,
  listSubagents,
  type SessionMessage,
  unarchiveSession,
} from "../../adapters/subprocess/history/mod.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import { postgresStatus, startPostgres } from "../stores/_postgres_server.ts";
import { assertFolded } from "../store/_summary_contract.ts";
import { okOf, sdkHistory, sdkInstalled, sharedFields as shape } from "../store/_sdk_history.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

const TASK = {
  description: "Greet",
  prompt: "Say hello from the subagent",
  "subagent_type": "general-purpose",
  "run_in_background": false,
};

/** A store that mirrors every append to several stores (the CLI mirrors to one). */
function tee(stores: readonly SessionStore[]): SessionStore {
  return {
    append: async (key, entries) => {
      await Promise.all(stores.map((store) => store.append(key, entries)));
    },
    load: (key) => stores[0]!.load(key),
  };
}

function textsOf(messages: readonly SessionMessage[]): string[] {
  return messages.flatMap((m) => {
    if (m.type === "system") return [];
    const content = m.message.content as unknown;
    if (typeof content === "string") return [content];
    return (content as { type: string; text?: string }[]).flatMap((b) => b.text ?? []);
  });
}

e2eTest("history: the real CLI's subagents, archive and store summaries", async (t, cli) => {
  const pg = postgresStatus().available ? await startPostgres() : undefined;
  // deno-lint-ignore no-explicit-any
  let sql: any;
  try {
    await withSandbox(async (box) => {
      const stores: [string, SessionStore][] = [
        ["memory", new InMemorySessionStore()],
        ["directory", new DirectorySessionStore(`${box.root}/store`)],
      ];
      if (pg) {
        const { default: postgres } = await import("postgres");
        sql = postgres(pg.url, { onnotice: () => {}, max: 2 });
        stores.push(["postgres", new PostgresSessionStore(sql, { table: "e2e_sidebar" })]);
      } else {
        // deno-lint-ignore no-console
        console.warn("PostgreSQL is not installed: the e2e sidebar test runs without its store");
      }
      let sessionId = "";
      {
        await using session = await DuplexSession.start({
          transport: sandboxedCli(cli, box, { sessionStore: tee(stores.map(([, s]) => s)) }),
          onPermission: () => ({ behavior: "allow" }),
        });
        const turn = await session.send(`[[tool:Task:${JSON.stringify(TASK)}]]`, {
          timeoutMs: 60_000,
        });
        assert.equal(turn.result.isError, false, turn.result.text);
        assert.match(
          turn.result.text,
          /Echo: Say hello from the subagent/,
          "the subagent answered",
        );
        sessionId = session.sessionId!;
        await session.close();
      }
      const configDir = `${box.home}/.claude`;
      const files = { configDir, dir: box.work };
      const [project] = await Array.fromAsync(Deno.readDir(`${configDir}/projects`));
      const projectKey = project!.name;
      const task = box.api.messageRequests.find((r) => r.reply === "tool");
      assert.ok(task, "the model's Task call");

      let agentId = "";
      let fileMessages: SessionMessage[] = [];
      await t.step("listSubagents() and getSubagentMessages() on the CLI's files", async () => {
        const ids = await listSubagents(sessionId, files);
        assert.equal(ids.length, 1, `one subagent: ${ids}`);
        agentId = ids[0]!;
        assert.match(agentId, /^a[0-9a-f]{16}$/);
        fileMessages = await getSubagentMessages(sessionId, agentId, files);
        assert.deepEqual(fileMessages.map((m) => m.type), ["user", "assistant"]);
        assert.deepEqual(textsOf(fileMessages), [TASK.prompt, `Echo: ${TASK.prompt}`]);
        assert.ok(fileMessages.every((m) => m.parent_tool_use_id === "toolu_fake_1"));
        assert.ok(fileMessages.every((m) => m.parent_agent_id === null));
        await assert.rejects(
          getSubagentMessages(sessionId, "a0000000000000000", files),
          (e: unknown) => isDuplexError(e, "not_found"),
        );
      });

      for (const [kind, store] of stores) {
        await t.step(`${kind}: the same subagents and messages from the store`, async () => {
          const where = { sessionStore: store, projectKey };
          assert.deepEqual(await listSubagents(sessionId, where), [agentId]);
          const stored = await getSubagentMessages(sessionId, agentId, where);
          assert.deepEqual(shape(stored), shape(fileMessages));
        });
      }

      await t.step("the SDK's listSubagents() and getSubagentMessages() agree", async () => {
        // Without the SDK (tests/bench/install_sdk.ts) this step checks nothing; on CI it fails.
        assert.ok(sdkInstalled() || Deno.env.get("CI") !== "true", "the official SDK is installed");
        if (!sdkInstalled()) return;
        const memory = stores[0]![1];
        const key = { projectKey, sessionId };
        const subpaths = await memory.listSubkeys!(key);
        const seeded = await Promise.all(["", ...subpaths].map(async (subpath) => {
          const full = subpath ? { ...key, subpath } : key;
          return { key: full, entries: (await memory.load(full)) ?? [] };
        }));
        const overStore = { sessionStore: "$store", dir: box.work };
        const results = await sdkHistory({
          configDir,
          store: seeded,
          calls: [
            { fn: "listSubagents", args: [sessionId, { dir: box.work }] },
            { fn: "getSubagentMessages", args: [sessionId, agentId, { dir: box.work }] },
            { fn: "listSubagents", args: [sessionId, overStore] },
            { fn: "getSubagentMessages", args: [sessionId, agentId, overStore] },
          ],
        });
        assert.deepEqual(okOf(results[0]), [agentId]);
        assert.deepEqual(okOf(results[2]), [agentId]);
        for (const i of [1, 3]) {
          assert.deepEqual(
            shape(okOf(results[i]) as object[]),
            shape(fileMessages),
          );
        }
      });

      await t.step("archive and unarchive round-trip and show in listSessions()", async () => {
        const archived = async () => (await listSessions(files))[0]?.archived;
        assert.equal(await archived(), undefined, "never archived");
        await archiveSession(sessionId, files);
        assert.equal(await archived(), true);
        if (sdkInstalled()) {
          const [listed] = await sdkHistory({
            configDir,
            calls: [{ fn: "listSessions", args: [{ dir: box.work }] }],
          });
          assert.equal((okOf(listed) as { archived?: boolean }[])[0]?.archived, true, "the SDK");
        }
        await unarchiveSession(sessionId, files);
        assert.equal(await archived(), false);
        await assert.rejects(
          archiveSession(sessionId, { sessionStore: stores[0]![1], projectKey }),
          (e: unknown) => isDuplexError(e, "invalid_argument"),
        );
      });

      const local: SessionStoreEntry[] = (await Deno.readTextFile(
        `${configDir}/projects/${projectKey}/${sessionId}.jsonl`,
      )).trim().split("\n").map((line) => JSON.parse(line));
      const titles = (await listSessions(files)).map((
        s,
      ) => [s.sessionId, s.summary, s.firstPrompt]);
      for (const [kind, store] of stores) {
        await t.step(`${kind}: listSessionSummaries() is a fold of the transcript`, async () => {
          await assertFolded(store, projectKey);
          const [summary] = await store.listSessionSummaries!(projectKey);
          const key = { projectKey, sessionId };
          assert.deepEqual(summary?.data, foldSessionSummary(undefined, key, local).data);
          const listed = await listSessions({ sessionStore: store, projectKey });
          assert.deepEqual(listed.map((s) => [s.sessionId, s.summary, s.firstPrompt]), titles);
        });
      }
    });
  } finally {
    await sql?.end();
    await pg?.[Symbol.asyncDispose]();
  }
});
