/**
 * `foldSessionSummary` folds as the official SDK's does (its own function
 * runs beside it in `sdk_parity_test.ts`), and the in-memory and directory
 * stores keep summaries by it (`_summary_contract.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { foldSessionSummary } from "../../src/store/session_summary.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import { DirectorySessionStore } from "../../adapters/subprocess/store/directory_session_store.ts";
import { makeTestDir } from "../adapters/subprocess/_helpers.ts";
import { assertFolded, summaryContract } from "./_summary_contract.ts";

const KEY = { projectKey: "-p", sessionId: "s" };

Deno.test({
  name: "foldSessionSummary() keeps set-once fields, takes the last of the others",
  permissions: "none",
  fn() {
    const first = foldSessionSummary(undefined, KEY, [
      { type: "queue-operation", timestamp: "not a time" },
      { type: "user", cwd: "/a", timestamp: "2026-01-01T00:00:00.000Z", message: { content: "" } },
      { type: "user", message: { content: "<command-name>/init</command-name>" } },
      { type: "user", message: { content: [{ type: "tool_result", content: "x" }] } },
      { type: "user", isMeta: true, message: { content: "meta, not typed" } },
      { type: "user", message: { content: "<system-reminder>x</system-reminder>" } },
    ], { mtime: 7 });
    assert.deepEqual(first, {
      sessionId: "s",
      mtime: 7,
      data: {
        isSidechain: false,
        createdAt: Date.parse("2026-01-01T00:00:00.000Z"),
        cwd: "/a",
        commandFallback: "/init",
      },
    });
    const long = "é".repeat(250);
    const second = foldSessionSummary(first, KEY, [
      { type: "user", cwd: "/b", message: { content: [{ type: "text", text: `  ${long}\n` }] } },
      { type: "user", message: { content: "later prompt" } },
      { type: "summary", summary: "hint", gitBranch: "main" },
      { type: "ai-title", aiTitle: "AI" },
      { type: "tag", tag: "t" },
      { type: "relocated", relocatedCwd: "/moved" },
    ]);
    assert.equal(second.mtime, 7, "without options.mtime, prev's is kept");
    assert.equal(second.data.firstPrompt, `${"é".repeat(200)}…`);
    assert.equal(second.data.firstPromptLocked, true);
    assert.equal(second.data.cwd, "/moved");
    assert.equal(second.data.summaryHint, "hint");
    assert.equal(second.data.gitBranch, "main");
    assert.equal(second.data.aiTitle, "AI");
    assert.equal(second.data.tag, "t");
    assert.equal("tag" in first.data, false, "prev is not changed");
    const pasted = foldSessionSummary(undefined, KEY, [{
      type: "user",
      message: {
        content: 'see\n\n<pasted_content id="0a1f">\nbody\n</pasted_content id="0a1f">\n\nend',
      },
    }, { type: "user", message: { content: "<bash-input> ls </bash-input>" } }]);
    assert.equal(pasted.data.firstPrompt, "seebodyend", "pasted sections unfolded");
    const bash = foldSessionSummary(undefined, KEY, [
      { type: "user", message: { content: "<bash-input> ls -l </bash-input>" } },
    ]);
    assert.equal(bash.data.firstPrompt, "! ls -l");
    const sidechain = foldSessionSummary(undefined, KEY, [{ type: "user", isSidechain: true }]);
    assert.equal(sidechain.data.isSidechain, true);
    assert.equal(sidechain.mtime, 0);
  },
});

Deno.test("InMemorySessionStore keeps session summaries", async (t) => {
  await summaryContract(t, () => new InMemorySessionStore());
});

Deno.test("DirectorySessionStore keeps session summaries, across objects and crashes", async (t) => {
  const root = await makeTestDir();
  let n = 0;
  try {
    await summaryContract(t, () => new DirectorySessionStore(`${root}/s${++n}`));
    await t.step(
      "a missing, torn or stale summary is folded again from the transcript",
      async () => {
        const dir = `${root}/repair`;
        const key = { projectKey: "-p", sessionId: "s" };
        const one = new DirectorySessionStore(dir);
        await one.append(key, [{ type: "user", uuid: "u1", message: { content: "first" } }]);
        const file = `${dir}/-p/s.summary.json`;
        await Deno.remove(file); // a transcript of an earlier version
        await one.append(key, [{ type: "user", uuid: "u2", message: { content: "second" } }]);
        await assertFolded(one, "-p");
        await Deno.writeTextFile(file, '{"sessionId":"s","mti'); // torn by a crash
        await new DirectorySessionStore(dir).append(key, [{ type: "tag", tag: "x" }]);
        await assertFolded(one, "-p");
        const stale = await Deno.readTextFile(file);
        await one.append(key, [{ type: "tag", tag: "y" }]);
        await Deno.writeTextFile(file, stale); // the transcript moved on without it
        await one.append(key, [{ type: "custom-title", customTitle: "z" }]);
        await assertFolded(one, "-p");
        const [summary] = await one.listSessionSummaries("-p");
        assert.equal(summary?.data.firstPrompt, "first");
        assert.equal(summary?.data.tag, "y");
      },
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
