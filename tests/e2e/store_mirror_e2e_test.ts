/**
 * The real CLI mirroring its transcript to a store (`--session-mirror`),
 * and a conversation resumed on another "host" (another config folder) from
 * the store alone: the model sees the history; with the store down for a
 * while, turns go on and the store is caught up from the local transcript,
 * its entries then equal the local file's, by uuid.
 */
import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";
import { SessionPool } from "../../adapters/subprocess/pool/mod.ts";
import type { SessionKey, SessionStoreEntry } from "../../src/store/session_store.ts";
import type { SessionEvent } from "../../src/session/events.ts";
import { e2eTest, exists, withSandbox } from "./_harness.ts";

/** A store in memory that can be taken down. */
class TestStore {
  down = false;
  readonly rows = new Map<string, SessionStoreEntry[]>();
  append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (this.down) return Promise.reject(new Error("the store is down"));
    const list = this.rows.get(keyOf(key)) ?? [];
    for (const entry of entries) {
      if (entry.uuid !== undefined && list.some((row) => row.uuid === entry.uuid)) continue;
      list.push(structuredClone(entry));
    }
    this.rows.set(keyOf(key), list);
    return Promise.resolve();
  }
  load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    if (this.down) return Promise.reject(new Error("the store is down"));
    return Promise.resolve(this.rows.get(keyOf(key)) ?? null);
  }
}

function keyOf(key: SessionKey): string {
  return `${key.projectKey}/${key.sessionId}/${key.subpath ?? ""}`;
}

function uuids(entries: readonly SessionStoreEntry[]): string[] {
  return entries.flatMap((entry) => entry.uuid === undefined ? [] : [entry.uuid]);
}

async function localTranscript(home: string, sessionId: string): Promise<SessionStoreEntry[]> {
  for await (const project of Deno.readDir(`${home}/.claude/projects`)) {
    const file = `${home}/.claude/projects/${project.name}/${sessionId}.jsonl`;
    if (!(await exists(file))) continue;
    return (await Deno.readTextFile(file)).trim().split("\n").map((line) => JSON.parse(line));
  }
  return [];
}

e2eTest("the real CLI mirrors to a store; another host resumes from it", async (t, cli) => {
  await withSandbox(async ({ api, root, work, env, home }) => {
    const store = new TestStore();
    const options = { binary: cli, cwd: work, clearEnv: true, sessionStore: store } as const;
    let sessionId = "";
    await t.step("two turns are mirrored; no mirror frame reaches subscribers", async () => {
      await using session = await DuplexSession.start({
        transport: subprocess({ ...options, env }),
      });
      const events: SessionEvent[] = [];
      const sub = session.subscribe();
      const reading = (async () => {
        for await (const event of sub) events.push(event);
      })();
      await session.send("Remember the word heron.");
      await session.send("And the word kestrel.");
      sessionId = session.sessionId!;
      await session.close();
      await reading;
      const types = events.map((event) => event.type);
      assert.equal(
        types.filter((type) => type === "result").length,
        2,
        `both turns seen: ${types}`,
      );
      assert.ok(!types.includes("transcript_mirror"), types.join(","));
      const local = await localTranscript(home, sessionId);
      const stored = [...store.rows.values()][0] ?? [];
      assert.ok(stored.length > 0);
      assert.deepEqual(uuids(stored), uuids(local), "the store equals the local file, by uuid");
    });

    await t.step("another config folder resumes from the store alone", async () => {
      const other = `${root}/other-home`;
      await Deno.mkdir(other);
      await using session = await DuplexSession.start({
        transport: subprocess({ ...options, env: { ...env, HOME: other }, resume: sessionId }),
      });
      const turn = await session.send("Which birds did I name?");
      assert.equal(turn.result.text, "Echo: Which birds did I name?");
      assert.equal(session.sessionId, sessionId);
      const body = JSON.stringify((api.requests.at(-1)!.body as { messages: unknown }).messages);
      assert.ok(body.includes("heron") && body.includes("kestrel"), "the model sees the history");
      assert.equal(
        await exists(`${other}/.claude/projects`),
        false,
        "the other host's folder is untouched",
      );
    });

    await t.step(
      "with the store down mid-conversation, turns go on and it is caught up",
      async () => {
        await using session = await DuplexSession.start({
          transport: subprocess({
            ...options,
            env,
            mirror: { attempts: 1, catchUpDelayMs: 300 },
          }),
        });
        const events: SessionEvent[] = [];
        const sub = session.subscribe();
        const reading = (async () => {
          for await (const event of sub) events.push(event);
        })();
        await session.send("first");
        store.down = true;
        const second = await session.send("second, while the store is down");
        assert.equal(second.result.isError, false, "turns go on");
        const id = session.sessionId!;
        store.down = false;
        await session.send("third");
        await session.close();
        await reading;
        const statuses = events.flatMap((event) => event.type === "mirror" ? [event.status] : []);
        assert.ok(statuses.includes("failed"), statuses.join(","));
        assert.ok(statuses.includes("caught_up"), statuses.join(","));
        const key = [...store.rows.keys()].find((k) => k.includes(id))!;
        const stored = store.rows.get(key)!;
        assert.deepEqual(uuids(stored), uuids(await localTranscript(home, id)));
      },
    );
  });
});

e2eTest(
  "a pool hibernates through the store; a pool on another host resumes from it",
  async (_t, cli) => {
    await withSandbox(async ({ api, root, work, env }) => {
      const store = new TestStore();
      const process = { binary: cli, cwd: work, clearEnv: true, sessionStore: store } as const;
      let sessionId: string | undefined;
      {
        await using pool = new SessionPool({ process: { ...process, env }, maxLive: 1 });
        await pool.withSession("a", (session) => session.send("Remember the word osprey."));
        await pool.withSession("b", (session) => session.send("I am another conversation."));
        assert.equal(pool.peek("a")?.state, "hibernated", "b's start hibernated a");
        sessionId = pool.peek("a")?.sessionId;
      }
      assert.ok(sessionId, "a's session id is kept while it is hibernated");
      const other = `${root}/host-b`;
      await Deno.mkdir(other);
      await using pool = new SessionPool({ process: { ...process, env: { ...env, HOME: other } } });
      const turn = await pool.withSession("a", (session) => session.send("Which bird?"), {
        resume: sessionId,
      });
      assert.equal(turn.result.text, "Echo: Which bird?");
      assert.equal(turn.result.sessionId, sessionId);
      const body = JSON.stringify((api.requests.at(-1)!.body as { messages: unknown }).messages);
      assert.ok(body.includes("osprey"), "host B's process sees host A's history");
      assert.ok(!body.includes("another conversation"), "and nothing of b's");
      assert.equal(pool.health.handouts.resumed, 1);
    });
  },
);
