/**
 * Found by the fleet soak (1 short run in 20, and 4 results of one
 * conversation delivered twice in another): the order of a takeover
 * against the relay that ran the conversation before.
 *
 * - A relay wrote a line to its CLI, and its record of it landed only after
 *   another relay had taken the conversation over (PostgreSQL busy under
 *   three relays): the new relay wrote the line again, and two CLIs ran the
 *   turn. A relay now records that a line may be written before it checks
 *   the fence, and one taking over waits for that write to settle.
 * - A client came back to a relay still holding its session after another
 *   relay ran turns of it: the first relay took the conversation back with
 *   a CLI behind. It now stands down instead, and the client resumes from
 *   the store.
 *
 * And by its run under load (3 results delivered twice, 3 turns run twice,
 * PostgreSQL restarting after a relay's stall): a relay whose store did not
 * answer went on as if nothing had changed.
 *
 * - Taking the conversation back, it resumed its client live when the store
 *   did not answer the fence. It now asks again within its bound, then
 *   refuses the client `busy` (its CLI kept) until the store answers.
 * - Reading the lines its client sent before the stall, it wrote them blind
 *   when the store did not take its record. It now does so only while the
 *   client answers on that connection; otherwise the line waits for the
 *   store, and then for the fence.
 *
 * And by its count of turns delivered but missing from the store's history
 * (16 turns of about 28,800 in 30 short runs; once a conversation that could
 * never be resumed): a turn reached its client while its transcript's append
 * failed, and another relay took the conversation over before the old one's
 * mirror caught the store up. The client now names the last turn it has a
 * result of when it resumes, and a relay resuming from the store refuses
 * `busy` until the store holds it.
 */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../../mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { RELAY_SESSIONS_PROJECT_KEY, type RelayOptions } from "../../../adapters/relay/mod.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { TOKEN } from "./_client.ts";
import { standInRelay } from "./_stand_in_relay.ts";
import { cutProxy, journalOf } from "./_cut_proxy.ts";
import { LOST_TERMINAL_REASON } from "../../../src/wire/wire.ts";

const PROJECT = "order";

/**
 * One relay's way to a shared store, whose appends can be held back: while
 * holding, transcript appends and record snapshots that count input
 * `from` or later as written wait, to land in that order at `release()`.
 */
class HeldView implements SessionStore {
  readonly #store: SessionStore;
  #from: number | undefined;
  readonly #transcripts: (() => void)[] = [];
  readonly #records: (() => void)[] = [];
  constructor(store: SessionStore) {
    this.#store = store;
  }
  hold(from: number): void {
    this.#from = from;
  }
  async release(): Promise<void> {
    this.#from = undefined;
    for (const go of this.#transcripts.splice(0)) go();
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const go of this.#records.splice(0)) go();
  }
  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const from = this.#from;
    const held = from === undefined
      ? undefined
      : key.projectKey !== RELAY_SESSIONS_PROJECT_KEY
      ? this.#transcripts
      : entries.some((entry) => typeof entry.applied === "number" && entry.applied >= from)
      ? this.#records
      : undefined;
    if (held === undefined) return this.#store.append(key, entries);
    return new Promise<void>((resolve) => held.push(resolve))
      .then(() => this.#store.append(key, entries));
  }
  load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.#store.load(key);
  }
}

/**
 * One relay's way to a shared store, which refuses every call while `down` (an outage it sees),
 * and transcript appends while `transcriptsDown` (its records' snapshots land first).
 */
class OutageView implements SessionStore {
  readonly #store: SessionStore;
  down = false;
  transcriptsDown = false;
  constructor(store: SessionStore) {
    this.#store = store;
  }
  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    const refused = this.down ||
      (this.transcriptsDown && key.projectKey !== RELAY_SESSIONS_PROJECT_KEY);
    return refused ? Promise.reject(new Error("store down")) : this.#store.append(key, entries);
  }
  load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.down ? Promise.reject(new Error("store down")) : this.#store.load(key);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two relays (a through `viewOfA`), a proxy to a, the stand-in's journal, and a conversation whose
 * first turn a ran, its client reconnecting up to `settings.attempts` times (a with `settings.a`);
 * `fn` runs with them.
 */
async function withRelays<View extends SessionStore>(
  viewOfA: (store: SessionStore) => View,
  fn: (
    parts: {
      session: DuplexSession;
      link: ReturnType<typeof cutProxy>;
      ports: { a: number; b: number };
      journal: string;
      store: SessionStore;
      view: View;
      sessionId: string;
    },
  ) => Promise<void>,
  settings: { readonly attempts?: number; readonly a?: Partial<RelayOptions> } = {},
): Promise<void> {
  const { attempts = 40 } = settings;
  const root = await makeTestDir();
  const store = new InMemorySessionStore();
  const journal = `${root}/journal`;
  await Deno.mkdir(journal);
  const relay = (name: string, through: SessionStore, options: Partial<RelayOptions> = {}) =>
    standInRelay(root, name, through, {
      projectKey: PROJECT,
      env: { SOAK_JOURNAL: journal },
      relay: { storeTimeoutMs: 3_000, graceMs: 20_000, policy: { allowResume: true }, ...options },
    });
  const view = viewOfA(store);
  const a = relay("a", view, settings.a);
  const b = relay("b", store);
  const link = cutProxy(a.port);
  try {
    await using session = await DuplexSession.start({
      transport: remote({
        url: link.url,
        token: TOKEN,
        reconnect: { attempts, initialDelayMs: 50, maxDelayMs: 200 },
      }),
    });
    const first = await session.send("first", { timeoutMs: 10_000 });
    const sessionId = first.result.sessionId!;
    await fn({ session, link, ports: { a: a.port, b: b.port }, journal, store, view, sessionId });
  } finally {
    await link.close();
    await a.close();
    await b.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}

/* Waits (bounded) until `check` holds. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 10_000) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/* How many processes wrote each uuid (each process's own entries, not what it loaded). */
async function writers(journal: string, sessionId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const file of Deno.readDir(`${journal}/${sessionId}`)) {
    const lines = (await Deno.readTextFile(`${journal}/${sessionId}/${file.name}`)).trim()
      .split("\n").slice(1).map((line) => JSON.parse(line) as { uuid: string });
    for (const { uuid } of lines) counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  }
  return counts;
}

/*
 * How every test here ends: `count` CLIs ran the conversation, no entry was written by two (no turn
 * run twice), and the store holds what the last one holds. Returns each CLI's journal.
 */
async function oneHistory(
  journal: string,
  store: SessionStore,
  sessionId: string,
  count: number,
): Promise<string[][]> {
  const processes = await journalOf(journal, sessionId);
  assert.equal(processes.length, count, `${count} CLIs ran the conversation`);
  const twice = [...(await writers(journal, sessionId))].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], "no entry written by two CLIs (no turn run twice)");
  const stored = ((await store.load({ projectKey: PROJECT, sessionId })) ?? [])
    .map((entry) => entry.uuid);
  assert.deepEqual(stored, processes.at(-1), "the store holds what the last CLI holds");
  return processes;
}

Deno.test("relay: a line the old relay wrote, recorded late, is not written again by the relay taking over", async () => {
  await withRelays((store) => new HeldView(store), async (parts) => {
    const { session, link, ports, journal, store, view, sessionId } = parts;
    view.hold(2);
    try {
      // A writes the line to its CLI, which takes it; A's record of it and its transcript wait.
      const second = session.send("second", { timeoutMs: 4_000 }).catch((error) => error);
      await until("a's CLI took the second line", async () => {
        const processes = await journalOf(journal, sessionId);
        return processes.length === 1 && processes[0]!.length >= 3;
      });
      link.point(ports.b); // the balancer's choice changed: b takes the conversation over
      link.cut();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await view.release(); // a's appends land, after b's fence and its settle
      const lost = await second;
      assert.ok(!(lost instanceof Error), `an error result, not a timeout: ${lost}`);
      // Its result was a's, and went with it: the client ends the turn with an error result.
      assert.equal(lost.result.isError, true);
      assert.equal(lost.result.terminalReason, LOST_TERMINAL_REASON);
      assert.match(lost.result.errors.join(" "), /The CLI that took this turn is gone/);
    } finally {
      await view.release();
    }
    const third = await session.send("third", { timeoutMs: 10_000 });
    assert.equal(third.result.isError, false, "the conversation went on through b");
    assert.equal(third.result.sessionId, sessionId);
    await oneHistory(journal, store, sessionId, 2); // b resumed it in a CLI of its own
  });
});

Deno.test("relay: a relay whose client comes back after another relay ran its turns stands down", async () => {
  await withRelays(
    (store) => store,
    async ({ session, link, ports, journal, store, sessionId }) => {
      link.point(ports.b);
      link.cut(); // b resumes it from the store; a keeps its CLI in the grace
      const second = await session.send("second", { timeoutMs: 10_000 });
      assert.equal(second.result.isError, false, "b ran the second turn");
      link.point(ports.a);
      link.cut(); // back to a, whose CLI never had the second turn
      const third = await session.send("third", { timeoutMs: 10_000 });
      assert.equal(third.result.isError, false, "the conversation went on through a");
      assert.equal(third.result.sessionId, sessionId);
      assert.match(third.result.text, /turn 3 of/, "a CLI that had the second turn");
      await oneHistory(journal, store, sessionId, 3); // a resumed it from the store in a new CLI
      await session.close();
      assert.equal(session.exitStatus.state, "completed");
    },
  );
});

Deno.test("relay: a client back at a relay whose store does not answer waits for it, then the relay stands down", async () => {
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, ports, journal, store, view, sessionId } = parts;
    link.point(ports.b);
    link.cut(); // b resumes it from the store; a keeps its CLI in the grace
    const second = await session.send("second", { timeoutMs: 10_000 });
    assert.equal(second.result.isError, false, "b ran the second turn");
    view.down = true; // a's store goes down, longer than its bound (3 s)
    const up = setTimeout(() => view.down = false, 4_500);
    try {
      link.point(ports.a);
      link.cut(); // back to a, whose CLI never had the second turn
      const third = await session.send("third", { timeoutMs: 20_000 });
      assert.equal(third.result.isError, false, "the conversation went on through a");
      assert.match(third.result.text, /turn 3 of/, "a CLI that had the second turn");
    } finally {
      clearTimeout(up);
      view.down = false;
    }
    await oneHistory(journal, store, sessionId, 3); // a resumed it from the store in a new CLI
  });
});

Deno.test("relay: a line a stalled relay reads after its client left, its store down, is not written", async () => {
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, ports, journal, store, view, sessionId } = parts;
    const [before] = await journalOf(journal, sessionId);
    link.stall(); // a's host stops: what the client sends waits in its socket
    const second = session.send("second", { timeoutMs: 10_000 });
    await sleep(200);
    link.point(ports.b);
    link.leave(); // the client gives up on a; b takes the conversation over and runs the line
    assert.equal((await second).result.isError, false, "b ran the second turn");
    view.down = true; // the store goes down as a's host comes back
    try {
      await link.release(); // a reads the second line, then its client's end
      await sleep(1_500);
      const processes = await journalOf(journal, sessionId);
      assert.deepEqual(processes[0], before, "a's CLI was not given the line");
    } finally {
      view.down = false;
    }
    const third = await session.send("third", { timeoutMs: 10_000 });
    assert.match(third.result.text, /turn 3 of/, "b's CLI, which had the second turn");
    await sleep(500); // a, its store back, learns of b's fence
    const processes = await oneHistory(journal, store, sessionId, 2);
    assert.deepEqual(processes[0], before, "a's CLI never had the line");
  });
});

Deno.test("relay: a client back at its relay during a store outage resumes the same CLI once the store answers", async () => {
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, journal, store, view, sessionId } = parts;
    view.down = true; // longer than a's bound (3 s)
    const up = setTimeout(() => view.down = false, 4_000);
    try {
      const second = await session.send("second", { timeoutMs: 10_000 });
      assert.equal(second.result.isError, false, "turns go on through the outage");
      link.cut(); // the client comes back to a, which cannot read the fence yet
      const third = await session.send("third", { timeoutMs: 20_000 });
      assert.match(third.result.text, /turn 3 of/, "the CLI that had the second turn");
    } finally {
      clearTimeout(up);
      view.down = false;
    }
    await until("the store caught up", async () => {
      const stored = ((await store.load({ projectKey: PROJECT, sessionId })) ?? []).length;
      return stored === (await journalOf(journal, sessionId))[0]!.length;
    });
    await oneHistory(journal, store, sessionId, 1); // a kept its CLI
  });
});

Deno.test("relay: a takeover waits until the store holds the turn its client was last given", async () => {
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, ports, journal, store, view, sessionId } = parts;
    view.transcriptsDown = true; // a's transcript appends fail; its records land
    let second;
    try {
      second = await session.send("second", { timeoutMs: 10_000 });
      assert.equal(second.result.isError, false, "turns go on through the outage");
      const stored = JSON.stringify(await store.load({ projectKey: PROJECT, sessionId }));
      assert.ok(!stored.includes(second.uuid), "the store lacks the second turn");
      link.point(ports.b);
      link.cut(); // b would resume a history without the second turn: it refuses, busy
      await sleep(1_000);
    } finally {
      view.transcriptsDown = false; // a's mirror catches the store up, unfenced
    }
    const third = await session.send("third", { timeoutMs: 20_000 });
    assert.equal(third.result.isError, false, "the conversation went on through b");
    assert.match(third.result.text, /turn 3 of/, "a CLI that had the second turn");
    const processes = await oneHistory(journal, store, sessionId, 2);
    assert.ok(processes[1]!.includes(second.uuid), "b's CLI resumed the second turn");
  });
});

Deno.test("relay: a client whose last turn never reaches the store ends with busy naming it", async () => {
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, ports, journal, view, sessionId } = parts;
    view.transcriptsDown = true; // for good: a's mirror never catches the store up
    const second = await session.send("second", { timeoutMs: 10_000 });
    link.point(ports.b);
    link.cut();
    const third = await session.send("third", { timeoutMs: 30_000 }).catch((error) => error);
    assert.ok(isDuplexError(third, "process_exited"), String(third));
    assert.match(
      third.exit?.reason ?? "",
      new RegExp(`busy: .*transcript lacks the turn of user line ${second.uuid}`),
    );
    assert.equal((await journalOf(journal, sessionId)).length, 1, "b started no CLI");
  }, { attempts: 5 });
});

Deno.test("relay: a session that ends with the store behind keeps catching it up; the conversation resumes elsewhere whole", async () => {
  const a = {
    graceMs: 300, // the client's drop ends a's session (it hibernates) while the store is down
    cli: { mirror: { closeFlushMs: 200, catchUpDelayMs: 100, maxCatchUpDelayMs: 200 } },
  };
  await withRelays((store) => new OutageView(store), async (parts) => {
    const { session, link, ports, journal, store, view, sessionId } = parts;
    view.transcriptsDown = true;
    let second;
    try {
      second = await session.send("second", { timeoutMs: 10_000 });
      link.point(ports.b);
      link.cut(); // b refuses while the store lacks the second turn; a's session ends meanwhile
      await sleep(1_500); // past a's grace and its mirror's close bound
      const stored = JSON.stringify(await store.load({ projectKey: PROJECT, sessionId }));
      assert.ok(!stored.includes(second.uuid), "the store still lacks the second turn");
    } finally {
      view.transcriptsDown = false; // a's ended session's mirror catches the store up
    }

    const third = await session.send("third", { timeoutMs: 20_000 });
    assert.equal(third.result.isError, false, "the conversation went on through b");
    assert.match(third.result.text, /turn 3 of/, "a CLI that had the second turn");
    const processes = await oneHistory(journal, store, sessionId, 2);
    assert.ok(processes[1]!.includes(second.uuid), "b's CLI resumed the second turn");
  }, { a });
});
