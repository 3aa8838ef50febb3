/*
 * Parked spares need `--await-claim`: on a CLI without it the pool keeps as
 * many warm spares instead (`SpareShelf.parkAsWarm`), and a parked start
 * that fails for that reason is not counted as a spare failure.
 */
import assert from "node:assert/strict";
import { SpareShelf } from "../../../../adapters/subprocess/pool/_spare_shelf.ts";
import type { PoolEvent, SpareKind } from "../../../../adapters/subprocess/pool/pool_events.ts";
import type { DuplexSession } from "../../../../src/session/duplex_session.ts";

function stubSession(): DuplexSession {
  return {
    alive: true,
    waitForExit: () => new Promise(() => {}),
    close: () => Promise.resolve({ state: "completed" }),
  } as unknown as DuplexSession;
}

Deno.test("SpareShelf.parkAsWarm() keeps as many warm spares instead of parked ones", async () => {
  const opened: SpareKind[] = [];
  const events: PoolEvent[] = [];
  let failures = 0;
  let shelf: SpareShelf | undefined = undefined;
  shelf = new SpareShelf({ warm: 1, parked: 2 }, 4, {
    open: (kind) => {
      opened.push(kind);
      if (kind === "warm") return Promise.resolve(stubSession());
      shelf!.parkAsWarm(); // what the launcher does on a CLI without --await-claim
      return Promise.reject(new Error("no --await-claim"));
    },
    demandStarting: () => false,
    publish: (event) => events.push(event),
    failed: () => failures++,
  });
  shelf.fill();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(shelf.count("parked"), 0);
  assert.equal(shelf.count("warm"), 3);
  assert.deepEqual(opened.filter((kind) => kind === "warm").length, 3);
  assert.equal(failures, 0, "a given-up kind is not a failure");
  assert.deepEqual(events.filter((e) => e.type === "spare_failed"), []);
  await shelf.close();
});
