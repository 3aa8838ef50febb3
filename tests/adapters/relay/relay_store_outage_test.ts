/**
 * Found by the fleet soak (PostgreSQL stopped while a relay died): a
 * reconnection whose resume meets a store that does not answer is refused
 * `busy` ("try again later"), and `remote()` tries again, here or on
 * another relay, until the store is back: the conversation goes on where
 * it was, instead of ending with `spawn_failed`.
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../../mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { RELAY_SESSIONS_PROJECT_KEY } from "../../../adapters/relay/mod.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../../src/store/session_store.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { TOKEN } from "./_client.ts";
import { standInRelay } from "./_stand_in_relay.ts";
import { fenceEpoch, fenceKey, raiseFence } from "../../../adapters/relay/_fence.ts";
import { RECORD_TYPE } from "../../../adapters/relay/_relay_record.ts";

/** A store whose loads of the relay's records fail while `down`. */
class OutageStore extends InMemorySessionStore {
  down = false;
  refusedLoads = 0;
  override load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (this.down && key.projectKey === RELAY_SESSIONS_PROJECT_KEY) {
      this.refusedLoads++;
      return Promise.reject(new Error("the store is down"));
    }
    return super.load(key);
  }
}

/** A relay of the pair sharing `store`, on its own HOME. */
function relayOf(root: string, name: string, store: InMemorySessionStore) {
  return standInRelay(root, name, store, {
    projectKey: "outage",
    relay: { storeTimeoutMs: 500, policy: { allowResume: true } },
  });
}

/** A session through `a`, reconnecting to `a` or `b`. */
function sessionThrough(a: { url: string }, b: { url: string }): Promise<DuplexSession> {
  return DuplexSession.start({
    transport: remote({
      url: [a.url, b.url],
      token: TOKEN,
      reconnect: { attempts: 40, initialDelayMs: 50, maxDelayMs: 200 },
    }),
  });
}

/** Runs `fn` with relays a and b sharing `store` and a session through a (then either). */
async function withPair(
  store: InMemorySessionStore,
  fn: (a: { close(): Promise<void> }, session: DuplexSession) => Promise<void>,
): Promise<void> {
  const root = await makeTestDir();
  const a = relayOf(root, "a", store);
  const b = relayOf(root, "b", store);
  try {
    await using session = await sessionThrough(a, b);
    await fn(a, session);
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

Deno.test("relay: a resume that meets a store outage is retried until the store is back", async () => {
  const store = new OutageStore();
  await withPair(store, async (a, session) => {
    const first = await session.send("first", { timeoutMs: 10_000 });
    assert.equal(first.result.isError, false);
    store.down = true;
    await a.close(); // its client reconnects to b, whose resume cannot load the record
    const seen = Date.now();
    while (store.refusedLoads < 2 && Date.now() - seen < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(store.refusedLoads >= 2, `the resume was tried ${store.refusedLoads} times`);
    store.down = false;
    const second = await session.send("second", { timeoutMs: 15_000 });
    assert.equal(second.result.isError, false, "the conversation went on through b");
    assert.equal(second.result.sessionId, first.result.sessionId, "the same conversation");
    await session.close();
    assert.equal(session.exitStatus.state, "completed");
  });
});

Deno.test("relay: a conversation resumed by its id (spawn.resume) writes its turns above any fence", async () => {
  const root = await makeTestDir();
  const store = new OutageStore();
  const a = relayOf(root, "a", store);
  try {
    const transport = () =>
      remote({ url: a.url, token: TOKEN, reconnect: false, spawn: { resume: sessionId } });
    let sessionId = "";
    {
      await using first = await DuplexSession.start({
        transport: remote({ url: a.url, token: TOKEN, reconnect: false }),
      });
      sessionId = (await first.send("first", { timeoutMs: 10_000 })).result.sessionId!;
    }
    // Another relay resumed it from the store before (its fence stands at epoch 3).
    await raiseFence(store, sessionId, 3, 1_000);
    await using again = await DuplexSession.start({ transport: transport() });
    const second = await again.send("second", { timeoutMs: 10_000 });
    assert.equal(second.result.sessionId, sessionId);
    const key = { projectKey: "outage", sessionId };
    const texts = JSON.stringify(await store.load(key));
    assert.match(texts, /second/, "the resumed conversation's turn reached the store");
    assert.equal(fenceEpoch(await store.load(await fenceKey(sessionId))), 4, "taken above 3");
  } finally {
    await a.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});

/**
 * A store whose appends of session records wait while stalled (they land, in order, once it
 * resumes); it counts the loads that find a session record.
 */
class StallingStore extends InMemorySessionStore {
  #stalled: (() => void)[] | undefined;
  recordLoads = 0;
  stall(): void {
    this.#stalled ??= [];
  }
  resume(): void {
    const waiting = this.#stalled ?? [];
    this.#stalled = undefined;
    for (const go of waiting) go();
  }
  override append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const stalled = this.#stalled;
    if (stalled !== undefined && entries.some((entry) => entry.type === RECORD_TYPE)) {
      return new Promise<void>((resolve) => stalled.push(resolve))
        .then(() => super.append(key, entries));
    }
    return super.append(key, entries);
  }
  override async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const entries = await super.load(key);
    if (entries?.some((entry) => entry.type === RECORD_TYPE)) this.recordLoads++;
    return entries;
  }
}

Deno.test("relay: a resume whose record holds less input than the client was acknowledged waits for it", async () => {
  // Found by the fleet soak: with the store slow past storeTimeoutMs, a relay acknowledged
  // input its record did not hold yet; another relay woke from that record, and the client's
  // next line was refused as a gap ("Input 3 arrived before the input before it").
  const store = new StallingStore();
  await withPair(store, async (a, session) => {
    try {
      const first = await session.send("first", { timeoutMs: 10_000 });
      store.stall();
      const second = await session.send("second", { timeoutMs: 10_000 });
      assert.equal(second.result.isError, false);
      // Its acknowledgement goes out once the record's bound (500 ms) has passed.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await a.close(); // its client reconnects to b, whose record says input 1
      const before = store.recordLoads;
      const seen = Date.now();
      // Refused `busy` each time (a wake would load it twice, then no more: its takeover's re-read
      // comes before the record lands).
      while (store.recordLoads < before + 3 && Date.now() - seen < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(store.recordLoads >= before + 3, "b refused the stale record, and was asked again");
      assert.equal(session.exitStatus.state, "running", "refused busy, not a protocol error");
      store.resume(); // a's record of input 2 lands
      const third = await session.send("third", { timeoutMs: 15_000 });
      assert.equal(third.result.isError, false, "the conversation went on through b");
      assert.equal(third.result.sessionId, first.result.sessionId, "the same conversation");
      const transcript = await store.load({
        projectKey: "outage",
        sessionId: first.result.sessionId!,
      });
      const users = (transcript ?? []).filter((entry) => entry.type === "user");
      assert.equal(users.length, 3, "each turn once: " + JSON.stringify(users.map((u) => u.uuid)));
      await session.close();
      assert.equal(session.exitStatus.state, "completed");
    } finally {
      store.resume();
    }
  });
});

/** A store that fails the second load of a transcript after `failSecondLoad()` (once). */
class FlakyTranscriptStore extends InMemorySessionStore {
  #armed: number | undefined;
  failed = 0;
  failSecondLoad(): void {
    this.#armed = 0;
  }
  override load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (this.#armed !== undefined && key.projectKey !== RELAY_SESSIONS_PROJECT_KEY) {
      this.#armed++;
      if (this.#armed === 2) {
        this.#armed = undefined;
        this.failed++;
        return Promise.reject(new Error("the database system is shutting down"));
      }
    }
    return super.load(key);
  }
}

Deno.test("relay: a resume whose transcript load fails is refused busy and tried again", async () => {
  // Found by the fleet soak: PostgreSQL began its shutdown between the relay's check that the
  // store holds the transcript and the subprocess adapter's load of it; the resume failed
  // spawn_failed, and the client's session ended.
  const store = new FlakyTranscriptStore();
  await withPair(store, async (a, session) => {
    const first = await session.send("first", { timeoutMs: 10_000 });
    store.failSecondLoad(); // b's check passes; its CLI's transcript load fails
    await a.close();
    const second = await session.send("second", { timeoutMs: 15_000 });
    assert.equal(store.failed, 1, "the transcript load failed once");
    assert.equal(second.result.isError, false, "the conversation went on through b");
    assert.equal(second.result.sessionId, first.result.sessionId, "the same conversation");
    await session.close();
    assert.equal(session.exitStatus.state, "completed");
  });
});
