/**
 * `listSubagents` / `getSubagentMessages` over the CLI's layout
 * (`<session>/subagents/agent-<id>.jsonl`, nested folders, `.meta.json`)
 * and over stores (subkeys, the mirrored `agent_metadata` entry), with one
 * result both ways; `archiveSession` / `unarchiveSession` and `archived` in
 * the list; `not_found` for unknown ids, `invalid_argument` for malformed
 * ones. The real CLI's files: `tests/e2e/history_subagents_e2e_test.ts`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../../src/errors.ts";
import { InMemorySessionStore } from "../../../../src/store/in_memory_session_store.ts";
import {
  archiveSession,
  DirectorySessionStore,
  getSessionInfo,
  getSubagentMessages,
  importSessionToStore,
  listSessions,
  listSubagents,
  type SessionMessage,
  unarchiveSession,
} from "../../../../adapters/subprocess/history/mod.ts";
import { makeTestDir } from "../_helpers.ts";
import { layout, line, message, PROJECT, SESSION } from "./_subagent_layout.ts";

function plain(messages: readonly SessionMessage[]): unknown[] {
  return messages.map(({ entry: _entry, ...rest }) => rest);
}

Deno.test("listSubagents() and getSubagentMessages() read the same from files and stores", async (t) => {
  const root = await makeTestDir();
  try {
    const { configDir } = await layout(root);
    const files = { configDir };
    const memory = new InMemorySessionStore();
    const directory = new DirectorySessionStore(`${root}/store`);
    for (const store of [memory, directory]) {
      await importSessionToStore(SESSION, store, { configDir, projectKey: PROJECT });
    }

    await t.step("files: every agent file, nested ones too, sorted", async () => {
      assert.deepEqual(await listSubagents(SESSION, files), ["a1", "b2"]);
    });

    await t.step("files: an agent's chain, with the Task call and the parent agent", async () => {
      const one = await getSubagentMessages(SESSION, "a1", files);
      assert.deepEqual(one.map((m) => [m.type, m.uuid, m.parent_tool_use_id, m.parent_agent_id]), [
        ["user", "a1-1", "toolu_1", null],
        ["assistant", "a1-2", "toolu_1", null],
      ]);
      const two = await getSubagentMessages(SESSION, "b2", { ...files, offset: 1, limit: 5 });
      assert.deepEqual(two.map((m) => [m.uuid, m.parent_tool_use_id, m.parent_agent_id]), [
        ["b2-2", "toolu_2", "a1"],
      ]);
    });

    for (const [kind, store] of [["memory", memory], ["directory", directory]] as const) {
      await t.step(`${kind}: the same ids and messages as the files`, async () => {
        const where = { sessionStore: store, projectKey: PROJECT };
        assert.deepEqual(await listSubagents(SESSION, where), await listSubagents(SESSION, files));
        for (const agentId of ["a1", "b2"]) {
          assert.deepEqual(
            plain(await getSubagentMessages(SESSION, agentId, where)),
            plain(await getSubagentMessages(SESSION, agentId, files)),
          );
        }
      });
    }

    await t.step("a session without subagents has none; unknown ids are not_found", async () => {
      const other = crypto.randomUUID();
      const project = `${configDir}/projects/${PROJECT}`;
      await Deno.copyFile(`${project}/${SESSION}.jsonl`, `${project}/${other}.jsonl`);
      assert.deepEqual(await listSubagents(other, files), []);
      const notFound = (pattern: RegExp) => (error: unknown) =>
        isDuplexError(error, "not_found") && pattern.test(error.message);
      const unknown = crypto.randomUUID();
      await assert.rejects(listSubagents(unknown, files), notFound(/no transcript of session/));
      await assert.rejects(
        getSubagentMessages(SESSION, "zz9", files),
        notFound(/has no subagent zz9/),
      );
      const where = { sessionStore: memory, projectKey: PROJECT };
      await assert.rejects(listSubagents(unknown, where), notFound(/holds no transcript/));
      await assert.rejects(getSubagentMessages(SESSION, "zz9", where), notFound(/zz9/));
      await assert.rejects(getSubagentMessages(unknown, "a1", where), notFound(/holds no/));
    });

    await t.step(
      "malformed ids are invalid_argument; a store without listSubkeys too",
      async () => {
        const invalid = (error: unknown) => isDuplexError(error, "invalid_argument");
        await assert.rejects(listSubagents("not-a-uuid", files), invalid);
        for (const bad of ["../a1", "a/b", "", "x".repeat(129)]) {
          await assert.rejects(getSubagentMessages(SESSION, bad, files), invalid);
        }
        await assert.rejects(
          getSubagentMessages(SESSION, 7 as unknown as string, files),
          TypeError,
        );
        const bare = { append: memory.append.bind(memory), load: memory.load.bind(memory) };
        await assert.rejects(
          listSubagents(SESSION, { sessionStore: bare, projectKey: PROJECT }),
          (error: unknown) => invalid(error) && /no listSubkeys/.test((error as Error).message),
        );
      },
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("archiveSession() marks a session as the SDK does; a later prompt lifts it", async (t) => {
  const root = await makeTestDir();
  try {
    const { configDir, project } = await layout(root);
    const where = { configDir };
    const mark = `${project}/${SESSION}/archived.json`;
    const archived = async () => (await getSessionInfo(SESSION, where))?.archived;

    await t.step("never archived: absent", async () => {
      assert.equal(await archived(), undefined);
      assert.equal((await listSessions(where))[0]?.archived, undefined);
    });

    await t.step("archive: the mark file, archived: true in the list and the info", async () => {
      await archiveSession(SESSION, where);
      const written = JSON.parse(await Deno.readTextFile(mark));
      assert.deepEqual(Object.keys(written), ["archived", "at", "by"]);
      assert.equal(written.archived, true);
      assert.equal(written.by, "sdk");
      assert.equal((await Deno.stat(mark)).mode! & 0o777, 0o600);
      assert.equal((await listSessions(where))[0]?.archived, true);
      assert.equal(await archived(), true);
      assert.equal(
        await Deno.readTextFile(`${project}/${SESSION}.jsonl`).then((t) => t.length) > 0,
        true,
      );
    });

    await t.step("unarchive: archived: false", async () => {
      await unarchiveSession(SESSION, where);
      assert.equal(await archived(), false);
      await archiveSession(SESSION, { ...where, dir: "/nowhere" }).catch(() => {});
      assert.equal(await archived(), false, "a dir without the session changes nothing");
    });

    await t.step("a prompt sent after the mark unarchives; a tool result does not", async () => {
      await archiveSession(SESSION, where);
      const later = new Date(Date.now() + 60_000).toISOString();
      const file = `${project}/${SESSION}.jsonl`;
      await Deno.writeTextFile(
        file,
        line(
          message("user", "m3", "m2", [{ type: "tool_result", tool_use_id: "t", content: "x" }], {
            timestamp: later,
          }),
        ),
        { append: true },
      );
      assert.equal(await archived(), true);
      await Deno.writeTextFile(
        file,
        line(message("user", "m4", "m3", "one more question", { timestamp: later })),
        { append: true },
      );
      assert.equal(await archived(), false);
    });

    await t.step("a bad mark is ignored; store, unknown and malformed ids refused", async () => {
      await Deno.writeTextFile(mark, '{"archived":"yes"}');
      assert.equal(await archived(), undefined);
      await assert.rejects(
        archiveSession(SESSION, { sessionStore: new InMemorySessionStore() }),
        (e: unknown) => isDuplexError(e, "invalid_argument") && /archive mark/.test(String(e)),
      );
      await assert.rejects(
        unarchiveSession(crypto.randomUUID(), where),
        (e: unknown) => isDuplexError(e, "not_found"),
      );
      await assert.rejects(
        archiveSession("nope", where),
        (e: unknown) => isDuplexError(e, "invalid_argument"),
      );
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
