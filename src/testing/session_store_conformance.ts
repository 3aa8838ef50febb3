// This module is browser compatible.
/**
 * {@linkcode sessionStoreConformance}: the suite every `SessionStore`
 * passes (the built-in in-memory and directory stores, PostgreSQL, a store
 * of your own), as the official Python SDK's
 * `testing/session_store_conformance.py` is for its stores. It registers one
 * `t.step` per contract and opens a fresh store for each.
 *
 * ## The contracts (one step each; skip by id)
 *
 * Required of every store:
 * - `round-trip`: `load` returns what one `append` stored, deep-equal (key
 *   order free): nested objects and arrays, non-ASCII text, escapes,
 *   numbers, booleans, `null`, empty values, a 100 KB string.
 * - `unknown-key`: `load` of a key never written is `null` (an unknown
 *   session, project or subpath of a written session).
 * - `order`: several appends load in call order.
 * - `empty-append`: `append(key, [])` changes nothing.
 * - `uuid-dedup`: an entry whose `uuid` the key already holds is not stored
 *   again (later batches, the same batch, ten concurrent retries); the same
 *   uuid under another key is.
 * - `no-uuid`: an entry without `uuid` is appended every time.
 * - `subkeys`: subagent transcripts (`subpath`, nested too) are stored apart
 *   from the main one.
 * - `project-isolation`: the same session id in two projects is two sessions.
 * - `key-separation`: fields are kept apart (`"a/b" + "c"` is not
 *   `"a" + "b/c"`), case counts, and keys with `..`, `/`, spaces, `%`,
 *   non-ASCII and 300-character fields round-trip.
 * - `copies`: changing an object after `append`, or an array `load`
 *   returned, changes nothing stored.
 * - `concurrent-appends`: 25 appends started at once load in call order;
 *   appends to five keys at once all land.
 *
 * Of the optional methods (no step when the store lacks the method):
 * - `list-sessions`: a project's main transcripts (not subkeys, not other
 *   projects), `[]` for an unknown project, `mtime` integer epoch ms.
 * - `mtime`: a later append has a later `mtime` (5 ms apart).
 * - `newest-first`: the listing, stably sorted by `mtime`, newest first
 *   (exactly as the SDK sorts it for `listSessions` and `continue`:
 *   sessions that share an `mtime` keep the store's order), is the order
 *   the sessions were last appended to, within one millisecond too: appends
 *   back to back (some twice or three times in a row), then a wave of
 *   concurrent appends and chains of appends run at once (concurrent ones
 *   in any order among themselves, each after every append that finished
 *   before it started). Beyond the SDK's contract (order unspecified),
 *   which its own `InMemorySessionStore` keeps; a store may stamp two
 *   sessions alike if it lists them in append order.
 * - `delete`: an unknown key is a no-op; a main key goes with its subkeys
 *   (others stay), and can be written again; a subkey goes alone.
 * - `list-subkeys`: the subpaths of a session (nested too), never the main
 *   transcript, `[]` for an unknown session.
 * - `summaries`: `listSessionSummaries` gives one summary per main
 *   transcript of the project (none for a subagent's, none of another
 *   project's), its `data` what `foldSessionSummary` makes of the entries
 *   appended, its `mtime` the one `listSessions` gives (`copies` also
 *   checks that a summary returned is a copy).
 *
 * The official SDK's own `InMemorySessionStore` (0.3.332) passes all but
 * `uuid-dedup` (it stores every entry: dedup is a SHOULD of the contract),
 * `key-separation` (it joins fields with `/`) and `copies` (it keeps and
 * returns the caller's objects).
 *
 * @module
 */

import { abortable, checkMs, deadline } from "../_deadline.ts";
import { DuplexError } from "../errors.ts";
import type { SessionStore } from "../store/session_store.ts";
import * as checks from "./_store_contract_checks.ts";
import { checkSummaries } from "./_summary_contract_check.ts";
import type { ConformanceContext } from "./transport_conformance.ts";

/** The ids of the store contracts, in the order the suite checks them. */
export type StoreContract =
  | "round-trip"
  | "unknown-key"
  | "order"
  | "empty-append"
  | "uuid-dedup"
  | "no-uuid"
  | "subkeys"
  | "project-isolation"
  | "key-separation"
  | "copies"
  | "concurrent-appends"
  | "list-sessions"
  | "mtime"
  | "newest-first"
  | "delete"
  | "list-subkeys"
  | "summaries";

/** What each contract checks, the optional method it needs, and how. */
const CONTRACTS: Record<
  StoreContract,
  {
    title: string;
    needs?: "listSessions" | "delete" | "listSubkeys" | "listSessionSummaries";
    check: checks.StoreCheck;
  }
> = {
  "round-trip": {
    title: "load returns what append stored, deep-equal",
    check: checks.checkRoundTrip,
  },
  "unknown-key": { title: "load of a key never written is null", check: checks.checkUnknownKey },
  order: { title: "several appends load in call order", check: checks.checkOrder },
  "empty-append": { title: "append(key, []) changes nothing", check: checks.checkEmptyAppend },
  "uuid-dedup": { title: "an entry's uuid is stored once per key", check: checks.checkUuidDedup },
  "no-uuid": { title: "an entry without uuid is appended every time", check: checks.checkNoUuid },
  subkeys: { title: "subagent transcripts are stored apart", check: checks.checkSubkeys },
  "project-isolation": {
    title: "the same session id in two projects is two sessions",
    check: checks.checkProjectIsolation,
  },
  "key-separation": {
    title: "key fields are kept apart; odd characters round-trip",
    check: checks.checkKeySeparation,
  },
  copies: { title: "stored entries are copies", check: checks.checkCopies },
  "concurrent-appends": {
    title: "appends started at once land in call order",
    check: checks.checkConcurrentAppends,
  },
  "list-sessions": {
    title: "listSessions lists a project's main transcripts",
    needs: "listSessions",
    check: checks.checkListSessions,
  },
  mtime: {
    title: "a later append has a later mtime",
    needs: "listSessions",
    check: checks.checkMtime,
  },
  "newest-first": {
    title: "sessions list in the order last appended to, as the SDK sorts them by mtime",
    needs: "listSessions",
    check: checks.checkNewestFirst,
  },
  delete: {
    title: "delete removes a key, a main one with its subkeys",
    needs: "delete",
    check: checks.checkDelete,
  },
  "list-subkeys": {
    title: "listSubkeys lists a session's subpaths",
    needs: "listSubkeys",
    check: checks.checkListSubkeys,
  },
  summaries: {
    title: "listSessionSummaries is the fold of each main transcript's entries",
    needs: "listSessionSummaries",
    check: checkSummaries,
  },
};

/** Every store contract id, in the order the suite checks them. */
export const STORE_CONTRACTS: readonly StoreContract[] = Object.keys(CONTRACTS) as StoreContract[];

/** Options of {@linkcode sessionStoreConformance}. */
export interface StoreConformanceOptions {
  /** Contract ids (see {@linkcode STORE_CONTRACTS}) not to check: no step is registered. */
  readonly skip?: readonly string[];
  /**
   * The most time one contract's check may take, in milliseconds (1 to
   * 2^31-1, or `Infinity`): a store call that never settles fails the step.
   *
   * @default {10000}
   */
  readonly timeoutMs?: number;
}

const CANNOT_RUN = "Cannot run the session store conformance suite";

/* Disposes a store that has `[Symbol.asyncDispose]`. */
async function dispose(store: SessionStore): Promise<void> {
  const dispose = (store as Partial<AsyncDisposable>)[Symbol.asyncDispose];
  if (typeof dispose === "function") await dispose.call(store);
}

async function runCheck(
  makeStore: () => SessionStore | Promise<SessionStore>,
  check: checks.StoreCheck,
  id: string,
  timeoutMs: number,
): Promise<void> {
  const opened: SessionStore[] = [];
  using limit = deadline(timeoutMs, {
    reason: () => new DuplexError("timeout", `Contract ${id}: not done within ${timeoutMs} ms`),
  });
  const fresh = async () => {
    const store = await makeStore();
    opened.push(store);
    return store;
  };
  try {
    await abortable(check(fresh), limit.signal);
  } finally {
    for (const store of opened) await dispose(store);
  }
}

/**
 * Checks that a store keeps the `SessionStore` contract: one `t.step` per
 * contract (see the module doc), each on fresh stores from `makeStore`
 * (disposed after the step when they have `[Symbol.asyncDispose]`).
 * Contracts of an optional method the store lacks register no step.
 *
 * @param t The test context (Deno's `TestContext` fits as is).
 * @param makeStore Opens a new, empty store.
 * @param options `skip`, `timeoutMs`.
 * @returns Nothing, once every step ran (a failed step fails the test).
 * @throws {TypeError} When `t` has no `step` or `makeStore` is not a function.
 * @throws {DuplexError} `invalid_argument` for an unknown id in `skip`.
 *
 * In a test file: `Deno.test("my store", (t) => sessionStoreConformance(t, () => new MyStore()))`.
 *
 * @example Check a store, recording failed steps
 * ```ts
 * import { InMemorySessionStore } from "../store/in_memory_session_store.ts";
 * import { sessionStoreConformance } from "./session_store_conformance.ts";
 * import assert from "node:assert/strict";
 *
 * const failed: string[] = [];
 * const t = {
 *   async step(name: string, fn: () => Promise<void> | void) {
 *     try {
 *       await fn();
 *       return true;
 *     } catch {
 *       failed.push(name);
 *       return false;
 *     }
 *   },
 * };
 * await sessionStoreConformance(t, () => new InMemorySessionStore());
 * assert.deepEqual(failed, []);
 * ```
 */
export async function sessionStoreConformance(
  t: ConformanceContext,
  makeStore: () => SessionStore | Promise<SessionStore>,
  options: StoreConformanceOptions = {},
): Promise<void> {
  if (typeof t?.step !== "function") {
    throw new TypeError(`${CANNOT_RUN}: t must have a step method`);
  }
  if (typeof makeStore !== "function") {
    throw new TypeError(`${CANNOT_RUN}: makeStore must be a function`);
  }
  const timeoutMs = checkMs(options.timeoutMs ?? 10_000, `${CANNOT_RUN}: timeoutMs`);
  const skip = new Set(options.skip ?? []);
  for (const id of skip) {
    if (!(STORE_CONTRACTS as readonly string[]).includes(id)) {
      throw new DuplexError(
        "invalid_argument",
        `${CANNOT_RUN}: unknown contract ${JSON.stringify(id)} in skip; use one of ${
          STORE_CONTRACTS.join(", ")
        }`,
      );
    }
  }
  const probe = await makeStore();
  const has = (method: string) =>
    typeof (probe as unknown as Record<string, unknown>)[method] === "function";
  const methods = {
    listSessions: has("listSessions"),
    delete: has("delete"),
    listSubkeys: has("listSubkeys"),
    listSessionSummaries: has("listSessionSummaries"),
  };
  await dispose(probe);
  for (const id of STORE_CONTRACTS) {
    const { title, needs, check } = CONTRACTS[id];
    if (skip.has(id) || (needs !== undefined && !methods[needs])) continue;
    await t.step(`${id}: ${title}`, () => runCheck(makeStore, check, id, timeoutMs));
  }
}
