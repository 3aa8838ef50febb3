/**
 * What a store that keeps session summaries promises (used by the tests of
 * the in-memory, directory and PostgreSQL stores): `listSessionSummaries`
 * gives one summary per main transcript, equal to `foldSessionSummary` of
 * what `load` returns, at the mtime `listSessions` gives; retried entries
 * (a uuid stored once) fold once; concurrent appends to one session lose
 * nothing; subkeys make none; `delete` removes it.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { foldSessionSummary } from "../../src/store/session_summary.ts";

/** The steps' context: `Deno.TestContext` or anything with `step`. */
export interface StepContext {
  step(name: string, fn: () => Promise<void>): Promise<boolean>;
}

const PROJECT = "-srv-summaries";

function prompt(i: number, extra: Record<string, unknown> = {}): SessionStoreEntry {
  return {
    type: "user",
    uuid: `u-${i}`,
    parentUuid: i ? `a-${i - 1}` : null,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    cwd: "/srv/app",
    gitBranch: `branch-${i}`,
    message: { role: "user", content: `question ${i}` },
    ...extra,
  };
}

function answer(i: number): SessionStoreEntry {
  return {
    type: "assistant",
    uuid: `a-${i}`,
    parentUuid: `u-${i}`,
    message: { role: "assistant", content: [{ type: "text", text: `answer ${i}` }] },
  };
}

/** Asserts that each listed session's summary is the fold of its transcript at its mtime. */
export async function assertFolded(store: SessionStore, projectKey: string): Promise<void> {
  const refs = await store.listSessions!(projectKey);
  const summaries = await store.listSessionSummaries!(projectKey);
  assert.deepEqual(
    summaries.map((s) => s.sessionId).sort(),
    refs.map((r) => r.sessionId).sort(),
    "one summary per main transcript",
  );
  for (const ref of refs) {
    const key = { projectKey, sessionId: ref.sessionId };
    const summary = summaries.find((s) => s.sessionId === ref.sessionId)!;
    assert.equal(summary.mtime, ref.mtime, `${ref.sessionId}: the summary's mtime is listed`);
    const entries = (await store.load(key)) ?? [];
    assert.deepEqual(summary, foldSessionSummary(undefined, key, entries, { mtime: ref.mtime }));
  }
}

/**
 * Registers the summary steps for a store.
 *
 * @param t The test context.
 * @param make A fresh, empty store for each step.
 */
export async function summaryContract(
  t: StepContext,
  make: () => SessionStore | Promise<SessionStore>,
): Promise<void> {
  await t.step("summaries: the fold of each transcript, at its listed mtime", async () => {
    const store = await make();
    const a: SessionKey = { projectKey: PROJECT, sessionId: "a" };
    const b: SessionKey = { projectKey: PROJECT, sessionId: "b" };
    await store.append(a, [prompt(0), answer(0)]);
    await store.append(b, [
      prompt(0, { message: { content: "<command-name>/init</command-name>" } }),
    ]);
    await store.append(a, [{ type: "custom-title", customTitle: "First title" }, prompt(1)]);
    await store.append(a, [answer(1), { type: "tag", tag: "x" }, { type: "tag", tag: "" }]);
    await store.append(a, [prompt(1), answer(1)]); // a retry: stored (and folded) once
    await store.append({ ...a, subpath: "subagents/agent-x" }, [prompt(9, { isSidechain: true })]);
    await store.append({ projectKey: PROJECT, sessionId: "c", subpath: "subagents/agent-y" }, [
      prompt(3),
    ]);
    await assertFolded(store, PROJECT);
    const [summary] = (await store.listSessionSummaries!(PROJECT)).filter((s) =>
      s.sessionId === "a"
    );
    assert.equal(summary?.data.firstPrompt, "question 0");
    assert.equal(summary?.data.customTitle, "First title");
    assert.equal(summary?.data.gitBranch, "branch-1");
    assert.equal("tag" in (summary?.data ?? {}), false, "an empty tag clears it");
    assert.deepEqual(await store.listSessionSummaries!("-elsewhere"), []);
  });

  await t.step("summaries: concurrent appends to one session lose nothing", async () => {
    const store = await make();
    const key = { projectKey: PROJECT, sessionId: "busy" };
    await Promise.all(
      Array.from(
        { length: 12 },
        (_, i) => store.append(key, [prompt(i, { lastPrompt: `p${i}` }), answer(i)]),
      ),
    );
    await assertFolded(store, PROJECT);
  });

  await t.step("summaries: delete removes a session's summary", async () => {
    const store = await make();
    const key = { projectKey: PROJECT, sessionId: "gone" };
    await store.append(key, [prompt(0)]);
    await store.append({ ...key, sessionId: "kept" }, [prompt(1)]);
    await store.delete!(key);
    assert.deepEqual((await store.listSessionSummaries!(PROJECT)).map((s) => s.sessionId), [
      "kept",
    ]);
    await store.append(key, [prompt(5)]);
    await assertFolded(store, PROJECT);
    const again = (await store.listSessionSummaries!(PROJECT)).find((s) => s.sessionId === "gone");
    assert.equal(again?.data.firstPrompt, "question 5", "a new transcript, a new summary");
  });
}
