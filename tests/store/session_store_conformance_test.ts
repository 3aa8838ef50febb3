/**
 * The session store conformance suite can fail: stores each broken in one
 * way fail exactly the contracts that see the break (and no others), a store that
 * never answers fails by timeout, and the suite's own arguments are checked.
 *
 * @module
 */

import assert from "node:assert/strict";
import { messageOf } from "../../src/_values.ts";
import { isDuplexError } from "../../src/errors.ts";
import { InMemorySessionStore } from "../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import {
  sessionStoreConformance,
  STORE_CONTRACTS,
  type StoreConformanceOptions,
} from "../../src/testing/session_store_conformance.ts";

/** Runs the suite, recording which steps failed and why. */
async function failures(
  makeStore: () => SessionStore,
  options: StoreConformanceOptions = {},
): Promise<{ ran: string[]; failed: Map<string, string> }> {
  const ran: string[] = [];
  const failed = new Map<string, string>();
  await sessionStoreConformance(
    {
      async step(name, fn) {
        const id = name.slice(0, name.indexOf(":"));
        ran.push(id);
        try {
          await fn();
          return true;
        } catch (error) {
          failed.set(id, messageOf(error));
          return false;
        }
      },
    },
    makeStore,
    options,
  );
  return { ran, failed };
}

/** Wraps an in-memory store, overriding some of its methods. */
function broken(overrides: (inner: InMemorySessionStore) => Partial<SessionStore>): SessionStore {
  const inner = new InMemorySessionStore();
  return {
    append: (key, entries) => inner.append(key, entries),
    load: (key) => inner.load(key),
    listSessions: (projectKey) => inner.listSessions(projectKey),
    delete: (key) => inner.delete(key),
    listSubkeys: (key) => inner.listSubkeys(key),
    listSessionSummaries: (projectKey) => inner.listSessionSummaries(projectKey),
    ...overrides(inner),
  };
}

const raw = new Map<string, SessionStoreEntry[]>();
const joined = (key: SessionKey) => [key.projectKey, key.sessionId, key.subpath].join("/");

Deno.test({
  name: "sessionStoreConformance() fails the contracts a broken store breaks, and no others",
  permissions: "none",
  async fn(t) {
    const cases: [string, () => SessionStore, string[]][] = [
      ["a correct store", () => new InMemorySessionStore(), []],
      [
        "no dedup (entries appended as given, copied)",
        () => {
          raw.clear();
          return {
            append(key, entries) {
              raw.set(joined(key), [...raw.get(joined(key)) ?? [], ...structuredClone(entries)]);
              return Promise.resolve();
            },
            load: (key) => Promise.resolve(structuredClone(raw.get(joined(key)) ?? null)),
          };
        },
        ["uuid-dedup", "key-separation"],
      ],
      [
        "load of an unknown key is []",
        () => broken((s) => ({ load: async (k) => await s.load(k) ?? [] })),
        [
          "unknown-key",
          "delete",
        ],
      ],
      [
        "a batch stored backwards",
        () => broken((s) => ({ append: (k, e) => s.append(k, [...e].reverse()) })),
        ["round-trip", "order", "uuid-dedup", "no-uuid", "concurrent-appends", "summaries"],
      ],
      ["empty append stores a marker", () =>
        broken((s) => ({
          append: (k, e) => s.append(k, e.length ? e : [{ type: "empty" }]),
        })), ["empty-append"]],
      ["listSessions includes subkey-only sessions", () =>
        broken((s) => ({
          listSessions: async (
            p,
          ) => [...await s.listSessions(p), { sessionId: "only-sub", mtime: 2e12 }],
        })), ["list-sessions", "project-isolation", "key-separation", "newest-first", "delete"]],
      ["mtime in seconds", () =>
        broken((s) => ({
          listSessions: async (p) =>
            (await s.listSessions(p)).map((r) => ({ ...r, mtime: Math.floor(r.mtime / 1000) })),
        })), ["list-sessions", "mtime", "summaries"]], // in order: the SDK's stable sort keeps it
      ["mtime stamped per key (a session appended to twice in a millisecond runs ahead)", () => {
        const stamps = new Map<string, number>();
        return broken((s) => ({
          append: async (k, e) => {
            await s.append(k, e);
            const last = stamps.get(joined(k)) ?? 0;
            stamps.set(joined(k), Math.max(Date.now(), last + 1));
          },
          listSessions: async (p) =>
            (await s.listSessions(p)).map((r) => ({
              ...r,
              mtime: stamps.get(joined({ projectKey: p, sessionId: r.sessionId }))!,
            })),
        }));
      }, ["newest-first", "summaries"]],
      ["sessions of one millisecond listed by session id, not in append order", () => {
        const stamps = new Map<string, number>();
        return broken((s) => ({
          append: async (k, e) => {
            await s.append(k, e);
            stamps.set(joined(k), Date.now());
          },
          listSessions: async (p) =>
            (await s.listSessions(p)).map((r) => ({
              ...r,
              mtime: stamps.get(joined({ projectKey: p, sessionId: r.sessionId }))!,
            })).sort((a, b) => b.mtime - a.mtime || a.sessionId.localeCompare(b.sessionId)),
        }));
      }, ["newest-first", "summaries"]],
      ["delete of a main key keeps its subkeys", () =>
        broken((s) => ({
          delete: async (k) => {
            const subs = k.subpath === undefined ? await s.listSubkeys(k) : [];
            const kept = await Promise.all(subs.map((sub) => s.load({ ...k, subpath: sub })));
            await s.delete(k);
            for (const [i, sub] of subs.entries()) await s.append({ ...k, subpath: sub }, kept[i]!);
          },
        })), ["delete"]],
      [
        "listSubkeys lists the main transcript too",
        () => broken((s) => ({ listSubkeys: async (k) => ["", ...await s.listSubkeys(k)] })),
        ["delete", "list-subkeys", "key-separation"],
      ],
      ["summaries of subagent transcripts too", () =>
        broken((s) => ({
          listSessionSummaries: async (p) => [
            ...await s.listSessionSummaries(p),
            { sessionId: "agent-1", mtime: Date.now(), data: {} },
          ],
        })), ["summaries"]],
      ["a summary folded from the first batch only", () => {
        const firsts = new Map<string, Record<string, unknown>>();
        return broken((s) => ({
          append: async (k, e) => {
            await s.append(k, e);
            if (k.subpath !== undefined || firsts.has(joined(k))) return;
            const summary = (await s.listSessionSummaries(k.projectKey))
              .find((r) => r.sessionId === k.sessionId);
            if (summary) firsts.set(joined(k), summary.data);
          },
          listSessionSummaries: async (p) =>
            (await s.listSessionSummaries(p)).map((r) => ({
              ...r,
              data: structuredClone(
                firsts.get(joined({ projectKey: p, sessionId: r.sessionId })) ?? r.data,
              ),
            })),
        }));
      }, ["summaries"]],
      ["a summary's mtime on another clock than listSessions'", () =>
        broken((s) => ({
          listSessionSummaries: async (p) =>
            (await s.listSessionSummaries(p)).map((r) => ({ ...r, mtime: r.mtime + 1 })),
        })), ["summaries"]],
      ["a summary returned is the store's own object", () => {
        const kept = new Map<string, Record<string, unknown>>();
        return broken((s) => ({
          listSessionSummaries: async (p) =>
            (await s.listSessionSummaries(p)).map((r) => {
              const data = kept.get(r.sessionId) ?? kept.set(r.sessionId, r.data).get(r.sessionId)!;
              return { ...r, data };
            }),
        }));
      }, ["copies"]],
      ["concurrent appends interleaved", () =>
        broken((s) => ({
          append: async (k, e) => {
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
            await s.append(k, e);
          },
        })), ["concurrent-appends"]],
    ];
    for (const [what, makeStore, expected] of cases) {
      await t.step(what, async () => {
        const { ran, failed } = await failures(makeStore);
        assert.deepEqual([...failed.keys()].sort(), expected.sort(), [...failed].join("\n"));
        if (what === "a correct store") assert.deepEqual(ran, STORE_CONTRACTS);
      });
    }
  },
});

Deno.test({
  name: "sessionStoreConformance() registers no step for a method the store lacks, or for skip",
  permissions: "none",
  async fn() {
    const minimal = () => {
      const inner = new InMemorySessionStore();
      return { append: inner.append.bind(inner), load: inner.load.bind(inner) };
    };
    const { ran, failed } = await failures(minimal, { skip: ["copies"] });
    assert.deepEqual(failed.size, 0, [...failed].join("\n"));
    assert.ok(!ran.includes("copies"));
    const optional = ["list-sessions", "mtime", "newest-first", "delete", "list-subkeys"];
    for (const name of [...optional, "summaries"]) assert.ok(!ran.includes(name), name);
    assert.equal(ran.length, STORE_CONTRACTS.length - 7);
  },
});

Deno.test({
  name: "sessionStoreConformance() fails a step whose store never answers, within timeoutMs",
  permissions: "none",
  async fn() {
    const hanging = () => broken(() => ({ load: () => new Promise<never>(() => {}) }));
    const started = Date.now();
    const { failed } = await failures(hanging, { timeoutMs: 50, skip: ["mtime"] });
    assert.ok(failed.size >= 10, [...failed.keys()].join(","));
    assert.match(failed.get("round-trip")!, /round-trip: not done within 50 ms/);
    assert.ok(Date.now() - started < 5_000);
  },
});

Deno.test({
  name: "sessionStoreConformance() checks its arguments and disposes the stores it opened",
  permissions: "none",
  async fn() {
    const step = () => Promise.resolve(true);
    await assert.rejects(
      sessionStoreConformance({ step }, () => new InMemorySessionStore(), { skip: ["nope"] }),
      (error: unknown) =>
        isDuplexError(error, "invalid_argument") && /unknown contract "nope"/.test(error.message),
    );
    await assert.rejects(
      sessionStoreConformance({} as never, () => new InMemorySessionStore()),
      TypeError,
    );
    await assert.rejects(sessionStoreConformance({ step }, 5 as never), TypeError);
    let opened = 0;
    let disposed = 0;
    await failures(() => {
      opened++;
      return Object.assign(new InMemorySessionStore(), {
        [Symbol.asyncDispose]: () => {
          disposed++;
          return Promise.resolve();
        },
      });
    });
    assert.ok(opened > STORE_CONTRACTS.length);
    assert.equal(disposed, opened);
  },
});
