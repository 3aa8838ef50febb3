/**
 * A stored turn for the store benchmarks: the last turn of a real CLI
 * transcript (`tests/fixtures/history/three_turns.jsonl`: queue operations,
 * the user and assistant entries, last-prompt, cost-state; 6 entries, about
 * 2.4 KB of JSON), each copy with fresh uuids (and the parent links that name
 * them). `capacity.ts` uses it; `store_bench.ts` makes the same turns.
 *
 * @module
 */

import type { SessionStoreEntry } from "../../src/store/session_store.ts";

const FIXTURE = new URL("../fixtures/history/three_turns.jsonl", import.meta.url);

/** The turn's entries, as the CLI wrote them. */
export const TURN_TEMPLATE: readonly SessionStoreEntry[] = Deno.readTextFileSync(FIXTURE).trim()
  .split("\n").slice(-6).map((line) => JSON.parse(line));

let serial = 0;

/**
 * One more turn: the template with fresh uuids.
 *
 * @returns Its entries.
 */
export function fixtureTurn(): SessionStoreEntry[] {
  const n = ++serial;
  return TURN_TEMPLATE.map((entry) => {
    const copy = structuredClone(entry) as Record<string, unknown>;
    if (typeof copy.uuid === "string") {
      copy.uuid = `${copy.uuid.slice(0, 24)}${String(n).padStart(12, "0")}`;
    }
    if (typeof copy.parentUuid === "string") copy.parentUuid = `parent-${n}`;
    return copy as SessionStoreEntry;
  });
}
