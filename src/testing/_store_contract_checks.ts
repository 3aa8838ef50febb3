// This module is browser compatible.
/* The checks of the session store conformance suite, one function per
 * contract. Each gets `fresh()`, which opens a new, empty store. */

import { sleep } from "../_deadline.ts";
import { jsonEqual } from "../_values.ts";
import { show } from "./_conformance_assert.ts";
import { checkSummaryCopies } from "./_summary_contract_check.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../store/session_store.ts";

/** Opens a new, empty store for one check. */
export type FreshStore = () => Promise<SessionStore>;

/** A contract check: throws when the store breaks the contract. */
export type StoreCheck = (fresh: FreshStore) => Promise<void>;

const KEY: SessionKey = { projectKey: "conformance-project", sessionId: "session-1" };
const SUB: SessionKey = { ...KEY, subpath: "subagents/agent-1" };

/** A test entry (its `type` is irrelevant to the contracts). */
function e(fields: Record<string, unknown>): SessionStoreEntry {
  return { type: "x", ...fields };
}

/** Test entries with these uuids, numbered `n: 1, 2, …` in order. */
function numbered(...uuids: string[]): SessionStoreEntry[] {
  return uuids.map((uuid, i) => e({ uuid, n: i + 1 }));
}

/** Throws unless `actual` deep-equals `expected` (JSON, key order free). */
function same(actual: unknown, expected: unknown, what: string): void {
  if (!jsonEqual(actual, expected)) {
    throw new Error(`${what}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

function ok(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

async function sessionIds(store: SessionStore, projectKey: string): Promise<string[]> {
  return sorted((await store.listSessions!(projectKey)).map((ref) => ref.sessionId));
}

async function mtimeOf(store: SessionStore, key: SessionKey): Promise<number> {
  const ref = (await store.listSessions!(key.projectKey)).find((r) =>
    r.sessionId === key.sessionId
  );
  if (!ref) throw new Error(`listSessions(${show(key.projectKey)}) lacks ${show(key.sessionId)}`);
  return ref.mtime;
}

/** Every kind of JSON value an entry may hold, in an order a store may change. */
const RICH: SessionStoreEntry[] = [
  e({
    uuid: "r1",
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: [{ type: "text", text: 'é 漢字 🦀 "quoted" \\ \n tab\t' }] },
    numbers: [0, -1.5, 1e21, 2 ** 53 - 1, 1e-7],
    flags: { yes: true, no: false, none: null },
    empty: { object: {}, array: [], string: "" },
  }),
  e({ uuid: "r2", z: 1, a: 2, m: { y: [1, { b: 2, a: 1 }], x: "x" } }),
  e({ uuid: "r3", big: "x".repeat(100_000) }),
  { type: "summary", summary: "no uuid here" },
];

export const checkRoundTrip: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, RICH);
  same(await store.load(KEY), RICH, "load() after one append()");
};

export const checkUnknownKey: StoreCheck = async (fresh) => {
  const store = await fresh();
  same(await store.load(KEY), null, "load() of a key never written");
  await store.append(KEY, [e({ uuid: "a" })]);
  same(await store.load({ ...KEY, subpath: "subagents/agent-none" }), null, "an unknown subpath");
  same(await store.load({ ...KEY, sessionId: "session-none" }), null, "an unknown session");
  same(await store.load({ ...KEY, projectKey: "project-none" }), null, "an unknown project");
};

export const checkOrder: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, [e({ uuid: "z", n: 1 })]);
  await store.append(KEY, [e({ uuid: "a", n: 2 }), e({ uuid: "m", n: 3 })]);
  await store.append(KEY, [e({ uuid: "b", n: 4 })]);
  same(await store.load(KEY), numbered("z", "a", "m", "b"), "three appends, loaded");
};

export const checkEmptyAppend: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, [e({ uuid: "a" })]);
  await store.append(KEY, []);
  same(await store.load(KEY), [e({ uuid: "a" })], "after append(key, [])");
};

export const checkUuidDedup: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, [e({ uuid: "a", n: 1 }), e({ uuid: "b", n: 2 })]);
  await store.append(KEY, [e({ uuid: "b", n: 2 }), e({ uuid: "c", n: 3 })]);
  await store.append(KEY, [e({ uuid: "a", n: 1 })]);
  await store.append(KEY, [e({ uuid: "d", n: 4 }), e({ uuid: "d", n: 4 })]);
  same(await store.load(KEY), numbered("a", "b", "c", "d"), "replayed entries, stored once each");
  await store.append(SUB, [e({ uuid: "a", n: 1 })]);
  same(await store.load(SUB), [e({ uuid: "a", n: 1 })], "the same uuid under another key");
  const retries = Array.from({ length: 10 }, () => store.append(KEY, [e({ uuid: "r", n: 5 })]));
  await Promise.all(retries);
  const loaded = await store.load(KEY) ?? [];
  same(loaded.filter((entry) => entry.uuid === "r").length, 1, "ten concurrent retries, stored");
};

export const checkNoUuid: StoreCheck = async (fresh) => {
  const store = await fresh();
  const tag = { type: "tag", tag: "t", sessionId: KEY.sessionId };
  await store.append(KEY, [tag]);
  await store.append(KEY, [tag, e({ uuid: "a" })]);
  await store.append(KEY, [tag, tag, e({ uuid: "b" })]);
  same(await store.load(KEY), [tag, tag, e({ uuid: "a" }), tag, tag, e({ uuid: "b" })], "no uuid");
};

export const checkSubkeys: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, [e({ uuid: "m" })]);
  await store.append(SUB, [e({ uuid: "s" })]);
  const nested = { ...KEY, subpath: "subagents/nested/agent-2" };
  await store.append(nested, [e({ uuid: "n" })]);
  same(await store.load(KEY), [e({ uuid: "m" })], "the main transcript");
  same(await store.load(SUB), [e({ uuid: "s" })], "a subagent transcript");
  same(await store.load(nested), [e({ uuid: "n" })], "a nested subagent transcript");
};

export const checkProjectIsolation: StoreCheck = async (fresh) => {
  const store = await fresh();
  const a = { projectKey: "A", sessionId: "s1" };
  const b = { projectKey: "B", sessionId: "s1" };
  await store.append(a, [e({ from: "A" })]);
  await store.append(b, [e({ from: "B" })]);
  same(await store.load(a), [e({ from: "A" })], "project A");
  same(await store.load(b), [e({ from: "B" })], "project B");
  if (store.listSessions) {
    same(await sessionIds(store, "A"), ["s1"], "listSessions(A)");
    same(await sessionIds(store, "B"), ["s1"], "listSessions(B)");
  }
};

/** Keys that a store joining fields with `/`, or mapping them to paths, could confuse. */
const ODD_KEYS: SessionKey[] = [
  { projectKey: "a/b", sessionId: "c" },
  { projectKey: "a", sessionId: "b/c" },
  { projectKey: "a", sessionId: "b", subpath: "c" },
  { projectKey: "../../outside", sessionId: "../x" },
  { projectKey: ".", sessionId: ".." },
  { projectKey: "Case", sessionId: "s" },
  { projectKey: "case", sessionId: "s" },
  { projectKey: "with space %2F ünï 漢 🦀", sessionId: "s:1?*<>|\\" },
  { projectKey: "é".repeat(300), sessionId: "ß".repeat(300), subpath: "x/".repeat(40) + "y" },
];

export const checkKeySeparation: StoreCheck = async (fresh) => {
  const store = await fresh();
  for (const [i, key] of ODD_KEYS.entries()) await store.append(key, [e({ uuid: "u", i })]);
  for (const [i, key] of ODD_KEYS.entries()) {
    same(await store.load(key), [e({ uuid: "u", i })], `load(${show(key)})`);
  }
  if (store.listSessions) {
    same(await sessionIds(store, "a"), ["b/c"], `listSessions("a")`);
    same(await sessionIds(store, "a/b"), ["c"], `listSessions("a/b")`);
    same(await sessionIds(store, "Case"), ["s"], `listSessions("Case")`);
    same(await sessionIds(store, ODD_KEYS[7]!.projectKey), [ODD_KEYS[7]!.sessionId], "odd chars");
  }
  if (store.listSubkeys) {
    same(await store.listSubkeys(ODD_KEYS[8]!), [ODD_KEYS[8]!.subpath], "a long subpath");
  }
};

export const checkCopies: StoreCheck = async (fresh) => {
  const store = await fresh();
  const entry = { type: "x", uuid: "a", list: [1], nested: { n: 1 } };
  await store.append(KEY, [entry]);
  entry.list.push(2);
  entry.nested.n = 2;
  const first = await store.load(KEY);
  same(
    first,
    [e({ uuid: "a", list: [1], nested: { n: 1 } })],
    "after changing the appended object",
  );
  (first![0] as unknown as { list: number[] }).list.push(3);
  first!.push(e({ uuid: "b" }));
  same(
    await store.load(KEY),
    [e({ uuid: "a", list: [1], nested: { n: 1 } })],
    "after changing a load",
  );
  await checkSummaryCopies(await fresh());
};

export const checkListSessions: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append({ projectKey: "proj", sessionId: "a" }, [e({ n: 1 })]);
  await store.append({ projectKey: "proj", sessionId: "b" }, [e({ n: 1 })]);
  await store.append({ projectKey: "proj", sessionId: "b", subpath: "subagents/agent-1" }, [
    e({ n: 1 }),
  ]);
  await store.append({ projectKey: "proj", sessionId: "only-sub", subpath: "subagents/x" }, [
    e({ n: 1 }),
  ]);
  await store.append({ projectKey: "other", sessionId: "c" }, [e({ n: 1 })]);
  const listed = await store.listSessions!("proj");
  same(sorted(listed.map((ref) => ref.sessionId)), ["a", "b"], "listSessions(proj)");
  for (const { mtime } of listed) {
    ok(Number.isSafeInteger(mtime) && mtime > 1e12, `mtime ${mtime} is not integer epoch ms`);
  }
  same(await store.listSessions!("never-written"), [], "listSessions of an unknown project");
};

export const checkMtime: StoreCheck = async (fresh) => {
  const store = await fresh();
  const one = { projectKey: "proj", sessionId: "one" };
  const two = { projectKey: "proj", sessionId: "two" };
  await store.append(one, [e({ n: 1 })]);
  await sleep(5);
  await store.append(two, [e({ n: 1 })]);
  const [first, second] = [await mtimeOf(store, one), await mtimeOf(store, two)];
  ok(second > first, `a later append has a later mtime: ${first} then ${second}`);
  await sleep(5);
  await store.append(one, [e({ n: 2 })]);
  const again = await mtimeOf(store, one);
  ok(again > second, `appending again moves mtime forward: ${second} then ${again}`);
};

/*
 * A listing as the official SDK reads it: `.slice().sort((a, b) => b.mtime - a.mtime)`, newest
 * first (`continue` takes the first). The sort is stable: sessions that share an mtime keep
 * the store's order, so a store may stamp two appends in one millisecond alike and still
 * list them in append order.
 */
async function asTheSdkSorts(store: SessionStore, projectKey: string): Promise<string[]> {
  const listed = await store.listSessions!(projectKey);
  return listed.slice().sort((a, b) => b.mtime - a.mtime).map((ref) => ref.sessionId);
}

/* The sessions of a run of appends, the last appended to first. */
function lastAppendedFirst(appended: readonly string[]): string[] {
  const order: string[] = [];
  for (const id of [...appended].reverse()) if (!order.includes(id)) order.push(id);
  return order;
}

/* Session ids whose order is neither their append order nor its reverse. */
function scrambled(prefix: string, count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${prefix}-${String((i * 7) % count).padStart(2, "0")}`,
  );
}

export const checkNewestFirst: StoreCheck = async (fresh) => {
  const store = await fresh();
  const project = "newest-first";
  const append = (id: string) => store.append({ projectKey: project, sessionId: id }, [e({ id })]);
  // Back to back, no wait: a fast store stamps several in one millisecond, and a session
  // appended to twice in a row, stamped one past its own mtime, runs ahead of the clock.
  const ids = scrambled("seq", 30);
  const sequence = [...ids, ids[4]!, ids[4]!, ids[0]!, ids[29]!, ids[29]!, ids[29]!, ids[17]!];
  for (const id of sequence) await append(id);
  const backToBack = lastAppendedFirst(sequence);
  same(await asTheSdkSorts(store, project), backToBack, "back to back, as the SDK sorts");
  // At once: a wave of single appends, then chains of appends (each chain's one after the
  // other, the chains at once). Appends at once may list in any order among themselves, but
  // one that finished before another started lists after it.
  const wave = scrambled("wave", 20);
  await Promise.all(wave.map(append));
  const chains = [
    scrambled("chain-a", 6),
    [...scrambled("chain-b", 4), ids[4]!, wave[3]!, ids[29]!],
    [wave[7]!, wave[7]!, ids[10]!, "chain-c-00", ids[10]!, "chain-c-01"],
  ];
  await Promise.all(chains.map(async (chain) => {
    for (const id of chain) await append(id);
  }));
  const listed = await asTheSdkSorts(store, project);
  const chained = new Set(chains.flat());
  const waveRest = new Set(wave.filter((id) => !chained.has(id)));
  let at = 0;
  for (const [what, group] of [["the chains", chained], ["the wave", waveRest]] as const) {
    const got = listed.slice(at, at + group.size);
    ok(
      got.length === group.size && got.every((id) => group.has(id)),
      `${what} out of place (newest first: the chains, the wave, the rest): ${show(listed)}`,
    );
    at += group.size;
  }
  const rest = backToBack.filter((id) => !chained.has(id) && !waveRest.has(id));
  same(listed.slice(at), rest, "the back-to-back sessions appended to no more, in their order");
  for (const [c, chain] of chains.entries()) {
    same(
      listed.filter((id) => chain.includes(id)),
      lastAppendedFirst(chain),
      `chain ${c}: each append after the one that finished before it`,
    );
  }
};

export const checkDelete: StoreCheck = async (fresh) => {
  let store = await fresh();
  await store.delete!({ projectKey: "proj", sessionId: "never-written" });
  const sub2 = { ...KEY, subpath: "subagents/agent-2" };
  const other = { ...KEY, sessionId: "session-2" };
  const otherProject = { ...KEY, projectKey: "other-project" };
  for (const key of [KEY, SUB, sub2, other, otherProject]) {
    await store.append(key, [e({ uuid: "a" })]);
  }
  await store.delete!(KEY);
  for (const key of [KEY, SUB, sub2]) {
    same(await store.load(key), null, `load(${show(key)}) after delete`);
  }
  for (const key of [other, otherProject]) {
    same(await store.load(key), [e({ uuid: "a" })], "untouched");
  }
  if (store.listSubkeys) same(await store.listSubkeys(KEY), [], "listSubkeys after delete");
  if (store.listSessions) same(await sessionIds(store, KEY.projectKey), ["session-2"], "listed");
  await store.append(KEY, [e({ uuid: "a" })]);
  same(
    await store.load(KEY),
    [e({ uuid: "a" })],
    "a deleted key written again holds the new entry",
  );

  store = await fresh();
  for (const key of [KEY, SUB, sub2]) await store.append(key, [e({ uuid: "a" })]);
  await store.delete!(SUB);
  same(await store.load(SUB), null, "the deleted subkey");
  same(await store.load(sub2), [e({ uuid: "a" })], "the other subkey");
  same(await store.load(KEY), [e({ uuid: "a" })], "the main transcript");
  if (store.listSubkeys) same(await store.listSubkeys(KEY), [sub2.subpath], "listSubkeys");
};

export const checkListSubkeys: StoreCheck = async (fresh) => {
  const store = await fresh();
  await store.append(KEY, [e({ n: 1 })]);
  same(await store.listSubkeys!(KEY), [], "listSubkeys of a session without subkeys");
  await store.append(SUB, [e({ n: 1 })]);
  await store.append({ ...KEY, subpath: "subagents/nested/agent-2" }, [e({ n: 1 })]);
  await store.append({ ...KEY, sessionId: "other", subpath: "subagents/agent-x" }, [e({ n: 1 })]);
  same(
    sorted(await store.listSubkeys!(KEY)),
    ["subagents/agent-1", "subagents/nested/agent-2"],
    "listSubkeys",
  );
  same(await store.listSubkeys!({ ...KEY, sessionId: "never-written" }), [], "an unknown session");
};

export const checkConcurrentAppends: StoreCheck = async (fresh) => {
  const store = await fresh();
  const batches = Array.from({ length: 25 }, (_, b) => [
    e({ uuid: `b${b}-1`, b }),
    e({ uuid: `b${b}-2`, b }),
    { type: "tag", tag: `t${b}` },
  ]);
  await Promise.all(batches.map((batch) => store.append(KEY, batch)));
  same(await store.load(KEY), batches.flat(), "25 appends started at once, in call order");
  const keys = Array.from({ length: 5 }, (_, i) => ({ ...KEY, sessionId: `parallel-${i}` }));
  await Promise.all(keys.map((key, i) => store.append(key, [e({ uuid: "p", i })])));
  for (const [i, key] of keys.entries()) same(await store.load(key), [e({ uuid: "p", i })], "keys");
};
