/**
 * Run by `sdk_parity_test.ts` in a child `deno test` with the permissions
 * the official SDK's module needs to load (`--allow-sys=homedir`, which the
 * project's default test permissions do not grant): our store pieces side
 * by side with the SDK 0.3.332's own.
 *
 * @module
 */

import assert from "node:assert/strict";
import { pathToFileURL as toFileUrl } from "node:url";
import { sdkEntry } from "../bench/install_sdk.ts";
import { projectKeyOf } from "../../src/store/project_key.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import {
  sessionStoreConformance,
  STORE_CONTRACTS,
} from "../../src/testing/session_store_conformance.ts";
import { importSessionToStore } from "../../adapters/subprocess/store/import_session.ts";
import { getSessionMessages } from "../../adapters/subprocess/history/mod.ts";
import {
  copyHistory,
  RECORDED_DIR,
  RECORDED_FOLDER,
} from "../adapters/subprocess/_history_fixtures.ts";

/** The pinned SDK, or the one `CLAUDE_SDK_PREFIX` names (the drift watch's newest). */
const SDK = toFileUrl(sdkEntry());
// deno-lint-ignore no-explicit-any
const sdk: any = await import(SDK.href);

/** The contract's SHOULDs the SDK's store does not keep. */
const SDK_DIFFERS = ["uuid-dedup", "key-separation", "copies"];

Deno.test("the SDK's InMemorySessionStore keeps our suite's contracts but three SHOULDs", async (t) => {
  await sessionStoreConformance(t, () => new sdk.InMemorySessionStore(), { skip: SDK_DIFFERS });
});

Deno.test("the SDK's InMemorySessionStore fails exactly uuid-dedup, key-separation, copies", async () => {
  const failed: string[] = [];
  await sessionStoreConformance(
    {
      async step(name, fn) {
        try {
          await fn();
          return true;
        } catch {
          failed.push(name.slice(0, name.indexOf(":")));
          return false;
        }
      },
    },
    () => new sdk.InMemorySessionStore(),
    {
      skip: STORE_CONTRACTS.filter((id) => !SDK_DIFFERS.includes(id)),
    },
  );
  assert.deepEqual(failed, SDK_DIFFERS);
});

Deno.test("projectKeyOf() equals the key the SDK derives from a directory", async () => {
  const paths = [
    "/home/me/app",
    "/tmp/x y/ü.z/🦀",
    "/srv/with.dots/and_underscores-and-dashes",
    `/${"a".repeat(250)}`,
    `/deep/${"segment-".repeat(40)}end`,
    `/${"é".repeat(199)}`,
    `/${"é".repeat(200)}`,
  ];
  const asked: string[] = [];
  const spy = {
    append: () => Promise.resolve(),
    load: () => Promise.resolve(null),
    listSessions: (projectKey: string) => {
      asked.push(projectKey);
      return Promise.resolve([]);
    },
  };
  for (const dir of paths) await sdk.listSessions({ dir, sessionStore: spy });
  assert.deepEqual(paths.map(projectKeyOf), asked);
  assert.ok(asked.some((key) => key.length > 200), "a path over 200 characters is among them");
});

Deno.test("importSessionToStore() stores what the SDK's stores, and the same conversation comes back", async (t) => {
  await using history = await copyHistory();
  const id = history.ids.three_turns;
  const sub = `${history.projectDir}/${id}/subagents`;
  await Deno.mkdir(sub, { recursive: true });
  await Deno.writeTextFile(
    `${sub}/agent-a1.jsonl`,
    `${JSON.stringify({ type: "user", uuid: "s1", isSidechain: true })}\n`,
  );
  await Deno.writeTextFile(`${sub}/agent-a1.meta.json`, JSON.stringify({ toolUseId: "toolu_1" }));
  const previous = Deno.env.get("CLAUDE_CONFIG_DIR");
  Deno.env.set("CLAUDE_CONFIG_DIR", history.configDir);
  try {
    for (const name of ["three_turns", "branched", "compacted"] as const) {
      await t.step(name, async () => {
        const theirs = new sdk.InMemorySessionStore();
        const calls: number[] = [];
        const counted = {
          append: (k: unknown, e: unknown[]) => (calls.push(e.length), theirs.append(k, e)),
          load: (k: unknown) => theirs.load(k),
        };
        await sdk.importSessionToStore(history.ids[name], counted, {
          dir: RECORDED_DIR,
          batchSize: 9,
        });
        const ours = new InMemorySessionStore();
        const ourCalls: number[] = [];
        const ourCounted: SessionStore = {
          append: (k, e) => (ourCalls.push(e.length), ours.append(k, e)),
          load: (k) => ours.load(k),
        };
        await importSessionToStore(history.ids[name], ourCounted, {
          configDir: history.configDir,
          dir: RECORDED_DIR,
          batchSize: 9,
        });
        assert.deepEqual(ourCalls, calls, "the same batches");
        const key = { projectKey: RECORDED_FOLDER, sessionId: history.ids[name] };
        assert.deepEqual(await ours.load(key), await theirs.load(key));
        assert.deepEqual(await ours.listSubkeys(key), (await theirs.listSubkeys(key)).sort());
        for (const subpath of await ours.listSubkeys(key)) {
          assert.deepEqual(
            await ours.load({ ...key, subpath }),
            await theirs.load({ ...key, subpath }),
          );
        }
        const project = (
          m: { type: string; uuid: string; session_id: string; message?: unknown },
        ) => ({
          type: m.type,
          uuid: m.uuid,
          session_id: m.session_id,
          message: m.message,
        });
        assert.deepEqual(
          (await getSessionMessages(key.sessionId, { sessionStore: ours, dir: RECORDED_DIR })).map(
            project,
          ),
          (await sdk.getSessionMessages(key.sessionId, { sessionStore: theirs, dir: RECORDED_DIR }))
            .map(project),
          "getSessionMessages over each store",
        );
      });
    }
  } finally {
    if (previous === undefined) Deno.env.delete("CLAUDE_CONFIG_DIR");
    else Deno.env.set("CLAUDE_CONFIG_DIR", previous);
  }
});
