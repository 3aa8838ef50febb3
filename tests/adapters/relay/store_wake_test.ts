/**
 * A resume from the store, once it took the conversation over: what the
 * relay before wrote to its CLI, a write in flight waited for
 * (`Wake.written`, the other half of `StoreLink.admitsInput`'s order).
 */

import assert from "node:assert/strict";
import { wakeFromStore } from "../../../adapters/relay/_store_wake.ts";
import {
  RECORD_TYPE,
  recordKey,
  type RelayRecord,
  sha256,
} from "../../../adapters/relay/_relay_record.ts";
import { checkPolicy, Refusal } from "../../../adapters/relay/_policy.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../../src/store/session_store.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";

const CLI = "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab";
const OWNER = "token:t";

/** A store holding one session's record entries; loads fail while `down`. */
class Records extends InMemorySessionStore {
  down = false;
  override load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.down ? Promise.reject(new Error("down")) : super.load(key);
  }
}

async function snapshot(change: Partial<RelayRecord>): Promise<SessionStoreEntry> {
  const record: RelayRecord = {
    owner: await sha256(OWNER),
    cliSessionId: CLI,
    spawn: {},
    applied: 1,
    state: "live",
    epoch: 0,
  };
  return { type: RECORD_TYPE, uuid: crypto.randomUUID(), ...record, ...change };
}

/** Wakes session `t` from `store` (its bound `boundMs`) and returns its `written`. */
async function wake(store: Records, workspace: string, boundMs = 400) {
  const found = await wakeFromStore("t", { after: 0 }, {
    owner: OWNER,
    policy: checkPolicy({ allowResume: true }),
  }, {
    sessionStore: store,
    projectKey: "p",
    storeTimeoutMs: boundMs,
    cli: {},
    workspace,
  });
  assert.ok(found?.written);
  return found.written;
}

Deno.test("Wake.written() waits for the old relay's write in flight", async (t) => {
  const workspace = await makeTestDir();
  const key = await recordKey("t");
  try {
    await t.step("none in flight: applied, at once", async () => {
      const store = new Records();
      await store.append(key, [await snapshot({ applied: 1 })]);
      assert.equal(await (await wake(store, workspace))(1), 1);
    });

    await t.step("written meanwhile: the line counts as the old CLI's", async () => {
      const store = new Records();
      await store.append(key, [await snapshot({ applied: 1, writing: 2 })]);
      const written = await wake(store, workspace, 3_000);
      setTimeout(async () => store.append(key, [await snapshot({ applied: 2, writing: 2 })]), 100);
      const started = Date.now();
      assert.equal(await written(1), 2);
      assert.ok(Date.now() - started < 2_500, "as soon as it landed, not at the bound");
    });

    await t.step("not written (the old relay saw the fence): the new CLI runs it", async () => {
      const store = new Records();
      await store.append(key, [await snapshot({ applied: 1, writing: 2 })]);
      const written = await wake(store, workspace, 3_000);
      setTimeout(async () => store.append(key, [await snapshot({ applied: 1, writing: 1 })]), 100);
      assert.equal(await written(1), 1);
    });

    await t.step(
      "never settled (the old relay died in between): written, after the bound",
      async () => {
        const store = new Records();
        await store.append(key, [await snapshot({ applied: 1, writing: 2 })]);
        const written = await wake(store, workspace);
        const started = Date.now();
        assert.equal(await written(1), 2, "no CLI runs it twice");
        assert.ok(Date.now() - started >= 350, "waited for the bound");
      },
    );

    await t.step("records of the epoch taking over and after are not the old relay's", async () => {
      const store = new Records();
      await store.append(key, [
        await snapshot({ applied: 1 }),
        await snapshot({ epoch: 1, applied: 1, writing: 5 }),
      ]);
      assert.equal(await (await wake(store, workspace))(1), 1);
    });

    await t.step("a store that stops answering: busy", async () => {
      const store = new Records();
      await store.append(key, [await snapshot({ applied: 1 })]);
      const written = await wake(store, workspace);
      store.down = true;
      await assert.rejects(written(1), (error: unknown) => {
        assert.ok(error instanceof Refusal);
        assert.equal(error.kind, "busy");
        return true;
      });
    });
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});
