/**
 * The real CLI behind the relay, driven with the Web-standard remote
 * transport: turns, a permission request pending while the connection drops
 * and answered after the client resumed, and a clean end.
 */
import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { e2eTest, trackedWebSockets, withSandbox } from "./_harness.ts";

const TOKEN = crypto.randomUUID();

e2eTest(
  "the real CLI through the relay: turns, and a permission answered across a reconnect",
  async (t, cli) => {
    await withSandbox(async ({ env, work, api }) => {
      await using relay = serveRelay({
        tokens: [TOKEN],
        workspace: work,
        // The CLI's HOME is the sandbox's (the per-owner folders: relay_tenancy_e2e_test.ts).
        tenancy: "shared",
        cli: { binary: cli, env, clearEnv: true, hostSignal: "ignore" },
        policy: { models: ["sonnet", "haiku"] },
      });
      const { sockets, WebSocket: Tracked } = trackedWebSockets();
      await using session = await DuplexSession.start({
        transport: remote({
          url: relay.url,
          token: TOKEN,
          spawn: { model: "haiku", permissionMode: "default" },
          WebSocket: Tracked,
          reconnect: { attempts: 5, initialDelayMs: 20, maxDelayMs: 200 },
        }),
        onPermission: () => ({ behavior: "defer" }),
      });

      await t.step("a turn round-trips and reaches the model with the chosen model", async () => {
        const turn = await session.send("Say hi over the relay.");
        assert.equal(turn.result.text, "Echo: Say hi over the relay.");
        const last = api.requests.at(-1)?.body as { model?: string } | undefined;
        assert.match(String(last?.model), /haiku/);
      });

      await t.step(
        "a permission pending across a dropped connection is answered after it",
        async () => {
          const sub = session.subscribe();
          const turn = session.send("[[tool:bash:echo x >> relayed.txt && echo relay-ran]]", {
            timeoutMs: 60_000,
          });
          for await (const event of sub) {
            if (event.type !== "permission_request") continue;
            const before = sockets.length;
            for (const socket of sockets) socket.close(4999, "network cut by the test");
            // Answer while the client is reconnecting: the reply waits for the resumed socket.
            const answered = session.respondToPermission(event.request.requestId, {
              behavior: "allow",
            });
            assert.equal(await answered, true);
            const done = await turn;
            assert.equal(done.result.isError, false);
            assert.equal(done.result.text, "Tool said: relay-ran");
            assert.ok(sockets.length > before, "the client reconnected");
            break;
          }
          // The command appends: one line means the tool ran exactly once across the reconnect.
          assert.equal(await Deno.readTextFile(`${work}/relayed.txt`), "x\n");
        },
      );

      await t.step("close() ends the CLI behind the relay", async () => {
        const status = await session.close();
        assert.equal(status.state, "completed");
      });
    });
  },
);
