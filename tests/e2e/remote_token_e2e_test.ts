/**
 * The real CLI behind the relay, reached with `remote({ token: fn })`: the
 * first scoped token (HS256, `mintRelayToken`) expires, the connection is
 * cut, and the reconnection presents a fresh one from the function; the
 * same CLI answers the next turn with the whole conversation (the fake API
 * sees the first turn in its history). The function is called once per
 * connection.
 */
import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { mintRelayToken, RELAY_TOKEN_CLOCK_SKEW_SECONDS } from "../../src/token/mod.ts";
import { e2eTest, trackedWebSockets, withSandbox } from "./_harness.ts";
import { messagesOf, requestOf, TURN } from "./_pool_harness.ts";

const SECRET = "an-e2e-secret-of-at-least-32-bytes-01234";
const TTL_SECONDS = 60;

e2eTest(
  "the real CLI through the relay: a reconnect after the token expired gets a fresh one",
  async (_t, cli) => {
    await withSandbox(async ({ env, work, api }) => {
      await using relay = serveRelay({
        secrets: [SECRET],
        workspace: work,
        tenancy: "shared",
        cli: { binary: cli, env, clearEnv: true, hostSignal: "ignore" },
      });
      // Accepted for about 3 s more: its exp is past, within the relay's clock skew.
      const exp = Math.floor((Date.now() + 3000) / 1000) - RELAY_TOKEN_CLOCK_SKEW_SECONDS;
      const expiring = await mintRelayToken({
        secret: SECRET,
        subject: "user-1",
        ttlSeconds: TTL_SECONDS,
        issuedAt: exp - TTL_SECONDS,
      });
      const refusedAfter = (exp + RELAY_TOKEN_CLOCK_SKEW_SECONDS + 1) * 1000;
      const calls: string[] = [];
      const { sockets, WebSocket: Tracked } = trackedWebSockets();
      await using session = await DuplexSession.start({
        transport: remote({
          url: relay.url,
          token: () => {
            calls.push(calls.length === 0 ? "expiring" : "fresh");
            return calls.length === 1
              ? expiring
              : mintRelayToken({ secret: SECRET, subject: "user-1", ttlSeconds: TTL_SECONDS });
          },
          WebSocket: Tracked,
          reconnect: { attempts: 3, initialDelayMs: 20, maxDelayMs: 200 },
        }),
      });
      assert.equal(
        (await session.send("first, with the expiring token", TURN)).result.isError,
        false,
      );
      assert.deepEqual(calls, ["expiring"]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedAfter - Date.now())));
      for (const socket of sockets) socket.close(4999, "network cut by the test");
      const turn = await session.send("second, after the reconnect", TURN);
      assert.equal(turn.result.text, "Echo: second, after the reconnect");
      assert.deepEqual(calls, ["expiring", "fresh"], "called once more, for the reconnection");
      const after = await fetch(relay.url.replace(/^ws/, "http").replace("/v1", "/health"));
      assert.equal((await after.json()).sessions, 1, "one session: the same CLI, resumed");
      const request = await requestOf(api, "second, after the reconnect");
      assert.match(messagesOf(request), /first, with the expiring token/, "the history is there");
      assert.equal((await session.close()).state, "completed");
    });
  },
);
