/**
 * The history functions over a `sessionStore` give what they give over the
 * CLI's files: the transcripts the real CLI wrote (`tests/fixtures/history/`)
 * are imported into an in-memory and a directory store, and each function's
 * output over the files is compared with its output over each store
 * (`file` is empty and `lastModified` is the store's mtime over a store;
 * everything else is equal, `fileSize` included, except that a list read
 * from a store's summaries has no `fileSize`, `costUsd` or `forkedFrom`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../src/errors.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import {
  deleteSession,
  forkSession,
  getSessionInfo,
  getSessionMessages,
  listSessions,
  renameSession,
  type SessionMessage,
  type StoredSessionInfo,
  tagSession,
} from "../../../adapters/subprocess/history/mod.ts";
import { DirectorySessionStore } from "../../../adapters/subprocess/store/directory_session_store.ts";
import { importSessionToStore } from "../../../adapters/subprocess/store/import_session.ts";
import {
  copyHistory,
  type History,
  RECORDED_DIR,
  RECORDED_FOLDER,
  texts,
} from "./_history_fixtures.ts";
import { makeTestDir } from "./_helpers.ts";

const NAMES = ["three_turns", "branched", "compacted"] as const;

/** An info without what only files have (the path, the file time). */
function comparable(info: StoredSessionInfo | undefined): unknown {
  if (!info) return info;
  const { file: _file, lastModified: _time, ...rest } = info;
  return rest;
}

/** A list row without what a store's summaries do not keep (both stores keep them). */
function listed(info: StoredSessionInfo, summaries: boolean): unknown {
  if (!summaries) return comparable(info);
  const { fileSize: _size, costUsd: _cost, forkedFrom: _from, ...rest } = info;
  return comparable(rest as StoredSessionInfo);
}

/** A fork's messages without its fresh ids. */
function shape(messages: readonly SessionMessage[]): unknown[] {
  return messages.map((m) => {
    const { uuid: _u, session_id: _s, entry, ...rest } = m;
    const { uuid: _eu, parentUuid, sessionId: _es, ...fields } = entry as Record<string, unknown>;
    for (const link of ["turnAttributionKey", "logicalParentUuid", "sourceToolAssistantUUID"]) {
      if (link in fields) fields[link] = typeof fields[link]; // fresh ids in each fork
    }
    return { ...rest, entry: { ...fields, hasParent: parentUuid !== null } };
  });
}

async function withStores(
  fn: (history: History, store: SessionStore, name: string) => Promise<void>,
): Promise<void> {
  for (const kind of ["memory", "directory"]) {
    await using history = await copyHistory();
    const root = await makeTestDir();
    try {
      const store = kind === "memory"
        ? new InMemorySessionStore()
        : new DirectorySessionStore(`${root}/s`);
      for (const name of NAMES) {
        await importSessionToStore(history.ids[name], store, {
          configDir: history.configDir,
          dir: RECORDED_DIR,
        });
      }
      await fn(history, store, kind);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  }
}

Deno.test("history over a store reads what it reads over the CLI's files", async (t) => {
  await withStores(async (history, store, kind) => {
    const files = { configDir: history.configDir, dir: RECORDED_DIR };
    const stored = { sessionStore: store, dir: RECORDED_DIR };
    await t.step(`${kind}: listSessions(), every row and in order, and pages`, async () => {
      const [overFiles, overStore] = [await listSessions(files), await listSessions(stored)];
      assert.equal(overStore.length, 3);
      const summaries = typeof store.listSessionSummaries === "function";
      assert.ok(summaries, "both stores keep summaries");
      assert.deepEqual(
        overStore.map((info) => listed(info, summaries)),
        overFiles.map((info) => listed(info, summaries)),
      );
      assert.ok(overStore.every((info) => info.file === "" && info.lastModified > 1e12));
      for (const [offset, limit] of [[0, 2], [1, 1], [2, 5], [3, 1]] as const) {
        assert.deepEqual(
          (await listSessions({ ...stored, offset, limit })).map((s) => s.sessionId),
          (await listSessions({ ...files, offset, limit })).map((s) => s.sessionId),
        );
      }
      assert.deepEqual(await listSessions({ ...stored, projectKey: "elsewhere" }), []);
      assert.deepEqual(
        (await listSessions({ sessionStore: store, projectKey: RECORDED_FOLDER })).length,
        3,
        "projectKey instead of dir",
      );
    });
    for (const name of NAMES) {
      const id = history.ids[name];
      await t.step(`${kind}: ${name}: getSessionInfo() and getSessionMessages()`, async () => {
        const info = await getSessionInfo(id, stored);
        assert.deepEqual(comparable(info), comparable(await getSessionInfo(id, files)));
        assert.equal(info?.fileSize, (await Deno.stat(history.file(name))).size);
        for (const options of [{}, { includeSystemMessages: true }, { offset: 1, limit: 2 }]) {
          assert.deepEqual(
            await getSessionMessages(id, { ...stored, ...options }),
            await getSessionMessages(id, { ...files, ...options }),
          );
        }
      });
    }
    await t.step(`${kind}: an unknown session`, async () => {
      const unknown = crypto.randomUUID();
      assert.equal(await getSessionInfo(unknown, stored), undefined);
      await assert.rejects(
        getSessionMessages(unknown, stored),
        (error: unknown) =>
          isDuplexError(error, "not_found") && /holds no transcript/.test(error.message),
      );
    });
  });
});

Deno.test("history over a store writes what it writes over the CLI's files", async (t) => {
  await withStores(async (history, store, kind) => {
    const files = { configDir: history.configDir, dir: RECORDED_DIR };
    const stored = { sessionStore: store, dir: RECORDED_DIR };
    const id = history.ids.three_turns;
    await t.step(`${kind}: renameSession() and tagSession()`, async () => {
      for (const where of [files, stored]) {
        await renameSession(id, "  A new\ttitle ", where);
        await tagSession(id, "review", where);
      }
      // Over a store the two entries also carry a uuid and a timestamp (the SDK's rule), so
      // the transcript is longer by those fields.
      const sizeless = async (where: object) => {
        const info = comparable(await getSessionInfo(id, where)) as Record<string, unknown>;
        const { fileSize: _size, ...rest } = info;
        return rest;
      };
      assert.deepEqual(await sizeless(stored), await sizeless(files));
      assert.equal((await getSessionInfo(id, stored))?.customTitle, "A new title");
      const last = (await store.load({ projectKey: RECORDED_FOLDER, sessionId: id }))!.slice(-2);
      assert.deepEqual(last.map((e) => [e.type, typeof e.uuid, typeof e.timestamp]), [
        ["custom-title", "string", "string"],
        ["tag", "string", "string"],
      ]);
      for (const where of [files, stored]) await tagSession(id, null, where);
      assert.equal((await getSessionInfo(id, stored))?.tag, undefined);
      await assert.rejects(renameSession(crypto.randomUUID(), "x", stored), /holds no transcript/);
    });
    await t.step(`${kind}: forkSession() up to a message`, async () => {
      const messages = await getSessionMessages(id, files);
      const upTo = messages[3]!.uuid;
      const forks = [
        await forkSession(id, { ...files, upToMessageId: upTo }),
        await forkSession(id, { ...stored, upToMessageId: upTo }),
      ];
      const [overFiles, overStore] = [
        await getSessionMessages(forks[0]!.sessionId, files),
        await getSessionMessages(forks[1]!.sessionId, stored),
      ];
      assert.equal(overStore.length, 4);
      assert.deepEqual(texts(overStore), texts(overFiles));
      assert.deepEqual(shape(overStore), shape(overFiles));
      const info = await getSessionInfo(forks[1]!.sessionId, stored);
      assert.deepEqual(
        { ...comparable(info) as object, sessionId: "" },
        {
          ...comparable(await getSessionInfo(forks[0]!.sessionId, files)) as object,
          sessionId: "",
        },
      );
      assert.equal(info?.forkedFrom, id);
    });
    await t.step(`${kind}: deleteSession()`, async () => {
      const target = history.ids.branched;
      for (const where of [files, stored]) {
        await deleteSession(target, where);
        assert.equal(await getSessionInfo(target, where), undefined);
        await assert.rejects(
          deleteSession(target, where),
          (e: unknown) => isDuplexError(e, "not_found"),
        );
      }
      const originals = async (where: object) => {
        const ids = (await listSessions(where)).map((s) => s.sessionId);
        const infos = await Promise.all(ids.map((id) => getSessionInfo(id, where)));
        return infos.filter((s) => !s?.forkedFrom).map((s) => s!.sessionId).sort();
      };
      assert.deepEqual(await originals(stored), await originals(files));
      assert.equal((await originals(stored)).length, 2);
      const appendOnly: SessionStore = {
        append: store.append.bind(store),
        load: store.load.bind(store),
      };
      await deleteSession(history.ids.compacted, { sessionStore: appendOnly, dir: RECORDED_DIR });
      assert.ok(await getSessionInfo(history.ids.compacted, stored), "no delete method: a no-op");
      await assert.rejects(
        listSessions({ sessionStore: appendOnly, dir: RECORDED_DIR }),
        (e: unknown) => isDuplexError(e, "invalid_argument") && /no listSessions/.test(e.message),
      );
      await assert.rejects(getSessionInfo(target, { sessionStore: {} as SessionStore }), TypeError);
    });
  });
});
