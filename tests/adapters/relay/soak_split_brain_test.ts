/**
 * Found by the fleet soak (`deno task soak`, 4 of 1,000 conversations in the
 * full run, about one run in two of `--short`): two relays sharing a store
 * run the same conversation at once. A client's connection is cut while a
 * turn runs on relay A and its reconnection lands on relay B (HAProxy's
 * consistent hash changed: a relay came back, was taken out, or stalled);
 * B resumes the session from the store while A still holds the live CLI in
 * its grace. A's CLI finishes the turn and A mirrors it into the store after
 * B loaded it: the store's transcript then holds entries B's CLI never saw
 * (a forked history; the next resume continues from whichever leaf is last),
 * and the client, now on B, never gets that turn's result. The store's
 * transcript must stay what the conversation's current CLI wrote.
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../../mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { TOKEN } from "./_client.ts";
import { standInRelay } from "./_stand_in_relay.ts";
import { cutProxy, journalOf } from "./_cut_proxy.ts";

Deno.test({
  name: "soak: a relay that lost its client to another relay does not write into the store after",

  async fn() {
    const root = await makeTestDir();
    const store = new InMemorySessionStore();
    const journal = `${root}/journal`;
    await Deno.mkdir(journal);
    const relay = (name: string) =>
      standInRelay(root, name, store, {
        projectKey: "split",
        env: { SOAK_JOURNAL: journal },
        relay: { storeTimeoutMs: 1_000, graceMs: 10_000 },
      });
    const a = relay("a");
    const b = relay("b");
    const link = cutProxy(a.port);
    try {
      const session = await DuplexSession.start({
        transport: remote({
          url: link.url,
          token: TOKEN,
          reconnect: { attempts: 20, initialDelayMs: 50, maxDelayMs: 200 },
        }),
      });
      const first = await session.send("first", { timeoutMs: 10_000 });
      const sessionId = first.result.sessionId!;
      const slow = session.send("second [[slow:1500]]", { timeoutMs: 6_000 }).catch((e) => e);
      await new Promise((resolve) => setTimeout(resolve, 300));
      link.point(b.port); // the balancer's choice changed
      link.cut();
      await slow; // A finishes it; its result never reaches the client, now on B
      const third = await session.send("third", { timeoutMs: 10_000 });
      assert.equal(third.result.isError, false);
      await session.close();
      const stored = ((await store.load({ projectKey: "split", sessionId })) ?? [])
        .map((entry) => entry.uuid);
      const processes = await journalOf(journal, sessionId);
      assert.equal(processes.length, 2, "B resumed the conversation in a CLI of its own");
      assert.deepEqual(
        stored,
        processes.at(-1),
        "the store holds what the conversation's current CLI wrote, nothing of the old one after",
      );
    } finally {
      await link.close();
      await a.close();
      await b.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
