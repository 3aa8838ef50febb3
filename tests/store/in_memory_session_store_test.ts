/**
 * `InMemorySessionStore`: the conformance suite, and what the suite does
 * not cover (bad input, the clock, the test helpers).
 *
 * @module
 */

import assert from "node:assert/strict";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../src/store/session_store.ts";
import { sessionStoreConformance } from "../../src/testing/session_store_conformance.ts";

const KEY: SessionKey = { projectKey: "p", sessionId: "s" };

Deno.test({
  name: "InMemorySessionStore keeps the SessionStore contract",
  permissions: "none",
  fn: (t) => sessionStoreConformance(t, () => new InMemorySessionStore()),
});

Deno.test({
  name: "InMemorySessionStore refuses bad keys and entries with a TypeError, storing nothing",
  permissions: "none",
  async fn(t) {
    const store = new InMemorySessionStore();
    const cyclic: Record<string, unknown> = { type: "x" };
    cyclic.self = cyclic;
    const bad: [string, unknown, unknown, RegExp][] = [
      ["no key", undefined, [], /the key must be an object/],
      ["an empty projectKey", { projectKey: "", sessionId: "s" }, [], /key.projectKey/],
      ["a numeric sessionId", { projectKey: "p", sessionId: 1 }, [], /key.sessionId/],
      ["an empty subpath", { ...KEY, subpath: "" }, [], /key.subpath.*omit it/],
      ["entries not an array", KEY, { type: "x" }, /entries must be an array/],
      ["an entry without type", KEY, [{ type: "x" }, { uuid: "u" }], /entries\[1\].type/],
      ["a numeric uuid", KEY, [{ type: "x", uuid: 7 }], /entries\[0\].uuid/],
      ["a null entry", KEY, [null], /entries\[0\] must be an object, got null/],
      ["a cycle", KEY, [{ type: "ok", uuid: "a" }, cyclic], /entries\[1\] is not JSON/],
      ["a BigInt", KEY, [{ type: "x", n: 1n }], /entries\[0\] is not JSON/],
    ];
    for (const [what, key, entries, message] of bad) {
      await t.step(what, async () => {
        await assert.rejects(
          store.append(key as SessionKey, entries as SessionStoreEntry[]),
          (error: unknown) => error instanceof TypeError && message.test(error.message),
        );
      });
    }
    assert.equal(await store.load(KEY), null, "nothing of a refused batch was stored");
    await assert.rejects(store.load({ projectKey: "p" } as SessionKey), TypeError);
    await assert.rejects(store.listSessions(""), TypeError);
    await assert.rejects(store.listSubkeys({ projectKey: "p", sessionId: "" }), TypeError);
    await assert.rejects(store.delete({ sessionId: "s" } as SessionKey), TypeError);
    assert.throws(
      () => new InMemorySessionStore({ clock: 5 as unknown as () => number }),
      TypeError,
    );
  },
});

Deno.test({
  name: "InMemorySessionStore stamps mtime from its clock, always moving forward",
  permissions: "none",
  async fn() {
    let now = 1_800_000_000_000.7;
    const store = new InMemorySessionStore({ clock: () => now });
    await store.append({ projectKey: "p", sessionId: "a" }, [{ type: "x" }]);
    await store.append({ projectKey: "p", sessionId: "b" }, [{ type: "x" }]); // same instant
    now -= 60_000; // the clock steps back
    await store.append({ projectKey: "p", sessionId: "c" }, [{ type: "x" }]);
    const mtimes = Object.fromEntries(
      (await store.listSessions("p")).map((ref) => [ref.sessionId, ref.mtime]),
    );
    assert.deepEqual(mtimes, {
      a: 1_800_000_000_000,
      b: 1_800_000_000_001,
      c: 1_800_000_000_002,
    });
    // A subkey's append does not list a session of its own.
    await store.append({ projectKey: "p", sessionId: "d", subpath: "subagents/agent-1" }, [
      { type: "x" },
    ]);
    assert.equal((await store.listSessions("p")).length, 3);
  },
});

Deno.test({
  name: "InMemorySessionStore.listSessions() lists newest first, appends in one millisecond too",
  permissions: "none",
  async fn(t) {
    const frozen = 1_800_000_000_000;
    await t.step(
      "the conformance suite with a clock that never moves",
      (t) => sessionStoreConformance(t, () => new InMemorySessionStore({ clock: () => frozen })),
    );
    const store = new InMemorySessionStore({ clock: () => frozen });
    for (const id of ["b", "c", "d", "b"]) {
      await store.append({ projectKey: "p", sessionId: id }, [{ type: "x" }]);
    }
    await store.append({ projectKey: "other", sessionId: "o" }, [{ type: "x" }]);
    await store.append({ projectKey: "p", sessionId: "a" }, [{ type: "x" }]);
    await store.append({ projectKey: "p", sessionId: "c", subpath: "subagents/x" }, [{
      type: "x",
    }]);
    assert.deepEqual(await store.listSessions("p"), [
      { sessionId: "a", mtime: frozen + 5 },
      { sessionId: "b", mtime: frozen + 3 },
      { sessionId: "d", mtime: frozen + 2 },
      { sessionId: "c", mtime: frozen + 1 },
    ]);
  },
});

Deno.test({
  name: "InMemorySessionStore.size counts main transcripts; clear() empties it",
  permissions: "none",
  async fn() {
    const store = new InMemorySessionStore();
    await store.append(KEY, [{ type: "x" }]);
    await store.append({ ...KEY, subpath: "subagents/agent-1" }, [{ type: "x" }]);
    await store.append({ projectKey: "q", sessionId: "s" }, [{ type: "x" }]);
    assert.equal(store.size, 2);
    store.clear();
    assert.equal(store.size, 0);
    assert.equal(await store.load(KEY), null);
  },
});
