/**
 * Found by the fleet soak (`deno task soak --short --faults=postgres_restart`):
 * a conversation that ends while the session store is down never reaches
 * the store, even when the store is back well within the mirror's close
 * bound (`closeFlushMs`, 10 s by default). Its turns were delivered to the
 * client (a result goes out after `storeTimeoutMs` when the store fails),
 * so a later resume on another relay finds nothing (or a shorter history).
 * The mirror's `close()` tries one catch-up and gives up; it should keep
 * trying, backing off, until its bound.
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../../mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionKey, SessionStoreEntry } from "../../../src/store/session_store.ts";
import type { MirrorEvent } from "../../../src/store/mirror_target.ts";
import { DuplexError } from "../../../src/errors.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { mirrorCli, TOKEN, waitFor } from "./_client.ts";

/** A store whose transcript appends fail while `down` (the relay's records go through). */
class DownStore extends InMemorySessionStore {
  down = false;
  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (this.down && key.projectKey === "soak-close") {
      return Promise.reject(new DuplexError("store_failed", "the store is down (test)"));
    }
    return super.append(key, entries);
  }
}

Deno.test({
  name:
    "soak: a conversation that ends while the store is down is caught up within the close bound",
  async fn() {
    const workspace = await makeTestDir();
    const home = await makeTestDir();
    const store = new DownStore();
    const events: MirrorEvent[] = [];
    try {
      await using relay = serveRelay({
        tokens: [TOKEN],
        workspace,
        tenancy: "shared",
        sessionStore: store,
        projectKey: "soak-close",
        storeTimeoutMs: 300,
        onMirror: (event) => events.push(event),
        cli: mirrorCli({
          extraEnv: { HOME: home },
          tempDir: home,
          mirror: { attempts: 1, catchUpDelayMs: 100, closeFlushMs: 5_000 },
        }),
      });
      const session = await DuplexSession.start({
        transport: remote({ url: relay.url, token: TOKEN }),
      });
      store.down = true;
      const one = await session.send("one", { timeoutMs: 10_000 });
      const two = await session.send("two", { timeoutMs: 10_000 });
      assert.equal(two.result.isError, false, "the turns are delivered with the store down");
      const sessionId = one.result.sessionId;
      assert.ok(sessionId);
      const back = setTimeout(() => store.down = false, 1_000);
      await session.close();
      await waitFor(
        "the mirror's end",
        () => events.some((event) => event.status === "caught_up" || event.status === "dropped"),
        10_000,
      );
      clearTimeout(back);
      const stored = (await store.load({ projectKey: "soak-close", sessionId })) ?? [];
      const users = stored.filter((entry) => entry.type === "user").length;
      assert.equal(
        users,
        2,
        `both turns are in the store once it is back: ${events.map((e) => e.status)}`,
      );
    } finally {
      await Deno.remove(workspace, { recursive: true }).catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
