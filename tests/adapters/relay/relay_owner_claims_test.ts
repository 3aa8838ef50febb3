/**
 * Found by the fleet soak (PostgreSQL stopped and restarted): a
 * conversation owner claim the store did not take was lost, and every later
 * `spawn.resume` of that conversation, on any relay, was `unknown_session`.
 * Now the claim is kept in memory (bounded), retried with backoff until the
 * store takes it (the same entry, stored once), answers its owner on the
 * claiming relay meanwhile, and `close()` stops the retries.
 */

import assert from "node:assert/strict";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import {
  CONVERSATION_TYPE,
  conversationKey,
  ConversationOwners,
  type OwnersSettings,
} from "../../../adapters/relay/_conversations.ts";
import { sha256 } from "../../../adapters/relay/_relay_record.ts";
import { type RelayOptions, serveRelay } from "../../../adapters/relay/mod.ts";
import { makeTestDir, mirrorCli, TestClient, waitFor } from "./_client.ts";

const ALICE = "alice";
const MALLORY = "mallory";

/**
 * An in-memory store whose conversation owner appends fail (reject) while
 * `failing` is above zero, or hang until `release()` (then land); its
 * loads fail while `loadsFail`. Counts the owner appends it was asked for.
 */
class FlakyStore implements SessionStore {
  readonly inner = new InMemorySessionStore();
  /** How many more owner appends reject (Infinity: all). */
  failing = 0;
  /** How many more owner appends hang until `release()`, then land. */
  hanging = 0;
  loadsFail = false;
  /** The owner appends asked for. */
  appends = 0;
  readonly #held: (() => void)[] = [];

  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (!entries.some((entry) => entry.type === CONVERSATION_TYPE)) {
      return this.inner.append(key, entries);
    }
    this.appends++;
    if (this.failing > 0) {
      this.failing--;
      return Promise.reject(new Error("the store is down"));
    }
    if (this.hanging > 0) {
      this.hanging--;
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#held.push(resolve);
      return promise.then(() => this.inner.append(key, entries));
    }
    return this.inner.append(key, entries);
  }

  load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (this.loadsFail) return Promise.reject(new Error("the store is down"));
    return this.inner.load(key);
  }

  /** Lets every hanging append land. */
  release(): void {
    for (const resolve of this.#held.splice(0)) resolve();
  }
}

function owners(store: SessionStore, settings: Partial<OwnersSettings> = {}): ConversationOwners {
  return new ConversationOwners({ store, timeoutMs: 200, perOwner: 100, ...settings });
}

/** The conversation's owner entries in the store (no failure). */
async function ownerEntries(store: FlakyStore, id: string): Promise<SessionStoreEntry[]> {
  const entries = await store.inner.load(await conversationKey(id)) ?? [];
  return entries.filter((entry) => entry.type === CONVERSATION_TYPE);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function refusalKind(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { kind?: unknown }).kind);
  }
  return "none";
}

Deno.test({
  name: "ConversationOwners.claim() retries a claim the store refused until it takes it",
  permissions: "none",
  async fn(t) {
    await t.step("three refused appends: resolves at once, then stored once", async () => {
      const store = new FlakyStore();
      store.failing = 3;
      await using a = owners(store);
      const id = crypto.randomUUID();
      const started = performance.now();
      await a.claim(id, ALICE);
      assert.ok(performance.now() - started < 200 + 500, "claim() resolves within the bound");
      assert.equal(a.pending, 1, "kept locally");
      await waitFor("the retries to land", () => a.pending === 0);
      assert.equal(store.appends, 4, "the first attempt and three retries");
      const stored = await ownerEntries(store, id);
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.owner, await sha256(ALICE));
      // Another relay sharing the store knows the owner.
      await using b = owners(store);
      assert.equal(await b.owns(id, ALICE), true);
      assert.equal(await b.owns(id, MALLORY), false);
    });

    await t.step("an append that lands after its bound: the retry adds nothing", async () => {
      const store = new FlakyStore();
      store.hanging = 1;
      await using a = owners(store, { timeoutMs: 50 });
      const id = crypto.randomUUID();
      const started = performance.now();
      await a.claim(id, ALICE);
      const took = performance.now() - started;
      assert.ok(took >= 40 && took < 50 + 500, `claim() waits for the bound only (${took} ms)`);
      await waitFor("the retry to land", () => a.pending === 0);
      store.release(); // the first append lands late, the same entry (uuid)
      await delay(0);
      const stored = await ownerEntries(store, id);
      assert.equal(stored.length, 1, "stored once");
      assert.equal(store.appends, 2);
    });
  },
});

Deno.test({
  name: "ConversationOwners.owns() answers the claim's owner from it while the store fails",
  permissions: "none",
  async fn(t) {
    const store = new FlakyStore();
    store.failing = Infinity;
    await using a = owners(store);
    const id = crypto.randomUUID();
    await a.claim(id, ALICE);
    assert.equal(a.pending, 1);

    await t.step("appends fail, loads answer: the owner yes, another owner no", async () => {
      assert.equal(await a.owns(id, ALICE), true);
      assert.equal(await a.owns(id, MALLORY), false);
      await a.assertOwned(id, ALICE);
      assert.equal(await refusalKind(a.assertOwned(id, MALLORY)), "unknown_session");
    });

    await t.step("loads fail too: the owner yes; another owner as for an unknown id", async () => {
      store.loadsFail = true;
      try {
        assert.equal(await a.owns(id, ALICE), true);
        const other = await refusalKind(a.owns(id, MALLORY));
        assert.equal(other, "spawn_failed");
        assert.equal(await refusalKind(a.owns(crypto.randomUUID(), MALLORY)), other);
      } finally {
        store.loadsFail = false;
      }
    });

    await t.step("another relay does not know it (the store does not)", async () => {
      await using b = owners(store);
      assert.equal(await b.owns(id, ALICE), false);
    });

    await t.step("once the store is back, the claim is stored and forgotten", async () => {
      store.failing = 0;
      await waitFor("the retry to land", () => a.pending === 0, 10_000);
      assert.equal((await ownerEntries(store, id)).length, 1);
      await using b = owners(store);
      assert.equal(await b.owns(id, ALICE), true);
      assert.equal(await b.owns(id, MALLORY), false);
      assert.equal(await a.owns(id, ALICE), true);
    });
  },
});

Deno.test({
  name: "ConversationOwners.close() stops the retries after one last attempt",
  permissions: "none",
  async fn(t) {
    await t.step("a store that always fails: no append after close()", async () => {
      const store = new FlakyStore();
      store.failing = Infinity;
      const a = owners(store);
      const id = crypto.randomUUID();
      await a.claim(id, ALICE);
      await waitFor("two retries", () => store.appends >= 3);
      await a.close();
      const appends = store.appends;
      await delay(700); // longer than the next backoff delays
      assert.equal(store.appends, appends, "no retry after close()");
      await a.close(); // idempotent
      assert.equal(store.appends, appends);
      assert.equal(a.pending, 1, "still kept (this relay's answers), never retried");
      assert.equal(await a.owns(id, ALICE), true);
    });

    await t.step("the last attempt stores what the store takes by then", async () => {
      const store = new FlakyStore();
      store.failing = 1;
      const a = owners(store, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
      const id = crypto.randomUUID();
      await a.claim(id, ALICE);
      assert.equal(a.pending, 1);
      await a.close(); // well before the first retry's delay
      assert.equal(a.pending, 0);
      assert.equal(store.appends, 2);
      assert.equal((await ownerEntries(store, id)).length, 1);
    });

    await t.step("a store that hangs: close() within the store bound", async () => {
      const store = new FlakyStore();
      store.hanging = Infinity;
      const a = owners(store, { timeoutMs: 100 });
      await a.claim(crypto.randomUUID(), ALICE);
      await a.claim(crypto.randomUUID(), ALICE);
      const started = performance.now();
      await a.close();
      const took = performance.now() - started;
      assert.ok(took < 100 + 400, `close() took ${took} ms`);
      const appends = store.appends;
      await delay(300);
      assert.equal(store.appends, appends);
      store.release();
    });

    await t.step("close() waits for a claim under way, then stops", async () => {
      const store = new FlakyStore();
      store.hanging = Infinity;
      const a = owners(store, { timeoutMs: 100 });
      const claiming = a.claim(crypto.randomUUID(), ALICE);
      await a.close();
      await claiming;
      assert.equal(a.pending, 1);
      const appends = store.appends;
      await delay(300);
      assert.equal(store.appends, appends, "kept after close(), never retried");
      store.release();
    });
  },
});

Deno.test({
  name: "ConversationOwners.claim() keeps a bounded number of claims, dropping the oldest",
  permissions: "none",
  async fn(t) {
    await t.step("in all: the oldest of all goes, counted", async () => {
      const store = new FlakyStore();
      store.failing = Infinity;
      let dropped = 0;
      await using a = owners(store, { maxPending: 2, onClaimDropped: () => dropped++ });
      const ids = Array.from({ length: 5 }, () => crypto.randomUUID());
      const who = ["alice", "bob", "carol", "dave", "erin"];
      for (const [i, id] of ids.entries()) await a.claim(id, who[i]!);
      assert.equal(a.pending, 2);
      assert.equal(dropped, 3);
      store.loadsFail = true;
      assert.equal(await refusalKind(a.owns(ids[0]!, "alice")), "spawn_failed", "dropped");
      assert.equal(await a.owns(ids[3]!, "dave"), true);
      assert.equal(await a.owns(ids[4]!, "erin"), true);
    });

    await t.step("per owner: an owner's churn drops its own, never another's", async () => {
      const store = new FlakyStore();
      store.failing = Infinity;
      let dropped = 0;
      await using a = owners(store, {
        maxPending: 10,
        perOwner: 2,
        onClaimDropped: () => dropped++,
      });
      const bobs = crypto.randomUUID();
      await a.claim(bobs, "bob");
      for (let i = 0; i < 20; i++) await a.claim(crypto.randomUUID(), MALLORY);
      assert.equal(a.pending, 3);
      assert.equal(dropped, 18);
      assert.equal(await a.owns(bobs, "bob"), true);
    });
  },
});

/** A relay running the transcript-keeping stand-in CLI on its own HOME, sharing `store`. */
async function storeRelay(
  workspace: string,
  store: SessionStore,
  more: Partial<RelayOptions> = {},
) {
  const home = await makeTestDir();
  const relay = serveRelay({
    tokens: [ALICE_TOKEN],
    workspace,
    tenancy: "shared",
    sessionStore: store,
    projectKey: "claims",
    storeTimeoutMs: 500,
    cli: mirrorCli({ extraEnv: { HOME: home }, tempDir: home }),
    ...more,
  });
  return {
    relay,
    async [Symbol.asyncDispose]() {
      await relay.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

const ALICE_TOKEN = "alice-static-token-0123456789";

async function connect(url: string, hello: Record<string, unknown>): Promise<TestClient> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(ALICE_TOKEN)]);
  await client.opened;
  client.send({ t: "hello", v: 1, ...hello });
  return client;
}

/** Starts a conversation, runs one turn, ends it; returns its CLI session id. */
async function conversation(url: string): Promise<string> {
  const client = await connect(url, { spawn: {} });
  await using _ = client;
  await client.next("ready", 10_000);
  client.send({
    t: "in",
    seq: 1,
    line: JSON.stringify({
      type: "user",
      session_id: "",
      parent_tool_use_id: null,
      uuid: crypto.randomUUID(),
      message: { role: "user", content: [{ type: "text", text: "one" }] },
    }),
  });
  await client.until("result", () => client.lines().some((l) => l.type === "result"), 10_000);
  const id = String(client.lines().find((l) => l.type === "result")!.session_id);
  client.send({ t: "close" });
  const exit = await client.next("exit", 10_000);
  client.send({ t: "ack", seq: exit.seq });
  await client.closeCode();
  return id;
}

Deno.test("relay: a conversation started while the store refused its owner resumes", async (t) => {
  const workspace = await makeTestDir();
  try {
    await t.step("on the relay that started it, while the store still refuses", async () => {
      const store = new FlakyStore();
      store.failing = Infinity;
      await using a = await storeRelay(workspace, store);
      const id = await conversation(a.relay.url);
      await waitFor("no session", () => a.relay.sessionCount === 0, 10_000);
      const again = await connect(a.relay.url, { spawn: { resume: id } });
      await using _ = again;
      await again.next("ready", 10_000);
      assert.equal((await ownerEntries(store, id)).length, 0, "the store still has none");
    });

    await t.step("on another relay sharing the store, once the store is back", async () => {
      const store = new FlakyStore();
      store.failing = 3;
      await using a = await storeRelay(workspace, store);
      await using b = await storeRelay(workspace, store);
      const id = await conversation(a.relay.url);
      const end = Date.now() + 10_000;
      while ((await ownerEntries(store, id)).length === 0 && Date.now() < end) await delay(20);
      assert.equal((await ownerEntries(store, id)).length, 1, "the retries landed");
      assert.equal(store.appends, 4);
      await a.relay.close();
      const again = await connect(b.relay.url, { spawn: { resume: id } });
      await using _ = again;
      await again.next("ready", 10_000);
    });
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});
