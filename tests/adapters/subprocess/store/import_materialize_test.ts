/**
 * `importSessionToStore` and `materializeSession` on copies of transcripts
 * the real CLI wrote (`tests/fixtures/history/`): imported entries equal the
 * file's lines, batches are bounded, a re-import adds only entries without
 * uuid, subagent transcripts and their sidecars travel, and a materialised
 * session is the CLI's own files again, byte for byte. Bounds and refusals:
 * a store that never answers (`loadTimeoutMs`), an existing transcript,
 * unsafe subpaths, bad arguments.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isDuplexError } from "../../../../src/errors.ts";
import { InMemorySessionStore } from "../../../../src/store/in_memory_session_store.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../../src/store/session_store.ts";
import { DirectorySessionStore } from "../../../../adapters/subprocess/store/directory_session_store.ts";
import { importSessionToStore } from "../../../../adapters/subprocess/store/import_session.ts";
import { materializeSession } from "../../../../adapters/subprocess/store/materialize_session.ts";
import type { SkippedLine } from "../../../../adapters/subprocess/history/history_options.ts";
import { copyHistory, RECORDED_DIR, RECORDED_FOLDER } from "../_history_fixtures.ts";
import { makeTestDir } from "../_helpers.ts";

const NAMES = ["three_turns", "branched", "compacted"] as const;

function lines(text: string): SessionStoreEntry[] {
  return text.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
}

/** A store that counts appends (and their sizes) in front of another. */
function counting(inner: SessionStore): SessionStore & { calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    append: (key, entries) => {
      calls.push(entries.length);
      return inner.append(key, entries);
    },
    load: (key) => inner.load(key),
    listSubkeys: (key) => inner.listSubkeys!(key),
  };
}

/** Adds two subagent transcripts (one nested) and a sidecar to a session's folder. */
async function addSubagents(projectDir: string, id: string): Promise<void> {
  const dir = `${projectDir}/${id}/subagents`;
  await Deno.mkdir(`${dir}/nested`, { recursive: true });
  const line = (uuid: string) =>
    JSON.stringify({
      type: "user",
      uuid,
      isSidechain: true,
      sessionId: id,
      message: { role: "user", content: uuid },
    });
  await Deno.writeTextFile(`${dir}/agent-a1.jsonl`, `${line("sa-1")}\n${line("sa-2")}\n`);
  await Deno.writeTextFile(
    `${dir}/agent-a1.meta.json`,
    JSON.stringify({ toolUseId: "toolu_1", agentType: "x" }),
  );
  await Deno.writeTextFile(`${dir}/nested/agent-b2.jsonl`, `${line("sb-1")}\n`);
  await Deno.writeTextFile(`${dir}/notes.txt`, "not a transcript");
}

Deno.test("importSessionToStore() copies the CLI's transcripts into a store, entry for entry", async (t) => {
  await using history = await copyHistory();
  const root = await makeTestDir();
  try {
    const store = new DirectorySessionStore(`${root}/store`);
    for (const name of NAMES) {
      await t.step(`${name}: the entries are the file's lines`, async () => {
        const result = await importSessionToStore(history.ids[name], store, {
          configDir: history.configDir,
          dir: RECORDED_DIR,
        });
        const key = { projectKey: RECORDED_FOLDER, sessionId: history.ids[name] };
        assert.deepEqual(result.key, key);
        const expected = lines(await Deno.readTextFile(history.file(name)));
        assert.equal(result.entries, expected.length);
        assert.deepEqual(await store.load(key), expected);
      });
    }

    await t.step(
      "batches of batchSize; a re-import adds only the entries without uuid",
      async () => {
        const memory = new InMemorySessionStore();
        const spy = counting(memory);
        const id = history.ids.three_turns;
        const expected = lines(await Deno.readTextFile(history.file("three_turns")));
        await importSessionToStore(id, spy, { configDir: history.configDir, batchSize: 7 });
        assert.deepEqual(spy.calls, [
          ...Array(Math.floor(expected.length / 7)).fill(7),
          ...(expected.length % 7 ? [expected.length % 7] : []),
        ]);
        const key = { projectKey: RECORDED_FOLDER, sessionId: id };
        await importSessionToStore(id, memory, { configDir: history.configDir });
        const noUuid = expected.filter((e) => e.uuid === undefined);
        assert.ok(noUuid.length > 0 && noUuid.length < expected.length);
        assert.equal((await memory.load(key))!.length, expected.length + noUuid.length);
      },
    );

    await t.step("projectKey: the option, else the folder the transcript is in", async () => {
      const memory = new InMemorySessionStore();
      const id = history.ids.branched;
      const found = await importSessionToStore(id, memory, { configDir: history.configDir });
      assert.equal(found.key.projectKey, RECORDED_FOLDER);
      const tenant = await importSessionToStore(id, memory, {
        configDir: history.configDir,
        projectKey: "tenant-7",
      });
      assert.deepEqual(tenant.key, { projectKey: "tenant-7", sessionId: id });
      assert.ok((await memory.load(tenant.key))!.length > 0);
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("importSessionToStore() and materializeSession() carry subagent transcripts and sidecars", async () => {
  await using history = await copyHistory();
  const id = history.ids.three_turns;
  await addSubagents(history.projectDir, id);
  const root = await makeTestDir();
  try {
    const store = new DirectorySessionStore(`${root}/store`);
    const result = await importSessionToStore(id, store, { configDir: history.configDir });
    assert.deepEqual(result.subagents, ["subagents/agent-a1", "subagents/nested/agent-b2"]);
    const key = { projectKey: RECORDED_FOLDER, sessionId: id };
    assert.deepEqual(await store.listSubkeys(key), result.subagents);
    assert.deepEqual(
      (await store.load({ ...key, subpath: "subagents/agent-a1" }))!.map((e) => e.type),
      [
        "user",
        "user",
        "agent_metadata",
      ],
    );
    const none = new InMemorySessionStore();
    assert.deepEqual(
      (await importSessionToStore(id, none, {
        configDir: history.configDir,
        includeSubagents: false,
      }))
        .subagents,
      [],
    );
    assert.deepEqual(await none.listSubkeys(key), []);

    const configDir = `${root}/fresh-config`;
    const written = await materializeSession(store, key, { configDir });
    assert.equal(written.file, `${configDir}/projects/${RECORDED_FOLDER}/${id}.jsonl`);
    assert.deepEqual(written.subagents, result.subagents);
    const original = `${history.projectDir}/${id}`;
    assert.equal(
      await Deno.readTextFile(written.file),
      await Deno.readTextFile(history.file("three_turns")),
    );
    for (const sub of ["agent-a1.jsonl", "nested/agent-b2.jsonl"]) {
      assert.equal(
        await Deno.readTextFile(`${written.projectDir}/${id}/subagents/${sub}`),
        await Deno.readTextFile(`${original}/subagents/${sub}`),
        sub,
      );
    }
    assert.deepEqual(
      JSON.parse(
        await Deno.readTextFile(`${written.projectDir}/${id}/subagents/agent-a1.meta.json`),
      ),
      { toolUseId: "toolu_1", agentType: "x" },
    );
    assert.equal((await Deno.stat(written.file)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("importSessionToStore() skips and reports a torn last line; refuses bad arguments", async () => {
  await using history = await copyHistory();
  const id = history.ids.branched;
  await Deno.writeTextFile(history.file("branched"), '{"type":"user","uuid":"torn', {
    append: true,
  });
  const skipped: SkippedLine[] = [];
  const memory = new InMemorySessionStore();
  const where = { configDir: history.configDir };
  const result = await importSessionToStore(id, memory, {
    ...where,
    onSkip: (s) => skipped.push(s),
  });
  assert.equal(skipped.length, 1);
  assert.equal(skipped[0]!.kind, "invalid_json");
  assert.equal(
    result.entries,
    lines((await Deno.readTextFile(history.file("branched"))).replace(/\n[^\n]*$/, "")).length,
  );
  const invalid = (pattern: RegExp) => (error: unknown) =>
    isDuplexError(error, "invalid_argument") && pattern.test(error.message);
  await assert.rejects(
    importSessionToStore("not-a-uuid", memory, where),
    invalid(/must be a UUID/),
  );
  await assert.rejects(
    importSessionToStore(crypto.randomUUID(), memory, where),
    (error: unknown) =>
      isDuplexError(error, "not_found") && /no transcript of session/.test(error.message),
  );
  await assert.rejects(
    importSessionToStore(id, memory, { ...where, batchSize: 0 }),
    invalid(/batchSize/),
  );
  await assert.rejects(importSessionToStore(id, {} as SessionStore, where), TypeError);
  await assert.rejects(importSessionToStore(id, memory, { ...where, projectKey: "" }), TypeError);
  await assert.rejects(
    importSessionToStore(id, memory, { ...where, signal: AbortSignal.abort(new Error("stop")) }),
    /stop/,
  );
});

Deno.test("materializeSession() is bounded by loadTimeoutMs and refuses what it must not write", async (t) => {
  const root = await makeTestDir();
  const id = crypto.randomUUID();
  const key: SessionKey = { projectKey: "-w", sessionId: id };
  try {
    const store = new InMemorySessionStore();
    await store.append(key, [{ type: "user", uuid: "a" }]);

    await t.step("a load that never settles fails with timeout, naming the option", async () => {
      const hanging: SessionStore = {
        append: () => Promise.resolve(),
        load: () => new Promise(() => {}),
      };
      const started = Date.now();
      await assert.rejects(
        materializeSession(hanging, key, { configDir: `${root}/c1`, loadTimeoutMs: 100 }),
        (error: unknown) =>
          isDuplexError(error, "timeout") &&
          /load\(\).*within 100 ms \(loadTimeoutMs\)/.test(error.message),
      );
      assert.ok(Date.now() - started < 2_000);
      const slowList: SessionStore = {
        ...store,
        load: (k) => store.load(k),
        append: (k, e) => store.append(k, e),
        listSubkeys: () => new Promise(() => {}),
      };
      await assert.rejects(
        materializeSession(slowList, key, { configDir: `${root}/c1`, loadTimeoutMs: 100 }),
        (error: unknown) =>
          isDuplexError(error, "timeout") && /listSubkeys\(\)/.test(error.message),
      );
      await assert.rejects(Deno.stat(`${root}/c1`), Deno.errors.NotFound, "nothing written");
    });

    await t.step("an existing transcript is kept unless replace", async () => {
      const configDir = `${root}/c2`;
      const first = await materializeSession(store, key, { configDir });
      await Deno.writeTextFile(first.file, '{"type":"local"}\n');
      await assert.rejects(
        materializeSession(store, key, { configDir }),
        (error: unknown) =>
          isDuplexError(error, "invalid_argument") && /replace: true/.test(error.message),
      );
      assert.equal(await Deno.readTextFile(first.file), '{"type":"local"}\n');
      await materializeSession(store, key, { configDir, replace: true });
      assert.equal(await Deno.readTextFile(first.file), '{"type":"user","uuid":"a"}\n');
      assert.deepEqual(
        (await Array.fromAsync(Deno.readDir(first.projectDir))).map((e) => e.name),
        [`${id}.jsonl`],
        "no temporary file left",
      );
    });

    await t.step(
      "dir names the project folder; a key that is no folder name needs it",
      async () => {
        const tenant = { projectKey: "tenant/one", sessionId: id };
        await store.append(tenant, [{ type: "user", uuid: "t" }]);
        await assert.rejects(
          materializeSession(store, tenant, { configDir: `${root}/c3` }),
          (error: unknown) =>
            isDuplexError(error, "invalid_argument") && /pass dir/.test(error.message),
        );
        const written = await materializeSession(store, tenant, {
          configDir: `${root}/c3`,
          dir: "/srv/app",
        });
        assert.equal(written.projectDir, `${root}/c3/projects/-srv-app`);
      },
    );

    await t.step("subpaths that could leave the session's folder are not written", async () => {
      const evil: SessionStore = {
        append: () => Promise.resolve(),
        load: (k) =>
          Promise.resolve(k.subpath === undefined ? [{ type: "user" }] : [{ type: "evil" }]),
        listSubkeys: () =>
          Promise.resolve(["../../../../escape", "/abs", "a/./b", "", "subagents/ok"]),
      };
      const written = await materializeSession(evil, key, { configDir: `${root}/c4` });
      assert.deepEqual(written.subagents, ["subagents/ok"]);
      assert.deepEqual(written.unsafeSubpaths, ["../../../../escape", "/abs", "a/./b", ""]);
      await assert.rejects(Deno.stat(`${root}/escape.jsonl`), Deno.errors.NotFound);
    });

    await t.step("a session the store lacks, bad arguments, an aborted signal", async () => {
      const missing = { ...key, sessionId: crypto.randomUUID() };
      await assert.rejects(
        materializeSession(store, missing, { configDir: `${root}/c5` }),
        (error: unknown) =>
          isDuplexError(error, "not_found") && /holds no transcript/.test(error.message),
      );
      await assert.rejects(
        materializeSession(store, { ...key, sessionId: "x" }, { configDir: root }),
        /UUID/,
      );
      await assert.rejects(materializeSession(store, key, { configDir: "" }), TypeError);
      await assert.rejects(
        materializeSession(store, key, { configDir: root, loadTimeoutMs: -1 }),
        RangeError,
      );
      await assert.rejects(
        materializeSession(store, key, {
          configDir: root,
          signal: AbortSignal.abort(new Error("stop")),
        }),
        /stop/,
      );
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
