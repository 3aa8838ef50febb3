/**
 * A session of the real CLI 2.1.332 kept in a `DirectorySessionStore` and
 * continued from it alone: the CLI writes a conversation, it is imported
 * into the store (the history functions read the same over the store as
 * over the files), the local files are deleted, the store's copy is
 * materialised into a fresh config folder, and `subprocess({ resume, env:
 * { CLAUDE_CONFIG_DIR } })` continues it: the fake API's request carries
 * the history. A second import adds only what the resumed process wrote.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import {
  deleteSession,
  getSessionInfo,
  getSessionMessages,
} from "../../adapters/subprocess/history/mod.ts";
import { DirectorySessionStore } from "../../adapters/subprocess/store/directory_session_store.ts";
import { importSessionToStore } from "../../adapters/subprocess/store/import_session.ts";
import { materializeSession } from "../../adapters/subprocess/store/materialize_session.ts";
import { projectKeyOf } from "../../src/store/project_key.ts";
import { e2eTest, exists, sandboxedCli, withSandbox } from "./_harness.ts";
import { sentToModel } from "./fake_api.ts";

const TURN = { timeoutMs: 30_000 } as const;

e2eTest(
  "store: a real CLI session imported, deleted locally, materialised and resumed",
  async (t, cli) => {
    await withSandbox(async (box) => {
      const configDir = `${box.home}/.claude`;
      const where = { configDir, dir: box.work };
      const store = new DirectorySessionStore(`${box.root}/store`);
      const projectKey = projectKeyOf(await Deno.realPath(box.work));
      let sessionId = "";
      await t.step("the CLI writes a conversation; it is imported into the store", async () => {
        await using session = await DuplexSession.start({ transport: sandboxedCli(cli, box) });
        for (const prompt of ["Remember the word heron.", "And the word kestrel."]) {
          const turn = await session.send(prompt, TURN);
          assert.equal(turn.result.isError, false, turn.result.text);
        }
        sessionId = session.sessionId!;
        await session.close();
        const { key, entries } = await importSessionToStore(sessionId, store, where);
        assert.deepEqual(key, { projectKey, sessionId });
        assert.ok(entries > 4, `${entries} entries`);
        const stored = { sessionStore: store, dir: box.work };
        assert.deepEqual(
          await getSessionMessages(sessionId, stored),
          await getSessionMessages(sessionId, where),
        );
        const [overStore, overFiles] = [
          await getSessionInfo(sessionId, stored),
          await getSessionInfo(sessionId, where),
        ];
        assert.deepEqual(
          { ...overStore, file: "", lastModified: 0 },
          { ...overFiles, file: "", lastModified: 0 },
          "the same info over the store as over the CLI's file",
        );
      });

      const fresh = `${box.root}/fresh-config`;
      await t.step(
        "the local files go; the store's copy becomes the CLI's files again",
        async () => {
          const file = (await getSessionInfo(sessionId, where))!.file;
          await deleteSession(sessionId, where);
          assert.equal(await exists(file), false);
          const key = { projectKey, sessionId };
          const written = await materializeSession(store, key, { configDir: fresh, dir: box.work });
          assert.equal(written.file, `${fresh}/projects/${key.projectKey}/${sessionId}.jsonl`);
          assert.deepEqual(
            (await Deno.readTextFile(written.file)).trimEnd().split("\n").map((line) =>
              JSON.parse(line)
            ),
            await store.load(key),
          );
        },
      );

      await t.step("without the materialised files, the same resume has no history", async () => {
        const empty = `${box.root}/empty-config`;
        await Deno.mkdir(empty);
        const env = { ...box.env, CLAUDE_CONFIG_DIR: empty };
        const from = box.api.messageRequests.length;
        try {
          await using session = await DuplexSession.start({
            transport: sandboxedCli(cli, { work: box.work, env }, { resume: sessionId }),
          });
          await session.send("Which birds did I name?", TURN);
        } catch {
          // The CLI may refuse the unknown session: then the model sees nothing at all.
        }
        assert.doesNotMatch(sentToModel(box.api, from), /heron|kestrel/);
      });

      await t.step(
        "the CLI resumes it from the fresh folder: the model sees the history",
        async () => {
          const from = box.api.messageRequests.length;
          await using session = await DuplexSession.start({
            transport: sandboxedCli(cli, {
              work: box.work,
              env: { ...box.env, CLAUDE_CONFIG_DIR: fresh },
            }, {
              resume: sessionId,
            }),
          });
          const turn = await session.send("Which birds did I name?", TURN);
          assert.equal(turn.result.isError, false, turn.result.text);
          assert.equal(session.sessionId, sessionId, "the same session continues");
          await session.close();
          const sent = sentToModel(box.api, from);
          assert.match(sent, /heron/, "the first turn reached the model");
          assert.match(sent, /kestrel/, "the second turn reached the model");
          assert.equal(
            await getSessionInfo(sessionId, where),
            undefined,
            "the CLI wrote to the fresh folder, not the old one",
          );
        },
      );

      await t.step("importing the resumed session again adds only the new entries", async () => {
        const key = { projectKey, sessionId };
        const before = (await store.load(key))!;
        await importSessionToStore(sessionId, store, { configDir: fresh, dir: box.work });
        const after = (await store.load(key))!;
        const uuids = after.flatMap((entry) => entry.uuid === undefined ? [] : [entry.uuid]);
        assert.equal(new Set(uuids).size, uuids.length, "no entry twice");
        assert.ok(after.length > before.length, "the resumed turn was added");
        assert.deepEqual(after.slice(0, before.length), before, "what was stored stays first");
        const texts = (await getSessionMessages(sessionId, { sessionStore: store, dir: box.work }))
          .filter((m) => m.type === "user").map((m) => JSON.stringify(m.message.content));
        assert.equal(texts.length, 3);
        assert.match(texts[2]!, /Which birds/);
      });
    });
  },
);
