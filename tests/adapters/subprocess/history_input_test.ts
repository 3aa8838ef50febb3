/**
 * Bad input to the history functions: corrupt and cut lines, entries that
 * are not messages, missing files, ids that are not UUIDs or that try to
 * leave the project folder, links, empty and sub-agent files, a parent
 * cycle, bad page bounds, an aborted signal. Each is a typed error or a
 * skipped, counted line; none crashes or hangs.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  deleteSession,
  forkSession,
  getSessionInfo,
  getSessionMessages,
  listSessions,
  renameSession,
  type SkippedLine,
  tagSession,
} from "../../../adapters/subprocess/history/mod.ts";
import { isDuplexError } from "../../../mod.ts";
import { copyHistory, RECORDED_DIR } from "./_history_fixtures.ts";

function line(entry: Record<string, unknown>): string {
  return `${JSON.stringify(entry)}\n`;
}

Deno.test("history functions skip and count lines they cannot use", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;
  const file = history.file("three_turns");
  const before = await getSessionMessages(ids.three_turns, { configDir });

  await t.step("corrupt, non-object and half-written lines are skipped and reported", async () => {
    await Deno.writeTextFile(
      file,
      "{not json\n[1,2]\nplain noise\n" +
        line({ type: "user", uuid: crypto.randomUUID(), parentUuid: before.at(-1)?.uuid }) +
        '{"type":"assistant","uuid":"cut',
      { append: true },
    );
    const skipped: SkippedLine[] = [];
    const messages = await getSessionMessages(ids.three_turns, {
      configDir,
      onSkip: (s) => skipped.push(s),
    });
    assert.deepEqual(
      skipped.map((s) => s.kind).sort(),
      ["invalid_entry", "invalid_json", "invalid_json", "noise", "noise"],
    );
    assert.ok(skipped.every((s) => s.file === file && s.message.length > 0));
    assert.deepEqual(
      messages.map((m) => m.uuid),
      before.map((m) => m.uuid),
      "the broken user entry is the newest leaf's only addition, and it is skipped",
    );
    const info = await getSessionInfo(ids.three_turns, { configDir });
    assert.equal(info?.skippedLines, 4, "the entry without a message is not a bad line there");
  });

  await t.step("a parent cycle ends the walk instead of looping", async () => {
    const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const entry = (uuid: string, parentUuid: string, text: string) =>
      line({
        type: "user",
        uuid,
        parentUuid,
        sessionId: ids.branched,
        message: { role: "user", content: text },
      });
    await Deno.writeTextFile(
      history.file("branched"),
      entry(a, b, "a") + entry(b, a, "b") + entry(c, a, "c"),
      { append: true },
    );
    const messages = await getSessionMessages(ids.branched, { configDir });
    assert.deepEqual(messages.map((m) => m.uuid), [b, a, c]);
  });
});

Deno.test("history functions reject ids that are not UUIDs, and missing sessions", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;
  const calls = {
    getSessionInfo: (id: string) => getSessionInfo(id, { configDir }),
    getSessionMessages: (id: string) => getSessionMessages(id, { configDir }),
    renameSession: (id: string) => renameSession(id, "x", { configDir }),
    tagSession: (id: string) => tagSession(id, "x", { configDir }),
    deleteSession: (id: string) => deleteSession(id, { configDir }),
    forkSession: (id: string) => forkSession(id, { configDir }),
  };
  await Deno.writeTextFile(`${configDir}/secret.jsonl`, line({ type: "user" }));

  for (const [name, call] of Object.entries(calls)) {
    await t.step(`${name}() refuses a path-escaping or malformed id`, async () => {
      for (const id of ["../../secret", `${ids.branched}/../x`, "", "not-a-uuid"]) {
        await assert.rejects(call(id), (e) => isDuplexError(e, "invalid_argument"));
      }
      await assert.rejects(call(42 as unknown as string), TypeError);
    });
  }

  for (
    const name of [
      "getSessionMessages",
      "renameSession",
      "tagSession",
      "deleteSession",
      "forkSession",
    ] as const
  ) {
    await t.step(
      `${name}() on an unknown session is not_found naming the folder`,
      async () => {
        await assert.rejects(
          calls[name](crypto.randomUUID()),
          (e) => isDuplexError(e, "not_found") && e.message.includes("no transcript of session"),
        );
      },
    );
  }

  await t.step("a session in another project folder is not found with dir", async () => {
    await assert.rejects(
      getSessionMessages(ids.branched, { configDir, dir: "/another/project" }),
      (e) => isDuplexError(e, "not_found") && e.message.includes("/another/project"),
    );
  });
});

Deno.test("listSessions() leaves out what is not a session's transcript", async (t) => {
  await using history = await copyHistory();
  const { configDir, projectDir } = history;
  const listed = async () => (await listSessions({ configDir, dir: RECORDED_DIR })).length;

  await t.step("an empty file, another name, a folder", async () => {
    await Deno.writeTextFile(`${projectDir}/${crypto.randomUUID()}.jsonl`, "");
    await Deno.copyFile(history.file("branched"), `${projectDir}/notes.jsonl`);
    await Deno.mkdir(`${projectDir}/${crypto.randomUUID()}.jsonl`);
    assert.equal(await listed(), 3);
  });

  await t.step("a sub-agent's transcript and a file without any prompt", async () => {
    const sidechain = crypto.randomUUID();
    await Deno.writeTextFile(
      `${projectDir}/${sidechain}.jsonl`,
      line({
        type: "user",
        uuid: crypto.randomUUID(),
        isSidechain: true,
        message: { role: "user", content: "sub" },
      }),
    );
    const noPrompt = crypto.randomUUID();
    await Deno.writeTextFile(`${projectDir}/${noPrompt}.jsonl`, line({ type: "mode", mode: "x" }));
    assert.equal(await listed(), 3);
    assert.equal(await getSessionInfo(sidechain, { configDir }), undefined);
    assert.equal(await getSessionInfo(noPrompt, { configDir }), undefined);
  });
});

Deno.test("history options are checked before anything is read", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;

  await t.step("limit and offset: whole numbers of at least 0", async () => {
    for (const bad of [-1, 1.5, NaN]) {
      await assert.rejects(
        listSessions({ configDir, limit: bad }),
        (e) => isDuplexError(e, "invalid_argument") && e.message.includes("limit"),
      );
      await assert.rejects(
        getSessionMessages(ids.branched, { configDir, offset: bad }),
        (e) => isDuplexError(e, "invalid_argument") && e.message.includes("offset"),
      );
    }
    await assert.rejects(listSessions({ configDir, limit: "2" as unknown as number }), TypeError);
  });

  await t.step("dir and configDir: non-empty strings", async () => {
    await assert.rejects(listSessions({ configDir, dir: "" }), TypeError);
    await assert.rejects(listSessions({ configDir: 7 as unknown as string }), TypeError);
  });

  await t.step("titles and tags: strings with something visible", async () => {
    for (const bad of ["", "   ", "\u0000\u200b\n"]) {
      await assert.rejects(
        renameSession(ids.branched, bad, { configDir }),
        (e) => isDuplexError(e, "invalid_argument") && e.message.includes("title is empty"),
      );
      await assert.rejects(
        tagSession(ids.branched, bad, { configDir }),
        (e) => isDuplexError(e, "invalid_argument") && e.message.includes("null to clear"),
      );
    }
    await assert.rejects(
      renameSession(ids.branched, 3 as unknown as string, { configDir }),
      TypeError,
    );
  });

  await t.step("an aborted signal rejects with its reason, and nothing is written", async () => {
    const size = (await Deno.stat(history.file("branched"))).size;
    const signal = AbortSignal.abort(new Error("stop"));
    for (
      const call of [
        () => listSessions({ configDir, signal }),
        () => getSessionMessages(ids.branched, { configDir, signal }),
        () => getSessionInfo(ids.branched, { configDir, signal }),
        () => renameSession(ids.branched, "t", { configDir, signal }),
        () => tagSession(ids.branched, "t", { configDir, signal }),
        () => forkSession(ids.branched, { configDir, signal }),
        () => deleteSession(ids.branched, { configDir, signal }),
      ]
    ) {
      await assert.rejects(call(), (e) => e instanceof Error && e.message === "stop");
    }
    assert.equal((await Deno.stat(history.file("branched"))).size, size);
    assert.equal((await listSessions({ configDir })).length, 3);
  });
});

let shared: Awaited<ReturnType<typeof copyHistory>> | undefined;

Deno.test("(setup) a copied history for the permission tests", async () => {
  shared = await copyHistory();
});

Deno.test({
  name: "history functions name the flag when Deno may not read, write or see the environment",
  permissions: {
    read: [decodeURIComponent(new URL("../../..", import.meta.url).pathname)],
    write: false,
    env: false,
  },
  async fn(t) {
    const { configDir, ids } = shared!;
    await t.step(
      "no --allow-env and no configDir: not_permitted naming the variables",
      async () => {
        await assert.rejects(listSessions(), (e) =>
          isDuplexError(e, "not_permitted") &&
          e.message.includes("--allow-env=CLAUDE_CONFIG_DIR,HOME"));
      },
    );
    await t.step(
      "no --allow-write: not_permitted naming the transcript, which is unchanged",
      async () => {
        const file = shared!.file("branched");
        const before = await Deno.readTextFile(file);
        for (
          const call of [
            () => renameSession(ids.branched, "x", { configDir }),
            () => tagSession(ids.branched, "x", { configDir }),
            () => deleteSession(ids.branched, { configDir }),
            () => forkSession(ids.branched, { configDir }),
          ]
        ) {
          await assert.rejects(
            call(),
            (e) => isDuplexError(e, "not_permitted") && e.message.includes(`--allow-write=`),
          );
        }
        assert.equal(await Deno.readTextFile(file), before);
      },
    );
  },
});

Deno.test({
  name: "history functions name the flag when Deno may not read the folder",
  permissions: { read: false, env: false },
  async fn() {
    const { configDir, ids } = shared!;
    await assert.rejects(
      listSessions({ configDir }),
      (e) =>
        isDuplexError(e, "not_permitted") &&
        e.message.includes(`--allow-read=${configDir}/projects`),
    );
    await assert.rejects(
      getSessionMessages(ids.branched, { configDir, dir: RECORDED_DIR }),
      (e) => isDuplexError(e, "not_permitted") && e.message.includes("--allow-read="),
    );
  },
});

Deno.test("(teardown) the copied history is removed", async () => {
  await shared?.[Symbol.asyncDispose]();
});
