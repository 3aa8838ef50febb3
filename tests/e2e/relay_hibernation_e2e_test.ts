/**
 * The real CLI behind the relay, with a client away longer than the grace:
 * the relay closes the process (the conversation is hibernated), and the
 * client's reconnect resumes it in a new process started with `--resume`;
 * the model sees the earlier turn.
 */
import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { e2eTest, processAlive, trackedWebSockets, waitUntil, withSandbox } from "./_harness.ts";

const TOKEN = crypto.randomUUID();

e2eTest(
  "the relay hibernates a conversation whose client is away past the grace; the client resumes it",
  async (t, cli) => {
    await withSandbox(async ({ env, work, api }) => {
      await using relay = serveRelay({
        tokens: [TOKEN],
        workspace: work,
        // The CLI's HOME is the sandbox's (the per-owner folders: relay_tenancy_e2e_test.ts).
        tenancy: "shared",
        cli: { binary: cli, env, clearEnv: true, hostSignal: "ignore" },
        graceMs: 300,
        policy: { exposePid: true },
      });
      const { sockets, WebSocket: Tracked } = trackedWebSockets();
      await using session = await DuplexSession.start({
        transport: remote({
          url: relay.url,
          token: TOKEN,
          WebSocket: Tracked,
          // The first retry comes well after the relay's grace has ended.
          reconnect: { attempts: 3, initialDelayMs: 3000, maxDelayMs: 3000 },
        }),
      });
      const first = await session.send("My name is Ada.");
      assert.equal(first.result.text, "Echo: My name is Ada.");
      const sessionId = session.sessionId;
      // The relay's policy exposes the CLI's pid: the remote transport's description names it.
      const pid = Number(/\(pid (\d+) there\)/.exec(session.transportInfo.description ?? "")?.[1]);
      assert.ok(Number.isSafeInteger(pid) && pid > 1, session.transportInfo.description);
      assert.ok(await processAlive(pid), "the CLI runs on the relay's host (this one)");

      await t.step("away past the grace: the process goes, the conversation is kept", async () => {
        for (const socket of sockets) socket.close(4999, "network cut by the test");
        await waitUntil(() => relay.hibernatedCount === 1, "the hibernation");
        await waitUntil(async () => !(await processAlive(pid)), "the CLI to be closed");
        assert.equal(relay.sessionCount, 0, "no live session is left with it");
      });

      await t.step("the reconnect resumes it with the history", async () => {
        const turn = await session.send("What is my name?", { timeoutMs: 60_000 });
        assert.equal(turn.result.text, "Echo: What is my name?");
        assert.equal(relay.hibernatedCount, 0);
        assert.equal(relay.sessionCount, 1);
        const request = api.requests.at(-1)!;
        const messages = JSON.stringify((request.body as { messages?: unknown }).messages);
        assert.ok(messages.includes("My name is Ada."), "the model sees the earlier turn");
        assert.equal(turn.result.sessionId, sessionId, "the same CLI session");
      });

      await t.step("close() ends the resumed CLI", async () => {
        const status = await session.close();
        assert.equal(status.state, "completed");
      });
    });
  },
);
