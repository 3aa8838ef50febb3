/**
 * Many hosts, on the real CLI (offline, against the fake API): two relay
 * processes (each its own config folder) sharing one PostgreSQL, behind a
 * real HAProxy with the configuration the project ships
 * (`examples/relay/haproxy.cfg`, its server lines and health-check pace
 * set by the test), which routes by the conversation key in the URL. The relay a
 * conversation is on is killed with SIGKILL, its CLI too (nothing of it is
 * left); the client's next connection lands on the other relay, which
 * resumes the conversation from the store: the model's next request carries
 * the whole history, and the client gets every turn's result once.
 *
 * And a PostgreSQL outage in the middle of a relayed conversation: turns go
 * on; once the server is back, the store is caught up, and its entries then
 * equal the local transcript's, by uuid.
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { DuplexSession, type Turn } from "../../mod.ts";
import { LOST_TERMINAL_REASON, remote } from "../../adapters/remote/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { PostgresSessionStore } from "../../stores/postgres/mod.ts";
import type { MirrorEvent } from "../../src/store/mirror_target.ts";
import type { SessionStoreEntry } from "../../src/store/session_store.ts";
import { startPostgres } from "../stores/_postgres_server.ts";
import { cliPath, waitUntil, withSandbox } from "./_harness.ts";
import {
  childrenOf,
  failoverTest,
  groupMembers,
  kill,
  startHaproxy,
  startRelays,
} from "./_failover_harness.ts";

const TOKEN = crypto.randomUUID();
const PROJECT_KEY = "failover-e2e";

function cli(): string {
  const status = cliPath();
  if (!status.available) throw new Error(status.reason);
  return status.path;
}

function uuids(entries: readonly SessionStoreEntry[]): string[] {
  return entries.flatMap((entry) => entry.uuid === undefined ? [] : [entry.uuid]);
}

function lastMessages(api: { requests: { body: unknown }[] }): string {
  return JSON.stringify((api.requests.at(-1)?.body as { messages?: unknown })?.messages);
}

failoverTest(
  "failover: a relay is killed; the conversation goes on through the other, behind HAProxy",
  async (t) => {
    await withSandbox(async ({ api, root, work, env }) => {
      await using pg = await startPostgres();
      const relays = await startRelays({
        token: TOKEN,
        workspace: work,
        postgresUrl: pg.url,
        projectKey: PROJECT_KEY,
        binary: cli(),
        env,
      }, root);
      await using _a = relays[0]!;
      await using _b = relays[1]!;
      await using balancer = await startHaproxy(relays.map((relay) => relay.port), root);

      const results: { uuid: string; text: string }[] = [];
      await using session = await DuplexSession.start({
        transport: remote({
          url: balancer.urlFor("conversation-1"),
          token: TOKEN,
          heartbeatMs: 2_000,
          reconnect: { attempts: 30, initialDelayMs: 100, maxDelayMs: 500 },
        }),
      });
      const sub = session.subscribe();
      const reading = (async () => {
        for await (const event of sub) {
          if (event.type === "result") {
            const result = event as unknown as { uuid: string; result: string };
            results.push({ uuid: result.uuid, text: result.result });
          }
        }
      })();

      const first = await session.send("My name is Ada.");
      assert.equal(first.result.text, "Echo: My name is Ada.");
      const sessionId = session.sessionId;
      const healths = await Promise.all(relays.map((relay) => relay.health()));
      const on = healths.findIndex((health) => health?.sessions === 1);
      assert.ok(on >= 0, `one relay holds the conversation: ${JSON.stringify(healths)}`);
      const dead = relays[on]!;
      const other = relays[1 - on]!;
      const [cliPid] = await childrenOf(dead.pid);
      assert.ok(cliPid !== undefined && cliPid > 1, "the relay runs the CLI");
      // A turn running when the relay dies: its CLI took it and goes with it, unanswered.
      const streaming = api.messageRequests.length;
      const running = session.send("[[stall]] Tell me a long story.", { timeoutMs: 60_000 })
        .catch((error: unknown) => error);
      await waitUntil(
        () => Promise.resolve(api.messageRequests.length > streaming && api.openStreams > 0),
        "the running turn's request to stream",
      );

      await t.step("the relay and its CLI are killed; nothing of them is left", async () => {
        dead.kill();
        kill(cliPid);
        await dead.ended;
        await waitUntil(
          async () => (await groupMembers([dead.pid, cliPid])).length === 0,
          "every process of the killed relay and its CLI to be gone",
        );
      });

      await t.step("the turn running then ends with an error result, not a wait", async () => {
        const lost = await running;
        assert.ok(!(lost instanceof Error), `an error result, not a timeout: ${lost}`);
        const { result } = lost as Turn;
        assert.equal(result.isError, true);
        assert.equal(result.terminalReason, LOST_TERMINAL_REASON);
      });

      await t.step("the next turn goes through the other relay, with the history", async () => {
        const second = await session.send("What is my name?", { timeoutMs: 60_000 });
        assert.equal(second.result.text, "Echo: What is my name?");
        assert.equal(second.result.sessionId, sessionId, "the same CLI session");
        const messages = lastMessages(api);
        assert.ok(messages.includes("My name is Ada."), `the model sees the history: ${messages}`);
        assert.equal((await other.health())?.sessions, 1, "the other relay holds it now");
        const third = await session.send("And again?", { timeoutMs: 30_000 });
        assert.equal(third.result.text, "Echo: And again?");
      });

      await t.step("no turn result was lost or duplicated for the client", async () => {
        await session.close();
        await reading;
        assert.deepEqual(results.map((result) => result.text), [
          "Echo: My name is Ada.",
          undefined, // the lost turn's error result (its errors say why)
          "Echo: What is my name?",
          "Echo: And again?",
        ]);
      });
    });
  },
);

failoverTest(
  "failover: a PostgreSQL outage mid-conversation; turns go on, the store is caught up",
  async (t) => {
    await withSandbox(async ({ root, work, env, home }) => {
      await using pg = await startPostgres();
      const sql = postgres(pg.url, {
        onnotice: () => {},
        max: 3,
        connect_timeout: 3,
        backoff: (retries: number) => Math.min(3 ** retries / 100, 0.5),
      });
      try {
        const store = new PostgresSessionStore(sql, { timeoutMs: 3_000 });
        const events: MirrorEvent[] = [];
        await using relay = serveRelay({
          tokens: [TOKEN],
          workspace: work,
          // The CLI's HOME is the sandbox's, whose transcript the test reads.
          tenancy: "shared",
          sessionStore: store,
          projectKey: PROJECT_KEY,
          storeTimeoutMs: 1_000,
          onMirror: (event) => events.push(event),
          cli: {
            binary: cli(),
            env,
            clearEnv: true,
            tempDir: root,
            hostSignal: "ignore",
            mirror: { attempts: 1, catchUpDelayMs: 300 },
          },
        });
        await using session = await DuplexSession.start({
          transport: remote({ url: relay.url, token: TOKEN }),
        });
        await session.send("first");
        const sessionId = session.sessionId!;

        await t.step("with the server stopped, turns go on", async () => {
          await pg.stop();
          const second = await session.send("second, while the store is down", {
            timeoutMs: 30_000,
          });
          assert.equal(second.result.isError, false);
          assert.equal(second.result.text, "Echo: second, while the store is down");
        });

        await t.step("the server is back: the store is caught up", async () => {
          await pg.start();
          await session.send("third", { timeoutMs: 30_000 });
          await session.close();
          const statuses = events.map((event) => event.status);
          assert.ok(statuses.includes("failed"), statuses.join(","));
          assert.ok(statuses.includes("caught_up"), statuses.join(","));
          let local: SessionStoreEntry[] = [];
          for await (const project of Deno.readDir(`${home}/.claude/projects`)) {
            const file = `${home}/.claude/projects/${project.name}/${sessionId}.jsonl`;
            local = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
          }
          const stored = await store.load({ projectKey: PROJECT_KEY, sessionId });
          assert.ok(local.length > 0 && stored !== null);
          assert.deepEqual(uuids(stored), uuids(local), "the store equals the local file, by uuid");
        });
      } finally {
        await sql.end({ timeout: 2 });
      }
    });
  },
);
