/**
 * The history pieces of issue 24 against the official SDK's own (run in a
 * child process, `_sdk_history.ts`): `foldSessionSummary` on the real CLI's
 * transcripts and on edge cases (one batch, or ours in many batches, equal
 * to the SDK's in one); `listSubagents` / `getSubagentMessages` on the
 * CLI's layout and over a store; the archive mark written by one and read
 * by the other; `listSessions` over stores that keep summaries. Without the
 * SDK the test is skipped loudly; with `CI=true` it fails.
 *
 * @module
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { foldSessionSummary } from "../../src/store/session_summary.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionStoreEntry } from "../../src/store/session_store.ts";
import {
  archiveSession,
  getSessionInfo,
  getSubagentMessages,
  importSessionToStore,
  listSessions,
  listSubagents,
  unarchiveSession,
} from "../../adapters/subprocess/history/mod.ts";
import { makeTestDir } from "../adapters/subprocess/_helpers.ts";
import { layout, PROJECT, SESSION } from "../adapters/subprocess/history/_subagent_layout.ts";
import { okOf, sdkHistory, sdkInstalled, sharedFields } from "./_sdk_history.ts";

const NAME = "history pieces equal the official SDK's (fold, subagents, archive, summaries)";
const FIXTURES = new URL("../fixtures/history/", import.meta.url).pathname;

/** Edge cases of the fold: commands, pastes, bash input, long prompts, tags, moves. */
const EDGES: SessionStoreEntry[] = [
  { type: "user", message: { content: "<command-name>/init</command-name>" } },
  { type: "user", isMeta: true, message: { content: "meta" } },
  { type: "user", message: { content: [{ type: "tool_result", content: "r" }] } },
  { type: "user", message: { content: "<system-reminder>x</system-reminder>" } },
  { type: "user", message: { content: "[Request interrupted by user]" } },
  {
    type: "user",
    timestamp: "2026-01-01T00:00:00.000Z",
    cwd: "/srv",
    message: {
      content: `a\n\n<pasted_content id="0a1f">\n${
        "é".repeat(300)
      }\n</pasted_content id="0a1f">\n\nb`,
    },
  },
  { type: "user", message: { content: "<bash-input> ls </bash-input>" } },
  { type: "tag", tag: "t" },
  { type: "summary", summary: "hint", gitBranch: "main" },
  { type: "tag", tag: "" },
  { type: "relocated", relocatedCwd: "/moved" },
  { type: "ai-title", aiTitle: "AI title" },
  { type: "last-prompt", lastPrompt: "last" },
];

function fixture(name: string): SessionStoreEntry[] {
  return Deno.readTextFileSync(`${FIXTURES}${name}.jsonl`).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
}

if (!sdkInstalled()) {
  unavailableTest(
    NAME,
    "the official SDK is not installed: run deno run -P=install tests/bench/install_sdk.ts",
  );
} else {
  Deno.test(NAME, async (t) => {
    await t.step("foldSessionSummary(): ours, in one batch or many, equals the SDK's", async () => {
      const key = { projectKey: "-p", sessionId: "s" };
      const corpora = [
        ...["three_turns", "branched", "compacted"].map(fixture),
        EDGES,
        [...EDGES].reverse(),
        [{ type: "user", isSidechain: true, message: { content: "sub" } }, ...EDGES],
      ];
      const theirs = await sdkHistory({
        calls: corpora.map((entries) => ({
          fn: "foldSessionSummary",
          args: ["$undefined", key, entries, { mtime: 5 }],
        })),
      });
      corpora.forEach((entries, i) => {
        const expected = okOf(theirs[i]);
        assert.deepEqual(foldSessionSummary(undefined, key, entries, { mtime: 5 }), expected);
        let split = foldSessionSummary(undefined, key, [], { mtime: 1 });
        for (let at = 0; at < entries.length; at += 3) {
          split = foldSessionSummary(split, key, entries.slice(at, at + 3), { mtime: 5 });
        }
        assert.deepEqual(split, expected, `corpus ${i} in batches of 3`);
      });
    });

    const root = await makeTestDir();
    try {
      const { configDir } = await layout(root);
      const ours = new InMemorySessionStore();
      await importSessionToStore(SESSION, ours, { configDir, projectKey: PROJECT });
      const key = { projectKey: PROJECT, sessionId: SESSION };
      const store = await Promise.all(
        ["", ...await ours.listSubkeys(key)].map(async (subpath) => {
          const full = subpath ? { ...key, subpath } : key;
          return { key: full, entries: (await ours.load(full)) ?? [] };
        }),
      );
      const where = { sessionStore: ours, projectKey: PROJECT };

      await t.step("listSubagents() and getSubagentMessages(): files and stores", async () => {
        // The SDK's store functions take the project key from `dir`: none gives the cwd's.
        const cwdKey = { sessionStore: "$store", dir: "/work/app" };
        const results = await sdkHistory({
          configDir,
          store: store.map((s) => ({ ...s, key: { ...s.key, projectKey: "-work-app" } })),
          calls: [
            { fn: "listSubagents", args: [SESSION] },
            { fn: "getSubagentMessages", args: [SESSION, "a1"] },
            { fn: "getSubagentMessages", args: [SESSION, "b2", { offset: 1 }] },
            { fn: "listSubagents", args: [SESSION, cwdKey] },
            { fn: "getSubagentMessages", args: [SESSION, "b2", cwdKey] },
          ],
        });
        const files = { configDir };
        assert.deepEqual(
          await listSubagents(SESSION, files),
          (okOf(results[0]) as string[]).sort(),
        );
        assert.deepEqual(
          await listSubagents(SESSION, where),
          (okOf(results[3]) as string[]).sort(),
        );
        const shape = sharedFields;
        const sdkMessages = (i: number) => shape(okOf(results[i]) as object[]);
        assert.deepEqual(
          shape(await getSubagentMessages(SESSION, "a1", files)),
          sdkMessages(1),
        );
        assert.deepEqual(
          shape(await getSubagentMessages(SESSION, "b2", { ...files, offset: 1 })),
          sdkMessages(2),
        );
        assert.deepEqual(
          shape(await getSubagentMessages(SESSION, "b2", where)),
          sdkMessages(4),
        );
      });

      await t.step("the archive mark: written by one, read by the other", async () => {
        const files = { configDir };
        await archiveSession(SESSION, files);
        const [listed, , info] = await sdkHistory({
          configDir,
          calls: [
            { fn: "listSessions", args: [] },
            { fn: "unarchiveSession", args: [SESSION] },
            { fn: "getSessionInfo", args: [SESSION] },
            { fn: "archiveSession", args: [SESSION] },
            { fn: "archiveSession", args: [SESSION, { sessionStore: "$store" }] },
          ],
        });
        assert.equal((okOf(listed) as { archived?: boolean }[])[0]?.archived, true);
        assert.equal((okOf(info) as { archived?: boolean }).archived, false);
        assert.equal((await getSessionInfo(SESSION, files))?.archived, true, "the SDK's mark");
        await unarchiveSession(SESSION, files);
        assert.equal((await getSessionInfo(SESSION, files))?.archived, false);
      });

      await t.step("listSessions() over stores that keep summaries: the same rows", async () => {
        const mixed = [
          ...fixture("three_turns"),
          { type: "custom-title", customTitle: "Renamed" },
          ...EDGES,
        ];
        const [sdkListed, sdkSummaries] = await sdkHistory({
          store: [{ key, entries: mixed }],
          calls: [
            { fn: "listSessions", args: [{ sessionStore: "$store", dir: "/work/app" }] },
            { fn: "store.listSessionSummaries", args: [PROJECT] },
          ],
        });
        const fresh = new InMemorySessionStore();
        await fresh.append(key, mixed);
        const row = (info: { readonly [field: string]: unknown }) => ({
          sessionId: info.sessionId,
          summary: info.summary,
          firstPrompt: info.firstPrompt,
          tag: info.tag,
          gitBranch: info.gitBranch,
          createdAt: info.createdAt,
        });
        const mine = await listSessions({ sessionStore: fresh, projectKey: PROJECT });
        assert.deepEqual(
          mine.map((info) => row({ ...info })),
          (okOf(sdkListed) as Record<string, unknown>[]).map(row),
        );
        const [summary] = await fresh.listSessionSummaries(PROJECT);
        const [theirSummary] = okOf(sdkSummaries) as { data: unknown }[];
        assert.deepEqual(summary?.data, theirSummary?.data, "the stores keep the same data");
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
