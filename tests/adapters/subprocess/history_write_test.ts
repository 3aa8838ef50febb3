/**
 * Changing the history: `renameSession` and `tagSession` append one metadata
 * line (never edit what is there), `deleteSession` removes the transcript and
 * its folder, `forkSession` writes a new session with fresh ids and leaves the
 * source as it was. On copies of transcripts the real CLI 2.1.332 wrote.
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
  tagSession,
} from "../../../adapters/subprocess/history/mod.ts";
import { isDuplexError } from "../../../mod.ts";
import { copyHistory, textOf, texts } from "./_history_fixtures.ts";

Deno.test("renameSession() and tagSession() append one metadata line each", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;
  const file = history.file("branched");
  const id = ids.branched;

  await t.step("rename: the old bytes stay, one custom-title line follows", async () => {
    const before = await Deno.readTextFile(file);
    await renameSession(id, "  Fix the\nlogin bug  ", { configDir });
    const after = await Deno.readTextFile(file);
    assert.ok(after.startsWith(before), "nothing before the new line changed");
    assert.deepEqual(JSON.parse(after.slice(before.length)), {
      type: "custom-title",
      customTitle: "Fix the login bug",
      sessionId: id,
    });
    const info = await getSessionInfo(id, { configDir });
    assert.equal(info?.summary, "Fix the login bug");
    assert.equal(info?.customTitle, "Fix the login bug");
  });

  await t.step("the last rename wins", async () => {
    await renameSession(id, "Second name", { configDir });
    assert.equal((await getSessionInfo(id, { configDir }))?.customTitle, "Second name");
  });

  await t.step("tag, then clear it with null (an empty tag line)", async () => {
    await tagSession(id, "needs-review", { configDir });
    assert.equal((await getSessionInfo(id, { configDir }))?.tag, "needs-review");
    const before = await Deno.readTextFile(file);
    await tagSession(id, null, { configDir });
    const after = await Deno.readTextFile(file);
    assert.deepEqual(JSON.parse(after.slice(before.length)), {
      type: "tag",
      tag: "",
      sessionId: id,
    });
    const info = await getSessionInfo(id, { configDir });
    assert.equal(info?.tag, undefined);
    assert.equal(info?.customTitle, "Second name", "the title is not touched");
  });

  await t.step("a file that ends in a cut line gets the entry on a line of its own", async () => {
    await Deno.writeTextFile(file, '{"type":"assistant","uuid":"cut sho', { append: true });
    await tagSession(id, "after-crash", { configDir });
    const lines = (await Deno.readTextFile(file)).trimEnd().split("\n");
    assert.deepEqual(JSON.parse(lines.at(-1)!), { type: "tag", tag: "after-crash", sessionId: id });
    const info = await getSessionInfo(id, { configDir });
    assert.equal(info?.tag, "after-crash");
    assert.equal(info?.skippedLines, 1, "the cut line is skipped, not merged with ours");
  });

  await t.step("the conversation reads the same", async () => {
    assert.deepEqual(texts(await getSessionMessages(id, { configDir })), [
      "user:first prompt",
      "assistant:Echo: first prompt",
      "user:second prompt, second take",
      "assistant:Echo: second prompt, second take",
    ]);
  });
});

Deno.test("deleteSession() removes the transcript and the folder beside it", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids, projectDir } = history;
  const id = ids.three_turns;
  await Deno.mkdir(`${projectDir}/${id}/subagents`, { recursive: true });
  await Deno.writeTextFile(`${projectDir}/${id}/custom-title.json`, '{"customTitle":"x"}');

  await t.step("both are gone, the other sessions stay", async () => {
    await deleteSession(id, { configDir });
    await assert.rejects(Deno.stat(history.file("three_turns")), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(`${projectDir}/${id}`), Deno.errors.NotFound);
    const left = (await listSessions({ configDir })).map((s) => s.sessionId).sort();
    assert.deepEqual(left, [ids.branched, ids.compacted].sort());
  });

  await t.step("a second delete says the session is not there", async () => {
    await assert.rejects(
      deleteSession(id, { configDir }),
      (e) => isDuplexError(e, "not_found") && e.message.includes(id),
    );
  });
});

Deno.test("forkSession() writes a new session up to a message, the source unchanged", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids, projectDir } = history;
  const source = await getSessionMessages(ids.three_turns, { configDir });
  const sourceBytes = await Deno.readFile(history.file("three_turns"));

  await t.step("a whole fork: the same conversation under fresh ids", async () => {
    const { sessionId } = await forkSession(ids.three_turns, { configDir });
    assert.notEqual(sessionId, ids.three_turns);
    const forked = await getSessionMessages(sessionId, { configDir });
    assert.deepEqual(texts(forked), texts(source));
    const sourceIds = new Set(source.map((m) => m.uuid));
    for (const [i, message] of forked.entries()) {
      assert.ok(!sourceIds.has(message.uuid), "every uuid is new");
      assert.equal(message.session_id, sessionId);
      assert.deepEqual(message.entry.forkedFrom, {
        sessionId: ids.three_turns,
        messageUuid: source[i]!.uuid,
      });
    }
    const info = await getSessionInfo(sessionId, { configDir, dir: "/home/user/project" });
    assert.equal(info?.summary, "Renamed by the CLI (fork)");
    assert.equal(info?.forkedFrom, ids.three_turns);
    assert.equal(info?.costUsd, undefined, "the cost is the source's, not copied");
    assert.equal(info?.file, `${projectDir}/${sessionId}.jsonl`);
  });

  await t.step("up to a message: nothing after it, links kept", async () => {
    const toolAnswer = source.find((m) =>
      m.type === "assistant" && textOf(m.message) === "Tool said: hi"
    )!;
    const { sessionId } = await forkSession(ids.three_turns, {
      configDir,
      upToMessageId: toolAnswer.uuid,
      title: "Before the third prompt",
    });
    const forked = await getSessionMessages(sessionId, { configDir });
    assert.deepEqual(texts(forked), texts(source.slice(0, 6)));
    for (const [i, message] of forked.entries()) {
      const parent = message.entry.parentUuid;
      if (i > 0) assert.ok(typeof parent === "string", `message ${i} keeps a parent`);
    }
    assert.equal(
      (await getSessionInfo(sessionId, { configDir }))?.summary,
      "Before the third prompt",
    );
  });

  await t.step("the source is byte for byte as it was", async () => {
    assert.deepEqual(await Deno.readFile(history.file("three_turns")), sourceBytes);
  });

  await t.step("a fork of the branched session follows the branch it was forked on", async () => {
    const branched = await getSessionMessages(ids.branched, { configDir });
    const { sessionId } = await forkSession(ids.branched, { configDir });
    assert.deepEqual(texts(await getSessionMessages(sessionId, { configDir })), texts(branched));
  });

  await t.step(
    "after a compaction the kept messages stay linked; at its summary they go",
    async () => {
      const compacted = await getSessionMessages(ids.compacted, { configDir });
      const whole = await forkSession(ids.compacted, { configDir });
      assert.deepEqual(
        texts(await getSessionMessages(whole.sessionId, { configDir })),
        texts(compacted),
      );
      const summary = compacted.find((m) => m.entry.isCompactSummary === true)!;
      const atSummary = await forkSession(ids.compacted, {
        configDir,
        upToMessageId: summary.uuid,
      });
      const forked = await getSessionMessages(atSummary.sessionId, { configDir });
      assert.equal(forked.length, 1, texts(forked).join("\n"));
      assert.equal(forked[0]?.entry.isCompactSummary, true);
    },
  );

  await t.step("an entry the session does not have is not_found", async () => {
    await assert.rejects(
      forkSession(ids.three_turns, { configDir, upToMessageId: crypto.randomUUID() }),
      (e) => isDuplexError(e, "not_found") && e.message.includes("has no entry"),
    );
    await assert.rejects(
      forkSession(ids.three_turns, { configDir, upToMessageId: 5 as unknown as string }),
      TypeError,
    );
  });
});
