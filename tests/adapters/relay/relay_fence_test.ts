/**
 * The conversation fence (`_fence.ts`): a relay that resumed a conversation
 * from the shared store raises it; a relay still running the conversation
 * at a lower epoch writes no more of its transcript.
 */

import assert from "node:assert/strict";
import { Fence, fenceEpoch, fenceKey, raiseFence } from "../../../adapters/relay/_fence.ts";
import { AppendTracker } from "../../../adapters/relay/_mirror_drain.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";

const ID = "0b9c4f6e-1d2a-4c3b-9e8f-7a6b5c4d3e2f";

Deno.test({
  name: "fenceEpoch() takes the highest well-formed epoch; -1 without one",
  permissions: "none",
  fn() {
    assert.equal(fenceEpoch(null), -1);
    assert.equal(fenceEpoch([{ type: "user" }]), -1);
    assert.equal(
      fenceEpoch([
        { type: "duplex-relay-fence", epoch: 2 },
        { type: "duplex-relay-fence", epoch: 1 },
        { type: "duplex-relay-fence", epoch: "9" },
        { type: "duplex-relay-fence", epoch: 1.5 },
        { type: "other", epoch: 7 },
      ]),
      2,
    );
  },
});

Deno.test("a fence admits its own epoch and above, and stays shut once a higher one stood", async () => {
  const store = new InMemorySessionStore();
  const old = new Fence(store, ID, 0, 1_000);
  const current = new Fence(store, ID, 1, 1_000);
  assert.equal(await old.admits(), true, "no fence raised yet");
  await raiseFence(store, ID, 1, 1_000);
  assert.equal(await current.admits(), true, "the raiser's own epoch");
  assert.equal(await old.admits(), false);
  assert.equal(old.fenced, true);
  const key = await fenceKey(ID);
  assert.equal(key.sessionId.length, 43, "a SHA-256, never the id itself");
  assert.notEqual(key.sessionId, ID);
  assert.equal((await store.load(key))?.length, 1, "one entry per resume");
});

Deno.test("a fence whose check the store does not answer fails the append, fencing nobody", async () => {
  const silent: SessionStore = {
    append: () => Promise.resolve(),
    load: () => new Promise(() => {}),
  };
  const fence = new Fence(silent, ID, 0, 30);
  await assert.rejects(fence.admits());
  assert.equal(fence.fenced, false);
});

Deno.test("a fence check slower than half the settle time is made again, up to three times", async () => {
  const store = new InMemorySessionStore();
  let loads = 0;
  const slow: SessionStore = {
    append: (key, entries) => store.append(key, entries),
    load: async (key) => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, loads === 1 ? 200 : 0));
      return await store.load(key);
    },
  };
  assert.equal(await new Fence(slow, ID, 0, 1_000).admits(), true, "the second check was quick");
  assert.equal(loads, 2);
  let slowLoads = 0;
  const always: SessionStore = {
    append: (key, entries) => store.append(key, entries),
    load: async (key) => {
      slowLoads++;
      await new Promise((resolve) => setTimeout(resolve, 200));
      return await store.load(key);
    },
  };
  assert.equal(
    await new Fence(always, ID, 0, 1_000).admits(),
    true,
    "a loaded machine, not a stall",
  );
  assert.equal(slowLoads, 3);
  // An input line's check (whose order the record witnesses) is made once, however slow.
  slowLoads = 0;
  assert.equal(await new Fence(always, ID, 0, 1_000).admitsOnce(), true);
  assert.equal(slowLoads, 1);
  await raiseFence(store, ID, 1, 1_000);
  assert.equal(await new Fence(always, ID, 0, 1_000).admits(), false, "slow, and still fenced");
  const once = new Fence(always, ID, 0, 1_000);
  assert.equal(await once.admitsOnce(), false);
  assert.equal(once.fenced, true, "and stays so");
});

Deno.test("the mirror's appends stop at the fence, told once per refused append", async () => {
  const store = new InMemorySessionStore();
  const key = { projectKey: "p", sessionId: ID };
  let refused = 0;
  const tracker = new AppendTracker(
    { store, keyOf: () => key },
    new Fence(store, ID, 0, 1_000),
    () => refused++,
  );
  await tracker.target.store.append(key, [{ type: "user", uuid: "u1" }]);
  await raiseFence(store, ID, 1, 1_000);
  await assert.rejects(
    tracker.target.store.append(key, [{ type: "user", uuid: "u2" }]),
    /another relay resumed the conversation/,
  );
  assert.equal(refused, 1);
  assert.deepEqual((await store.load(key))?.map((entry) => entry.uuid), ["u1"]);
  await tracker.drained(100); // nothing under way
});

Deno.test("a relay whose client came back takes the conversation back above every fence", async () => {
  const store = new InMemorySessionStore();
  const a = new Fence(store, ID, 0, 1_000);
  assert.equal(await a.retake(), undefined, "no fence above it: nothing to take");
  await raiseFence(store, ID, 1, 1_000); // b resumed it, and its client left b
  const b = new Fence(store, ID, 1, 1_000);
  assert.equal(await a.retake(), 2);
  assert.equal(a.epoch, 2);
  assert.equal(await a.admits(), true, "a writes again");
  assert.equal(await b.admits(), false, "b, which wrote nothing, is fenced off now");
  assert.equal(await b.retake(), undefined, "a fenced relay does not take it back");
  assert.equal(fenceEpoch(await store.load(await fenceKey(ID))), 2);
});

Deno.test("a retake the store does not answer fails after asking again within the bound", async () => {
  const store = new InMemorySessionStore();
  let loads = 0;
  const down = {
    append: () => Promise.reject(new Error("store down")),
    load: () => {
      loads++;
      return Promise.reject(new Error("store down"));
    },
  };
  await raiseFence(store, ID, 1, 1_000);
  const a = new Fence(down, ID, 0, 400);
  await assert.rejects(a.retake(), /store down/, "unknown: the caller stands down");
  assert.ok(loads >= 2, `asked again (${loads} loads)`);
  assert.equal(a.epoch, 0);
});
