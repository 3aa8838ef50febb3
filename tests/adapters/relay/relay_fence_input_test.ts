/**
 * Found by the fleet soak: a relay stalled (SIGSTOP) while another resumed
 * its conversation read its client's last line only after that takeover,
 * and its CLI ran the turn the new relay's CLI ran too. A relay checks the
 * conversation's fence before it writes an input line to its CLI: once
 * another relay raised it, the line is not written and the session ends.
 */

import assert from "node:assert/strict";
import { DuplexSession } from "../../../mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { raiseFence } from "../../../adapters/relay/_fence.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { TOKEN } from "./_client.ts";
import { standInRelay } from "./_stand_in_relay.ts";

/* Every line of every transcript the stand-in wrote under `dir`. */
async function transcriptText(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) text += await transcriptText(path);
    else if (entry.name.endsWith(".jsonl")) text += await Deno.readTextFile(path);
  }
  return text;
}

Deno.test("relay: a line that comes after another relay raised the fence never reaches the CLI", async () => {
  const root = await makeTestDir();
  const store = new InMemorySessionStore();
  const a = standInRelay(root, "a", store, {
    projectKey: "fence",
    relay: { storeTimeoutMs: 500, policy: { allowResume: true } },
  });
  try {
    const session = await DuplexSession.start({
      transport: remote({ url: a.url, token: TOKEN, reconnect: false }),
    });
    const first = await session.send("first line", { timeoutMs: 10_000 });
    const sessionId = first.result.sessionId!;
    await raiseFence(store, sessionId, 5, 1_000); // another relay resumed it meanwhile
    // The relay ends its session and closes the connection as it goes away: without
    // reconnection, the send fails at once.
    await assert.rejects(session.send("second line", { timeoutMs: 10_000 }), (error: unknown) => {
      assert.ok(isDuplexError(error, "process_exited") || isDuplexError(error, "closed"));
      assert.doesNotMatch(String(error), /no result within/, "not by the turn's timeout");
      return true;
    });
    await session.close().catch(() => {});
    const written = await transcriptText(`${root}/a`);
    assert.match(written, /first line/);
    assert.doesNotMatch(written, /second line/, "the old CLI never got the line");
    const stored = JSON.stringify(await store.load({ projectKey: "fence", sessionId }));
    assert.doesNotMatch(stored, /second line/);
  } finally {
    await a.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
