/**
 * Resuming from a store on a host whose own transcript holds more than the
 * store (its CLI's last appends failed, or another relay fenced it off, or
 * it was killed before they landed): the local file resumes, and the store
 * gets the rest first, so that it holds what the new CLI starts from
 * (found by the fleet soak: the store was no prefix of the CLI's history).
 */

import assert from "node:assert/strict";
import { prepareStoreResume } from "../../../adapters/subprocess/_store_resume.ts";
import { mirrorTargetOf } from "../../../adapters/subprocess/_store_link.ts";
import { projectFolderName } from "../../../adapters/subprocess/history/_paths.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import { makeTestDir } from "./_helpers.ts";

const ID = "5b0a3c8e-2f4d-4e6a-9b1c-7d8e9f0a1b2c";

function entry(uuid: string, parentUuid: string | null, type = "user") {
  return {
    type,
    uuid,
    parentUuid,
    sessionId: ID,
    timestamp: "2026-12-03T10:00:00.000Z",
    message: { role: type === "user" ? "user" : "assistant", content: `${type} ${uuid}` },
  };
}

const LINES = [
  entry("u1", null),
  entry("a1", "u1", "assistant"),
  entry("u2", "a1"),
  entry("a2", "u2", "assistant"),
];

/** Resumes the session from `store` for `cwd`, the host's own folder being `configDir`. */
function resumeFrom(store: InMemorySessionStore, cwd: string, configDir: string, root: string) {
  return prepareStoreResume({
    store,
    sessionId: ID,
    cwd,
    projectKey: "p",
    configDir,
    loadTimeoutMs: 5_000,
    tempDir: root,
  });
}

Deno.test("a host's transcript that holds more than the store resumes, the store caught up first", async (t) => {
  const root = await makeTestDir();
  try {
    const cwd = await Deno.realPath(root);
    const configDir = `${root}/config`;
    const folder = `${configDir}/projects/${projectFolderName(cwd)}`;
    await Deno.mkdir(folder, { recursive: true });
    await Deno.writeTextFile(
      `${folder}/${ID}.jsonl`,
      LINES.map((line) => JSON.stringify(line)).join("\n") + "\n",
    );
    const key = { projectKey: "p", sessionId: ID };
    const resume = (store: InMemorySessionStore) => resumeFrom(store, cwd, configDir, root);
    const uuids = async (store: InMemorySessionStore) =>
      ((await store.load(key)) ?? []).map((line) => line.uuid);

    await t.step(
      "the store behind by a turn: it gets the turn, the local file resumes",
      async () => {
        const store = new InMemorySessionStore();
        await store.append(key, LINES.slice(0, 2));
        assert.equal(await resume(store), undefined, "no private folder: the local file resumes");
        assert.deepEqual(await uuids(store), ["u1", "a1", "u2", "a2"]);
      },
    );

    await t.step(
      "the store without the session: the local file resumes, the store gets it",
      async () => {
        const store = new InMemorySessionStore();
        assert.equal(await resume(store), undefined, "no private folder: the local file resumes");
        assert.deepEqual(await uuids(store), ["u1", "a1", "u2", "a2"]);
      },
    );

    await t.step("the store as the file: nothing appended", async () => {
      const store = new InMemorySessionStore();
      await store.append(key, LINES);
      let appends = 0;
      const append = store.append.bind(store);
      store.append = (k, e) => {
        appends++;
        return append(k, e);
      };
      assert.equal(await resume(store), undefined);
      assert.equal(appends, 0);
    });

    await t.step(
      "the store ahead of the file: the store's transcript resumes, untouched",
      async () => {
        const store = new InMemorySessionStore();
        await store.append(key, [...LINES, entry("u3", "a2")]);
        const made = await resume(store);
        assert.ok(made !== undefined, "a private folder with the stored session");
        await made.remove();
        assert.deepEqual(await uuids(store), ["u1", "a1", "u2", "a2", "u3"]);
      },
    );
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});

Deno.test("a resume from the store whose CLI ends with the store behind: the next resume on the host has its turns", async (t) => {
  const root = await makeTestDir();
  try {
    const cwd = await Deno.realPath(root);
    const configDir = `${root}/config`; // the host's own folder: no transcript of the session
    const key = { projectKey: "p", sessionId: ID };
    const store = new InMemorySessionStore();
    await store.append(key, LINES.slice(0, 2));
    const resume = () => resumeFrom(store, cwd, configDir, root);
    const privateFolder = await resume();
    assert.ok(privateFolder !== undefined, "the store's transcript resumes in a private folder");
    const privateFile = `${privateFolder.path}/projects/${projectFolderName(cwd)}/${ID}.jsonl`;

    await t.step(
      "the CLI's next turn is in its private copy only (its appends failed)",
      async () => {
        await Deno.writeTextFile(
          privateFile,
          LINES.slice(2).map((line) => JSON.stringify(line)).join("\n") + "\n",
          { append: true },
        );
        const target = mirrorTargetOf({ sessionStore: store }, privateFolder.path, privateFolder);
        const kept = await target!.release!(false);
        const home = `${configDir}/projects/${projectFolderName(cwd)}/${ID}.jsonl`;
        assert.equal(kept, home, "the transcript moved to the host's own folder");
        await assert.rejects(Deno.stat(privateFolder.path), Deno.errors.NotFound);
        const moved = (await Deno.readTextFile(home)).trim().split("\n").map((l) => JSON.parse(l));
        assert.deepEqual(moved.map((line) => line.uuid), ["u1", "a1", "u2", "a2"]);
      },
    );

    await t.step("the next resume finds it, and the store gets the turn first", async () => {
      assert.equal(await resume(), undefined, "the host's file resumes");
      const stored = ((await store.load(key)) ?? []).map((line) => line.uuid);
      assert.deepEqual(stored, ["u1", "a1", "u2", "a2"]);
    });

    await t.step("caught up at the end, the private copy goes and nothing moves", async () => {
      const other = await resumeFrom(store, cwd, `${root}/elsewhere`, root);
      assert.ok(other !== undefined);
      const target = mirrorTargetOf({ sessionStore: store }, other.path, other);
      assert.equal(await target!.release!(true), undefined);
      await assert.rejects(Deno.stat(other.path), Deno.errors.NotFound);
      await assert.rejects(Deno.stat(`${root}/elsewhere/projects`), Deno.errors.NotFound);
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
