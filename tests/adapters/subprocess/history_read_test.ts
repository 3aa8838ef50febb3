/**
 * Reading the history: `listSessions`, `getSessionInfo` and
 * `getSessionMessages` on copies of transcripts the real CLI 2.1.332 wrote
 * (three turns with a Bash tool and a CLI-side rename; a branch made with
 * `--resume-session-at`; a `/compact` between turns).
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  getSessionInfo,
  getSessionMessages,
  listSessions,
} from "../../../adapters/subprocess/history/mod.ts";
import { importSessionToStore } from "../../../adapters/subprocess/store/import_session.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import { copyHistory, RECORDED_DIR, texts } from "./_history_fixtures.ts";

Deno.test("listSessions() lists a folder's sessions newest first, a page at a time", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;

  await t.step("every session of the folder, sorted by modification time", async () => {
    const all = await listSessions({ configDir, dir: RECORDED_DIR });
    assert.deepEqual(all.map((s) => s.sessionId), [ids.compacted, ids.branched, ids.three_turns]);
    assert.ok(all[0]!.lastModified > all[1]!.lastModified);
  });

  await t.step("what each row shows: title, prompts, branch, cwd, cost, times", async () => {
    const [compacted, branched, three] = await listSessions({ configDir, dir: RECORDED_DIR });
    assert.equal(three?.summary, "Renamed by the CLI", "the CLI's own rename is the title");
    assert.equal(three?.customTitle, "Renamed by the CLI");
    assert.equal(three?.firstPrompt, "Hello history");
    assert.equal(three?.lastPrompt, "third prompt");
    assert.equal(three?.cwd, RECORDED_DIR);
    assert.equal(three?.gitBranch, "HEAD");
    assert.equal(three?.tag, undefined);
    assert.ok(three?.costUsd !== undefined && three.costUsd > 0 && three.costUsd < 0.01);
    assert.equal(three?.skippedLines, 0);
    assert.equal(three?.fileSize, (await Deno.stat(history.file("three_turns"))).size);
    assert.ok(three?.createdAt !== undefined && three.createdAt < Date.now());
    assert.equal(branched?.summary, "second prompt, second take", "no title: the last prompt");
    assert.equal(branched?.firstPrompt, "first prompt");
    assert.equal(compacted?.firstPrompt, "before compact one");
    assert.equal(compacted?.file, history.file("compacted"));
  });

  await t.step("limit and offset take pages of the sorted list", async () => {
    const page = (offset: number, limit: number) =>
      listSessions({ configDir, dir: RECORDED_DIR, offset, limit }).then((s) =>
        s.map((x) => x.sessionId)
      );
    assert.deepEqual(await page(0, 2), [ids.compacted, ids.branched]);
    assert.deepEqual(await page(2, 2), [ids.three_turns]);
    assert.deepEqual(await page(3, 2), []);
    assert.deepEqual(await page(1, 0), []);
  });

  await t.step("no dir: every project folder; another folder: none", async () => {
    assert.equal((await listSessions({ configDir })).length, 3);
    assert.deepEqual(await listSessions({ configDir, dir: "/somewhere/else" }), []);
    assert.deepEqual(await listSessions({ configDir: `${configDir}/missing` }), []);
  });
});

Deno.test("listSessions() over a store keeps the store's order among sessions of one mtime", async () => {
  await using history = await copyHistory();
  const { configDir, ids } = history;
  const inner = new InMemorySessionStore();
  for (const id of Object.values(ids)) {
    await importSessionToStore(id, inner, { configDir, dir: RECORDED_DIR });
  }
  // A store that stamped the three in one millisecond and lists them in its append order,
  // which is not the order of their ids (neither way).
  const [a, b, c] = Object.values(ids).sort();
  const order = [b!, c!, a!];
  const store: SessionStore = {
    append: (key, entries) => inner.append(key, entries),
    load: (key) => inner.load(key),
    listSessions: () =>
      Promise.resolve(order.map((sessionId) => ({ sessionId, mtime: 1_800_000_000_000 }))),
  };
  const listed = await listSessions({ sessionStore: store, dir: RECORDED_DIR });
  assert.deepEqual(listed.map((s) => s.sessionId), order, "as the store listed them");
  const paged = await listSessions({ sessionStore: store, dir: RECORDED_DIR, offset: 1, limit: 1 });
  assert.deepEqual(paged.map((s) => s.sessionId), [c]);
  // Differing mtimes still go newest first, whatever the store's order.
  const reversed: SessionStore = {
    ...store,
    listSessions: () =>
      Promise.resolve(order.map((sessionId, i) => ({ sessionId, mtime: 1_800_000_000_000 + i }))),
  };
  assert.deepEqual(
    (await listSessions({ sessionStore: reversed, dir: RECORDED_DIR })).map((s) => s.sessionId),
    [...order].reverse(),
  );
});

Deno.test("getSessionMessages() follows the parent chain to the newest leaf", async (t) => {
  await using history = await copyHistory();
  const { configDir, ids } = history;
  const read = (id: string, more = {}) => getSessionMessages(id, { configDir, ...more });

  await t.step("user and assistant messages in order, tool use and result included", async () => {
    const messages = await read(ids.three_turns, { dir: RECORDED_DIR });
    assert.deepEqual(texts(messages), [
      "user:Hello history",
      "assistant:Echo: Hello history",
      "user:[[tool:bash:echo hi]]",
      "assistant:tool:Bash",
      "user:result:hi",
      "assistant:Tool said: hi",
      "user:third prompt",
      "assistant:Echo: third prompt",
    ]);
    for (const message of messages) {
      assert.equal(message.session_id, ids.three_turns);
      assert.equal(message.parent_tool_use_id, null);
      assert.equal(message.entry.uuid, message.uuid);
      assert.ok(message.timestamp);
    }
    const answer = messages[1]!;
    assert.ok(answer.type === "assistant" && answer.message.model === "claude-opus-5-5");
  });

  await t.step("a rewound branch is left out: the newest leaf's path only", async () => {
    assert.deepEqual(texts(await read(ids.branched)), [
      "user:first prompt",
      "assistant:Echo: first prompt",
      "user:second prompt, second take",
      "assistant:Echo: second prompt, second take",
    ]);
  });

  await t.step("after a compaction: its summary, then the messages it kept", async () => {
    const messages = await read(ids.compacted);
    const expected = [
      "user:This session is being continued",
      "assistant:Echo: before compact two",
      "user:<command-name>/compact",
      "user:<local-command-stdout>Compacted",
      "user:after compact",
      "assistant:Echo: after compact",
    ];
    const got = texts(messages);
    assert.equal(got.length, expected.length, got.join("\n"));
    got.forEach((text, i) => assert.ok(text.startsWith(expected[i]!), `${i}: ${text}`));
    assert.equal(messages[0]?.entry.isCompactSummary, true);
    const withSystem = await read(ids.compacted, { includeSystemMessages: true });
    assert.equal(withSystem.length, messages.length + 1);
    const boundary = withSystem[0];
    assert.ok(boundary?.type === "system" && boundary.subtype === "compact_boundary");
    assert.equal(boundary.content, "Conversation compacted");
  });

  await t.step("limit and offset slice the messages", async () => {
    const all = await read(ids.three_turns);
    assert.deepEqual(await read(ids.three_turns, { offset: 2, limit: 3 }), all.slice(2, 5));
    assert.deepEqual(await read(ids.three_turns, { offset: 7 }), all.slice(7));
  });

  await t.step("getSessionInfo() reads one session; an unknown one is undefined", async () => {
    const info = await getSessionInfo(ids.branched, { configDir, dir: RECORDED_DIR });
    assert.equal(info?.sessionId, ids.branched);
    assert.equal(info?.summary, "second prompt, second take");
    const listed = await listSessions({ configDir });
    assert.deepEqual(info, listed.find((s) => s.sessionId === ids.branched));
    assert.equal(await getSessionInfo(crypto.randomUUID(), { configDir }), undefined);
    assert.equal(
      await getSessionInfo(ids.branched.toUpperCase(), { configDir }).then((i) => i?.sessionId),
      ids.branched,
    );
  });
});

Deno.test("history functions find the configuration folder from CLAUDE_CONFIG_DIR", async () => {
  await using history = await copyHistory();
  const before = Deno.env.get("CLAUDE_CONFIG_DIR");
  Deno.env.set("CLAUDE_CONFIG_DIR", history.configDir);
  try {
    const sessions = await listSessions({ dir: RECORDED_DIR });
    assert.equal(sessions.length, 3);
  } finally {
    if (before === undefined) Deno.env.delete("CLAUDE_CONFIG_DIR");
    else Deno.env.set("CLAUDE_CONFIG_DIR", before);
  }
});
