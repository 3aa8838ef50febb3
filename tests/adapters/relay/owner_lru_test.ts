/** OwnerLru: bounded per owner and in all, an owner's churn dropping its own entries. */

import assert from "node:assert/strict";
import { OwnerLru } from "../../../adapters/relay/_owner_lru.ts";

function keys(lru: OwnerLru<number>, all: string[]): string[] {
  return all.filter((key) => lru.get(key) !== undefined);
}

const ALL = ["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2"];

Deno.test({
  name: "OwnerLru.add() drops the adding owner's own oldest, never another's",
  permissions: "none",
  fn() {
    const lru = new OwnerLru<number>(4, 2, "refuse");
    assert.ok(lru.add("a1", "a", 1));
    assert.ok(lru.add("b1", "b", 1));
    assert.ok(lru.add("b2", "b", 2));
    assert.ok(lru.add("b3", "b", 3), "b at its bound: its own oldest goes");
    assert.deepEqual(keys(lru, ALL), ["a1", "b2", "b3"]);
    assert.ok(lru.add("a2", "a", 2));
    assert.equal(lru.size, 4);
    assert.ok(lru.add("b1", "b", 4), "full: b's own oldest goes");
    assert.deepEqual(keys(lru, ALL), ["a1", "a2", "b1", "b3"]);
    assert.equal(lru.add("c1", "c", 1), false, "full, and c holds none: nothing of a or b goes");
    assert.deepEqual(keys(lru, ALL), ["a1", "a2", "b1", "b3"]);
    assert.equal(lru.get("b1")?.value, 4);
    assert.equal(lru.get("b1")?.owner, "b");
  },
});

Deno.test({
  name: "OwnerLru.add() with whenFull oldest drops the oldest of all for an owner holding none",
  permissions: "none",
  fn() {
    const lru = new OwnerLru<number>(3, 2, "oldest");
    lru.add("a1", "a", 1);
    lru.add("b1", "b", 1);
    lru.add("a2", "a", 2);
    assert.ok(lru.add("c1", "c", 1));
    assert.deepEqual(keys(lru, ALL), ["a2", "b1", "c1"]);
    assert.ok(lru.add("c2", "c", 2), "full, c holds one: its own goes");
    assert.deepEqual(keys(lru, ALL), ["a2", "b1", "c2"]);
  },
});

Deno.test({
  name: "OwnerLru re-adds as the newest, deletes, clears, and keeps nothing at a bound of 0",
  permissions: "none",
  fn() {
    const lru = new OwnerLru<number>(2, 2, "refuse");
    lru.add("a1", "a", 1);
    lru.add("a2", "a", 2);
    lru.add("a1", "a", 3); // now the newest
    lru.add("a3", "a", 4);
    assert.deepEqual(keys(lru, ALL), ["a1", "a3"]);
    lru.delete("a1");
    lru.delete("nothing");
    assert.equal(lru.size, 1);
    lru.clear();
    assert.equal(lru.size, 0);
    assert.ok(lru.add("b1", "b", 1), "an owner emptied by clear() starts again");
    assert.equal(new OwnerLru<number>(0, 1, "oldest").add("a1", "a", 1), false);
  },
});
