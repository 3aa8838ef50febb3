/**
 * The transcript mirror: batches, retries, catch-up from the local file when
 * the store stays down, no duplicates and nothing lost; and through a
 * session, mirror frames never reach subscribers.
 */

import assert from "node:assert/strict";
import { checkMirrorOptions, TranscriptMirror } from "../../src/session/_mirror.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import type { MirrorEvent, MirrorTarget } from "../../src/store/mirror_target.ts";
import type { SessionKey, SessionStoreEntry } from "../../src/store/session_store.ts";
import { DuplexSession } from "../../mod.ts";
import { ScriptedCli } from "../../src/testing/mod.ts";
import type { Transport } from "../../src/transport/transport.ts";

const FILE = "/cfg/projects/-work/s1.jsonl";
const KEY: SessionKey = { projectKey: "-work", sessionId: "s1" };

/** A store that records appends and fails while `down` is true. */
class FlakyStore {
  down = false;
  /** How long each append takes before it settles. */
  delayMs = 0;
  calls = 0;
  readonly rows: SessionStoreEntry[] = [];
  async append(_key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    this.calls++;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (this.down) throw new Error("store down");
    for (const entry of entries) {
      if (entry.uuid !== undefined && this.rows.some((row) => row.uuid === entry.uuid)) continue;
      this.rows.push(entry);
    }
  }
  load(): Promise<SessionStoreEntry[] | null> {
    return Promise.resolve(this.rows.length ? [...this.rows] : null);
  }
}

function entry(n: number, uuid = true): SessionStoreEntry {
  return uuid ? { type: "user", uuid: `u${n}`, n } : { type: "last-prompt", n };
}

function setUp(options: MirrorTarget["options"] = {}) {
  const store = new FlakyStore();
  const local: SessionStoreEntry[] = [];
  const events: MirrorEvent[] = [];
  const target: MirrorTarget = {
    store,
    keyOf: (path) => path.startsWith("/cfg/projects/") ? KEY : undefined,
    readLocal: () => Promise.resolve([...local]),
    options: { flushMs: 10, catchUpDelayMs: 20, ...options },
    release: (caughtUp) => {
      released.push(caughtUp);
      return Promise.resolve(undefined);
    },
  };
  const released: boolean[] = [];
  const mirror = new TranscriptMirror(target, (event) => events.push(event));
  /** The CLI writes lines locally, then mirrors them. */
  const write = (...entries: SessionStoreEntry[]) => {
    local.push(...entries);
    mirror.take({ type: "transcript_mirror", filePath: FILE, entries });
  };
  return { store, local, events, mirror, write, released };
}

async function until(predicate: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("Timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

Deno.test("transcript mirror", async (t) => {
  await t.step("entries are batched by time and appended in order", async () => {
    const { store, mirror, write } = setUp();
    write(entry(1), entry(2));
    write(entry(3, false));
    assert.equal(store.calls, 0, "nothing before the flush delay");
    await until(() => store.rows.length === 3);
    assert.equal(store.calls, 1, "one batch");
    assert.deepEqual(store.rows.map((row) => row.n), [1, 2, 3]);
    await mirror.close();
  });

  await t.step("a batch is flushed at its count bound and at a turn's end", async () => {
    const { store, mirror, write } = setUp({ flushMs: 60_000, maxBatchEntries: 2 });
    write(entry(1), entry(2));
    await until(() => store.rows.length === 2);
    write(entry(3));
    mirror.flushAll();
    await until(() => store.rows.length === 3);
    await mirror.close();
  });

  await t.step("a rejected append is retried", async () => {
    const { store, mirror, write } = setUp();
    store.down = true;
    write(entry(1));
    await until(() => store.calls === 1);
    store.down = false;
    await until(() => store.rows.length === 1);
    assert.equal(store.calls, 2);
    await mirror.close();
  });

  await t.step("a store down for long is caught up from the local file, once each", async () => {
    const { store, events, mirror, write, local } = setUp({ attempts: 2 });
    write(entry(1));
    await until(() => store.rows.length === 1);
    store.down = true;
    write(entry(2), entry(3, false));
    await until(() => events.some((e) => e.status === "failed"));
    write(entry(4)); // while behind: the local file has it
    store.down = false;
    await until(() => events.some((e) => e.status === "caught_up"));
    write(entry(5));
    await mirror.close();
    assert.deepEqual(store.rows.map((row) => row.n), [1, 2, 3, 4, 5], "nothing lost, no dup");
    assert.deepEqual(store.rows, local);
    const failed = events.find((e) => e.status === "failed");
    assert.ok(failed?.status === "failed" && failed.retryInMs === 20);
  });

  await t.step("catch-ups back off, doubling up to maxCatchUpDelayMs", async () => {
    const { store, events, mirror, write } = setUp({ attempts: 1, maxCatchUpDelayMs: 50 });
    store.down = true;
    write(entry(1));
    await until(() => events.filter((e) => e.status === "failed").length >= 5);
    const waits = events.flatMap((e) => e.status === "failed" ? [e.retryInMs] : []);
    assert.deepEqual(waits.slice(0, 5), [20, 40, 50, 50, 50]);
    store.down = false;
    await until(() => events.some((e) => e.status === "caught_up"), 1000);
    await mirror.close();
    assert.deepEqual(store.rows.map((row) => row.n), [1]);
  });

  await t.step("frames still in the pipe after a catch-up are not appended twice", async () => {
    const { store, events, mirror, local } = setUp({ attempts: 1 });
    const take = (entries: SessionStoreEntry[]) =>
      mirror.take({ type: "transcript_mirror", filePath: FILE, entries });
    store.down = true;
    local.push(entry(1));
    take([entry(1)]);
    await until(() => events.some((e) => e.status === "failed"));
    store.down = false;
    local.push(entry(2, false)); // written, its frame not read yet
    await until(() => events.some((e) => e.status === "caught_up"));
    take([entry(2, false)]); // the late frame
    take([entry(3)]);
    local.push(entry(3));
    await mirror.close();
    assert.deepEqual(store.rows.map((row) => row.n), [1, 2, 3]);
  });

  await t.step("close() flushes what waits and tries a last catch-up", async () => {
    const { store, mirror, write, events } = setUp({ flushMs: 60_000, attempts: 1 });
    store.down = true;
    write(entry(1));
    mirror.flushAll();
    await until(() => events.some((e) => e.status === "failed"));
    store.down = false;
    write(entry(2));
    await mirror.close();
    assert.deepEqual(store.rows.map((row) => row.n), [1, 2]);
  });

  await t.step("close() counts a transcript whose catch-up is in flight as behind", async () => {
    const { store, mirror, write, events, released } = setUp({
      attempts: 1,
      closeFlushMs: 60,
    });
    store.down = true;
    write(entry(1));
    mirror.flushAll();
    await until(() => events.some((e) => e.status === "failed"));
    store.delayMs = 100; // the close's catch-up is still failing when its bound passes
    await mirror.close();
    assert.deepEqual(released, [false], "a private copy is kept, not removed");
    assert.equal(events.at(-1)?.status, "dropped");
  });

  await t.step("close() with linger catches the store up after the close", async () => {
    const { store, mirror, write, events, released } = setUp({ attempts: 1, closeFlushMs: 30 });
    store.down = true;
    write(entry(1), entry(2));
    mirror.flushAll();
    await until(() => events.some((e) => e.status === "failed"));
    const linger = new AbortController();
    await mirror.close({ signal: linger.signal, forMs: 5_000 });
    assert.deepEqual(released, [false], "released as behind: the local file stays");
    assert.equal(store.rows.length, 0);
    store.down = false;
    await mirror.lingering;
    assert.deepEqual(store.rows.map((row) => row.n), [1, 2], "caught up after the close");
    assert.equal(events.at(-1)?.status, "caught_up");
  });

  await t.step(
    "a lingering catch-up ends when aborted, or after forMs, reported dropped",
    async () => {
      for (const end of ["abort", "forMs"] as const) {
        const { store, mirror, write, events } = setUp({ attempts: 1, closeFlushMs: 30 });
        store.down = true;
        write(entry(1));
        mirror.flushAll();
        await until(() => events.some((e) => e.status === "failed"));
        const linger = new AbortController();
        await mirror.close({ signal: linger.signal, forMs: end === "forMs" ? 100 : 60_000 });
        if (end === "abort") linger.abort();
        await mirror.lingering;
        assert.equal(events.at(-1)?.status, "dropped", end);
        assert.equal(store.rows.length, 0, end);
      }
    },
  );

  await t.step("a path outside the projects folder is dropped and reported", async () => {
    const { store, mirror, events } = setUp();
    mirror.take({ type: "transcript_mirror", filePath: "/elsewhere/x.jsonl", entries: [entry(1)] });
    await mirror.close();
    assert.equal(store.calls, 0);
    assert.equal(events[0]?.status, "dropped");
  });

  await t.step("without a local reader, a failed batch is reported lost", async () => {
    const store = new FlakyStore();
    store.down = true;
    const events: MirrorEvent[] = [];
    const mirror = new TranscriptMirror(
      { store, keyOf: () => KEY, options: { flushMs: 1, attempts: 1 } },
      (event) => events.push(event),
    );
    mirror.take({ type: "transcript_mirror", filePath: FILE, entries: [entry(1)] });
    await until(() => events.length === 2);
    assert.deepEqual(events.map((e) => e.status), ["failed", "dropped"]);
    await mirror.close();
  });
});

Deno.test("a session with a mirror: frames go to the store, never to subscribers", async () => {
  const store = new FlakyStore();
  const cli = new ScriptedCli({ echo: true });
  const mirror: MirrorTarget = { store, keyOf: () => KEY, options: { flushMs: 5 } };
  await using session = await DuplexSession.start({
    transport: async (context): Promise<Transport> => {
      const inner = await cli.transport(context);
      return {
        readable: inner.readable,
        closed: inner.closed,
        info: { ...inner.info, mirror },
        write: (line) => inner.write(line),
        endInput: () => inner.endInput(),
        close: () => inner.close(),
        [Symbol.asyncDispose]: () => inner[Symbol.asyncDispose](),
      };
    },
  });
  const sub = session.subscribe();
  cli.emit({ type: "transcript_mirror", filePath: FILE, entries: [entry(1)] });
  await session.send("hi");
  await until(() => store.rows.length === 1);
  await session.close();
  const types: string[] = [];
  for await (const event of sub) types.push(event.type);
  assert.ok(types.includes("result") && types.at(-1) === "exit", `the turn seen: ${types}`);
  assert.ok(!types.includes("transcript_mirror"), types.join(","));
  assert.deepEqual(store.rows, [entry(1)]);
});

Deno.test("mirror options are checked when the transport is made", () => {
  assert.equal(checkMirrorOptions().maxBatchEntries, 500);
  assert.equal(checkMirrorOptions({ flushMs: Infinity }).flushMs, Infinity);
  for (
    const bad of [{ attempts: 0 }, { maxBatchEntries: 1.5 }, { flushMs: -1 }, { closeFlushMs: 0 }]
  ) {
    assert.throws(() => checkMirrorOptions(bad), RangeError, JSON.stringify(bad));
    assert.throws(
      () => subprocess({ sessionStore: new FlakyStore(), mirror: bad }),
      RangeError,
      JSON.stringify(bad),
    );
  }
});
