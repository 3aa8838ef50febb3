/** Relay session records: which entry counts, and the writer through a failing store. */

import assert from "node:assert/strict";
import {
  lastRecord,
  lastWritten,
  RECORD_TYPE,
  recordKey,
  RecordWriter,
  type RelayRecord,
  sha256,
} from "../../../adapters/relay/_relay_record.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../../src/store/session_store.ts";
import { StoreLink } from "../../../adapters/relay/_relay_store.ts";
import { Fence, fenceKey, raiseFence } from "../../../adapters/relay/_fence.ts";

const BASE: RelayRecord = {
  owner: "o",
  cliSessionId: "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab",
  spawn: {},
  applied: 0,
  state: "live",
  epoch: 0,
};

function entry(change: Partial<RelayRecord> & Record<string, unknown>): SessionStoreEntry {
  return { type: RECORD_TYPE, ...BASE, ...change };
}

Deno.test({
  name: "lastRecord() takes the last entry of the highest epoch, skipping malformed ones",
  permissions: "none",
  fn() {
    assert.equal(lastRecord(null), undefined);
    assert.equal(lastRecord([{ type: "user", uuid: "u" }]), undefined);
    assert.equal(lastRecord([entry({ applied: 1 }), entry({ applied: 2 })])?.applied, 2);
    // A stale writer of epoch 0 appends after the epoch-1 resume: the resume's entry counts.
    const stale = [entry({ epoch: 1, applied: 5 }), entry({ epoch: 0, applied: 3 })];
    assert.equal(lastRecord(stale)?.applied, 5);
    const malformed = [
      entry({ applied: 1 }),
      entry({ applied: -1 }),
      entry({ state: "odd" as never }),
      entry({ epoch: 1.5 }),
      entry({ spawn: [] as never }),
      entry({ cliSessionId: "--dangerously-skip-permissions" }),
      entry({ cwd: 7 as never }),
    ];
    assert.equal(lastRecord(malformed)?.applied, 1);
    // The folder it ran in, when the record has one (records of older relays lack it).
    assert.equal(lastRecord([entry({ cwd: "alice/a" })])?.cwd, "alice/a");
    assert.equal("cwd" in lastRecord([entry({})])!, false);
  },
});

Deno.test({
  name:
    "lastRecord(entries, below) takes the relays before a takeover; writing shows a write in flight",
  permissions: "none",
  fn() {
    const entries = [
      entry({ epoch: 0, applied: 3 }),
      entry({ epoch: 0, applied: 3, writing: 4 }),
      entry({ epoch: 1, applied: 3 }),
    ];
    assert.equal(lastRecord(entries)?.epoch, 1);
    const before = lastRecord(entries, 1)!;
    assert.equal(before.epoch, 0);
    assert.equal(before.writing, 4, "line 4 may have reached the old CLI");
    assert.equal(lastWritten(before), 4);
    assert.equal(lastRecord(entries, 0), undefined);
    // Written, or not (back to applied): no write in flight.
    assert.equal("writing" in lastRecord([entry({ applied: 4, writing: 4 })])!, false);
    assert.equal(lastWritten(lastRecord([entry({ applied: 3, writing: 3 })])!), 3);
    // A malformed `writing` voids the entry, as any malformed field does.
    const malformed = [entry({ applied: 1 }), entry({ applied: 2, writing: -1 })];
    assert.equal(lastRecord(malformed)?.applied, 1);
    assert.equal(lastRecord([entry({ applied: 1 }), entry({ writing: "2" as never })])?.applied, 1);
  },
});

Deno.test("recordKey() and sha256() never hold the token", async () => {
  const token = "a-session-token";
  const key = await recordKey(token);
  assert.equal(key.projectKey, "duplex-relay");
  assert.equal(key.sessionId, await sha256(token));
  assert.match(key.sessionId, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(!key.sessionId.includes(token));
});

/** A store that fails while `down`, counting the record appends that landed. */
class DownStore extends InMemorySessionStore {
  down = false;
  calls = 0;
  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    this.calls++;
    if (this.down) return Promise.reject(new Error("down"));
    return super.append(key, entries);
  }
}

Deno.test("RecordWriter.saved() waits for the snapshot, bounded; the writer retries", async () => {
  const store = new DownStore();
  const key = await recordKey("t");
  const writer = new RecordWriter(store, key, BASE, { appendTimeoutMs: 1000, waitMs: 300 });
  await writer.saved();
  assert.equal(lastRecord(await store.load(key))?.applied, 0, "the first snapshot");

  store.down = true;
  writer.update({ applied: 1 });
  writer.update({ applied: 2 });
  const started = Date.now();
  await writer.saved();
  assert.ok(Date.now() - started < 1000, "bounded by waitMs");
  assert.equal(lastRecord(await store.load(key))?.applied, 0, "not yet");

  store.down = false;
  await writer.saved(); // the retry lands
  const entries = await store.load(key);
  assert.equal(lastRecord(entries)?.applied, 2, "the latest snapshot");
  assert.ok(entries!.every((e) => typeof e.uuid === "string"), "each with a uuid (idempotent)");
  await writer.close({ state: "closed" });
  assert.equal(lastRecord(await store.load(key))?.state, "closed");
  const calls = store.calls;
  writer.update({ applied: 9 });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(store.calls, calls, "nothing after close");
});

Deno.test("RecordWriter.close() stops retrying a store that stays down", async () => {
  const store = new DownStore();
  store.down = true;
  const writer = new RecordWriter(store, await recordKey("t"), BASE, {
    appendTimeoutMs: 1000,
    waitMs: 200,
  });
  await writer.close({ state: "closed" });
  const calls = store.calls;
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(store.calls, calls, "no retry timer left (the leak sanitizer checks too)");
});

Deno.test("RecordWriter.stored() answers at the first failed append, not after the bound", async () => {
  const store = new DownStore();
  const key = await recordKey("t");
  const writer = new RecordWriter(store, key, BASE, { appendTimeoutMs: 1000, waitMs: 5_000 });
  assert.equal(await writer.stored(), true, "the first snapshot landed");
  store.down = true;
  writer.update({ applied: 0, writing: 1 });
  const started = Date.now();
  assert.equal(await writer.stored(), false);
  assert.ok(Date.now() - started < 1_000, `told in ${Date.now() - started} ms`);
  store.down = false;
  await writer.saved(); // the retry lands
  assert.equal(lastRecord(await store.load(key))?.writing, 1);
  await writer.close();
});

Deno.test("RecordWriter.writtenSince() reads what the relays of later epochs wrote", async () => {
  const store = new InMemorySessionStore();
  const key = await recordKey("t");
  const writer = new RecordWriter(store, key, { ...BASE, applied: 2 }, {
    appendTimeoutMs: 1000,
    waitMs: 1000,
  });
  await writer.saved();
  assert.equal(await writer.writtenSince(5), -1, "nobody else");
  await store.append(key, [entry({ epoch: 1, applied: 2 })]);
  assert.equal(await writer.writtenSince(5), 2, "another relay, nothing new");
  await store.append(key, [entry({ epoch: 1, applied: 2, writing: 3 })]);
  assert.equal(await writer.writtenSince(5), 3, "a line in flight there");
  assert.equal(await writer.writtenSince(1), -1, "epochs from `below` on are not before it");
  await writer.close();
});

/** A client that always answers. */
const LIVE = () => Promise.resolve(true);

/** A store that logs its calls on the relay's keys, in order. */
class LoggingStore extends InMemorySessionStore {
  readonly log: string[] = [];
  fenceId = "";
  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    for (const e of entries) {
      if (e.type === RECORD_TYPE) this.log.push(`record applied=${e.applied} writing=${e.writing}`);
    }
    return super.append(key, entries);
  }
  override load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (key.sessionId === this.fenceId) this.log.push("fence load");
    return super.load(key);
  }
}

Deno.test("StoreLink.admitsInput() saves the write in flight before it checks the fence", async () => {
  const store = new LoggingStore();
  const cli = BASE.cliSessionId;
  store.fenceId = (await fenceKey(cli)).sessionId;
  const settings = { appendTimeoutMs: 1000, waitMs: 1000 };
  const record = new RecordWriter(store, await recordKey("t"), BASE, settings);
  await record.saved();
  const link = new StoreLink({ record, fence: new Fence(store, cli, 0, 1000) });
  store.log.length = 0;
  assert.equal(await link.admitsInput(1, LIVE), true);
  assert.deepEqual(store.log, ["record applied=0 writing=1", "fence load"], "the order");
  await link.applied(1);
  await raiseFence(store, cli, 1, 1000); // another relay took the conversation over
  store.log.length = 0;
  assert.equal(await link.admitsInput(2, LIVE), false);
  await record.saved();
  assert.deepEqual(store.log, [
    "record applied=1 writing=2",
    "fence load",
    "record applied=1 writing=1", // not written: the relay that took over learns so
  ]);
  assert.equal(link.fencedOff, true);
  store.log.length = 0;
  assert.equal(await link.admitsInput(3, LIVE), false, "fenced for good");
  assert.deepEqual(store.log, [], "without another store call");
  await link.closeRecord();
});

/** A store that refuses every call while `down`. */
class DeadStore extends InMemorySessionStore {
  down = false;
  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    return this.down ? Promise.reject(new Error("store down")) : super.append(key, entries);
  }
  override load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.down ? Promise.reject(new Error("store down")) : super.load(key);
  }
}

/* A store link (record and fence) through a `DeadStore`, each call bounded by `ms`. */
async function deadLink(ms: number) {
  const store = new DeadStore();
  const record = new RecordWriter(store, await recordKey("t"), BASE, {
    appendTimeoutMs: ms,
    waitMs: ms,
  });
  await record.saved();
  const link = new StoreLink({ record, fence: new Fence(store, BASE.cliSessionId, 0, ms) });
  return { store, record, link };
}

Deno.test("StoreLink.admitsInput() through a store that does not answer: only while the client does", async (t) => {
  const { store, record, link } = await deadLink(500);
  const cli = BASE.cliSessionId;
  const asked: number[] = [];
  let answers = true;
  const live = (timeoutMs: number) => {
    asked.push(timeoutMs);
    return Promise.resolve(answers);
  };
  store.down = true;

  await t.step(
    "its client answers: the line goes on (turns go on through the outage)",
    async () => {
      assert.equal(await link.admitsInput(1, live), true);
      assert.equal(asked.length, 1, "the client was asked");
      await link.applied(1);
    },
  );

  await t.step("its client gone: the line waits for the store, then for the fence", async () => {
    answers = false;
    asked.length = 0;
    let settled: boolean | undefined;
    const admitting = link.admitsInput(2, live).then((admitted) => settled = admitted);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(settled, undefined, "not written while the store does not answer");
    assert.ok(asked.length >= 1, "the client was asked");
    store.down = false;
    await raiseFence(store, cli, 1, 1000); // another relay had taken the conversation over
    assert.equal(await admitting, false, "fenced: the other relay runs the line");
    assert.equal(link.fencedOff, true);
    await record.saved();
    assert.equal(lastWritten(record.record), 1, "the record says it was not written");
  });
  await link.closeRecord();
});

Deno.test("StoreLink.stopInput() ends a line's wait for the store", async () => {
  const { store, link } = await deadLink(500);
  store.down = true;
  const admitting = link.admitsInput(1, () => Promise.resolve(false));
  await new Promise((resolve) => setTimeout(resolve, 200));
  link.stopInput();
  assert.equal(await admitting, false, "unwritten");
  store.down = false;
  await link.closeRecord();
});

Deno.test("StoreLink.retake() through a store that does not answer: not yet, the CLI kept", async () => {
  const { store, record, link } = await deadLink(300);
  store.down = true;
  const started = performance.now();
  assert.equal(await link.retake(), false, "unknown: the client may not resume here yet");
  assert.ok(performance.now() - started >= 100, "the store was asked again within its bound");
  assert.equal(link.fencedOff, false, "the CLI is kept: its transcript may be ahead of the store");
  store.down = false;
  assert.equal(await link.retake(), true, "the store back, nobody else ran it: resumes here");
  assert.equal(link.fencedOff, false);
  // Another relay resumed it and wrote a line this CLI never had; the store goes down again.
  await raiseFence(store, BASE.cliSessionId, 1, 1000);
  await store.append(await recordKey("t"), [{ type: RECORD_TYPE, ...BASE, epoch: 1, applied: 1 }]);
  store.down = true;
  assert.equal(await link.retake(), false);
  store.down = false;
  assert.equal(await link.retake(), true);
  assert.equal(link.fencedOff, true, "behind: it stands down, the client resumes from the store");
  await link.fenced; // settled
  assert.equal(record.record.epoch, 0);
  await link.closeRecord();
});
