/**
 * The remote transport against the real relay, end to end: a process behind
 * the relay, the Web-standard client in front, a `DuplexSession` on top.
 */

import assert from "node:assert/strict";
import { remote, type WebSocketConstructor } from "../../../adapters/remote/mod.ts";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import { runTransportConformance } from "../../../src/testing/transport_conformance.ts";
import { startRelay, TOKEN } from "../relay/_client.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";

const PEER = decodeURIComponent(
  new URL("../../fixtures/conformance_peer.ts", import.meta.url).pathname,
);

Deno.test("the remote transport through the relay passes the transport conformance suite", async (t) => {
  const workspace = await makeTestDir();
  await using relay = serveRelay({
    tokens: [TOKEN],
    workspace,
    cli: {
      binary: Deno.execPath(),
      binaryArgs: ["run", "--no-config", "--quiet", "--no-prompt", PEER],
      permissionPromptTool: false,
      closeGraceMs: 2000,
      terminateGraceMs: 2000,
      hostSignal: "ignore",
    },
  });
  const open = remote({ url: relay.url, token: TOKEN, reconnect: false });
  try {
    await runTransportConformance(t, async () => ({
      transport: await open({ signal: new AbortController().signal }),
    }));
  } finally {
    await relay.close();
    await Deno.remove(workspace, { recursive: true });
  }
});

/** A WebSocket whose connections a test can cut, as a flaky network would. */
function cuttable(): { Socket: WebSocketConstructor; cut(): void; opened: () => number } {
  const live: WebSocket[] = [];
  let count = 0;
  class Cuttable extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      live.push(this);
      count++;
    }
  }
  return {
    Socket: Cuttable,
    cut() {
      for (const socket of live.splice(0)) socket.close(4999, "cut by the test");
    },
    opened: () => count,
  };
}

Deno.test("a session over the relay survives dropped connections: every turn answered once", async () => {
  await using setup = await startRelay();
  const net = cuttable();
  await using session = await DuplexSession.start({
    transport: remote({
      url: setup.relay.url,
      token: TOKEN,
      WebSocket: net.Socket,
      reconnect: { attempts: 5, initialDelayMs: 10, maxDelayMs: 100 },
    }),
  });
  const results: string[] = [];
  const seen: string[] = [];
  const sub = session.subscribe();
  const reader = (async () => {
    for await (const event of sub) {
      if (event.type === "result") seen.push(String(event.result));
    }
  })();
  for (let i = 1; i <= 6; i++) {
    const sending = session.send(`turn ${i}`);
    if (i % 2 === 0) net.cut(); // cut while the turn is in flight
    const turn = await sending;
    results.push(turn.result.text);
  }
  assert.deepEqual(results, [1, 2, 3, 4, 5, 6].map((i) => `turn ${i}`));
  assert.ok(net.opened() >= 4, `reconnected ${net.opened() - 1} times`);
  await session.close();
  await reader;
  assert.deepEqual(seen, results, "each result event exactly once, in order");
  assert.equal(session.exitStatus.state, "completed");
});

Deno.test("a session over the relay reports a refused spawn as not_permitted", async () => {
  await using setup = await startRelay({ policy: { models: ["sonnet"] } });
  await assert.rejects(
    DuplexSession.start({
      transport: remote({ url: setup.relay.url, token: TOKEN, spawn: { model: "opus" } }),
    }),
    (error: unknown) =>
      error instanceof Error && "kind" in error && error.kind === "not_permitted" &&
      /model/.test(error.message),
  );
});

Deno.test("a session over the relay reports a conversation it does not know as not_found", async () => {
  await using setup = await startRelay({ policy: { allowResume: true } });
  const ghost = crypto.randomUUID();
  await assert.rejects(
    DuplexSession.start({
      transport: remote({ url: setup.relay.url, token: TOKEN, spawn: { resume: ghost } }),
    }),
    (error: unknown) =>
      error instanceof Error && "kind" in error && error.kind === "not_found" &&
      /unknown_session/.test(error.message),
  );
});
