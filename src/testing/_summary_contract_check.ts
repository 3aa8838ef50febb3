// This module is browser compatible.
/* The `summaries` contract of the session store conformance suite: what
 * `listSessionSummaries` (the SDK's alpha method) gives back is the fold of
 * every main transcript's stored entries, one summary per session. */

import { jsonEqual } from "../_values.ts";
import { show } from "./_conformance_assert.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../store/session_store.ts";
import { foldSessionSummary } from "../store/session_summary.ts";
import type { StoreCheck } from "./_store_contract_checks.ts";

const PROJECT = "conformance-summaries";
const A: SessionKey = { projectKey: PROJECT, sessionId: "session-a" };
const B: SessionKey = { projectKey: PROJECT, sessionId: "session-b" };

function user(uuid: string, text: string, at: string): SessionStoreEntry {
  return {
    type: "user",
    uuid,
    timestamp: at,
    cwd: "/work/project",
    sessionId: "x",
    message: { role: "user", content: text },
  };
}

/* Two batches for A (a title and a tag in the second), one for B, one for A's subagent. */
const A1 = [
  user("a1", "first question", "2026-01-01T00:00:00.000Z"),
  { type: "assistant", uuid: "a2", timestamp: "2026-01-01T00:00:01.000Z", message: {} },
];
const A2 = [
  user("a3", "second question", "2026-01-01T00:01:00.000Z"),
  { type: "custom-title", customTitle: "Named", sessionId: "session-a" },
  { type: "tag", tag: "urgent", sessionId: "session-a" },
];
const B1 = [user("b1", "another session", "2026-01-02T00:00:00.000Z")];
const SUB = [user("s1", "a subagent's prompt", "2026-01-01T00:00:30.000Z")];

/** `listSessionSummaries` is the fold of each main transcript; subkeys and other projects add none. */
export const checkSummaries: StoreCheck = async (fresh) => {
  const store = await fresh();
  const list = store.listSessionSummaries!.bind(store);
  same(await list(PROJECT), [], "listSessionSummaries of a project never written");
  await store.append(A, A1);
  await store.append({ ...A, subpath: "subagents/agent-1" }, SUB);
  await store.append(B, B1);
  await store.append(A, A2);
  await store.append({ projectKey: "another-project", sessionId: "session-a" }, B1);
  const expected = new Map<string, Record<string, unknown>>([
    ["session-a", foldSessionSummary(foldSessionSummary(undefined, A, A1), A, A2).data],
    ["session-b", foldSessionSummary(undefined, B, B1).data],
  ]);
  const summaries = await list(PROJECT);
  same(summaries.map((s) => s.sessionId).sort(), [...expected.keys()], "the sessions summarised");
  for (const summary of summaries) {
    same(summary.data, expected.get(summary.sessionId), `${summary.sessionId}'s data`);
    if (!Number.isInteger(summary.mtime) || summary.mtime <= 0) {
      throw new Error(`${summary.sessionId}'s mtime is not epoch ms: ${show(summary.mtime)}`);
    }
  }
  if (typeof store.listSessions === "function") {
    const listed = new Map((await store.listSessions(PROJECT)).map((r) => [r.sessionId, r.mtime]));
    for (const summary of summaries) {
      if (summary.mtime !== listed.get(summary.sessionId)) {
        throw new Error(
          `${summary.sessionId}: summary mtime ${summary.mtime}, listSessions mtime ${
            listed.get(summary.sessionId)
          } (they must be the same clock and write)`,
        );
      }
    }
  }
};

function same(actual: unknown, expected: unknown, what: string): void {
  if (!jsonEqual(actual, expected)) {
    throw new Error(`${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

/** Part of `copies`: a summary the caller changed changes nothing stored (when the store keeps summaries). */
export async function checkSummaryCopies(store: SessionStore): Promise<void> {
  if (typeof store.listSessionSummaries !== "function") return;
  await store.append(A, A1);
  const first = (await store.listSessionSummaries(PROJECT)).find((s) =>
    s.sessionId === A.sessionId
  );
  if (!first) throw new Error(`listSessionSummaries lacks ${show(A.sessionId)}`);
  const kept = structuredClone(first.data);
  (first.data as Record<string, unknown>).firstPrompt = "changed by the caller";
  same(
    (await store.listSessionSummaries(PROJECT)).find((s) => s.sessionId === A.sessionId)?.data,
    kept,
    "a summary after the caller changed the one returned",
  );
}
