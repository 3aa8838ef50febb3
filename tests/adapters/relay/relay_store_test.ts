/**
 * The relay with a shared session store: its CLIs mirror their transcripts
 * there (the mirror lines never reach the client), each resumable session
 * has a record there (hashed token and owner), and another relay sharing
 * the store resumes a session it never held, with the history, the input
 * numbering and no line written twice.
 */

import { checkOptions } from "../../../adapters/relay/_relay_config.ts";
import assert from "node:assert/strict";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import { DirectorySessionStore } from "../../../adapters/subprocess/history/mod.ts";
import {
  RELAY_SESSIONS_PROJECT_KEY as RELAY_PROJECT_KEY,
  type RelayOptions,
  serveRelay,
} from "../../../adapters/relay/mod.ts";
import { sha256 } from "../../../adapters/relay/_relay_record.ts";
import { fenceEpoch, fenceKey } from "../../../adapters/relay/_fence.ts";
import { makeTestDir } from "../subprocess/_helpers.ts";
import { mirrorCli, TestClient, TOKEN, waitFor, waitGone } from "./_client.ts";

const OTHER = "other-token-9876543210";

/**
 * A relay on its own HOME (config folder), sharing `store` and a workspace
 * (tenancy shared: as two hosts would, the relays share no HOME).
 */
async function relayOn(
  store: SessionStore | undefined,
  workspace: string,
  overrides: Partial<RelayOptions> = {},
) {
  const home = await makeTestDir();
  const relay = serveRelay({
    tokens: [TOKEN, OTHER],
    workspace,
    tenancy: "shared",
    ...(store ? { sessionStore: store } : {}),
    storeTimeoutMs: 3_000, // a directory store under load can take seconds
    cli: mirrorCli({ extraEnv: { HOME: home }, tempDir: home }),
    ...overrides,
    policy: { exposePid: true, ...overrides.policy },
  });
  return {
    relay,
    home,
    async [Symbol.asyncDispose]() {
      await relay.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

/** A store whose appends to the relay's records can be made to fail. */
class FlakyStore extends InMemorySessionStore {
  failRecords = false;
  override append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (this.failRecords && key.projectKey === RELAY_PROJECT_KEY) {
      return Promise.reject(new Error("the records are down"));
    }
    return super.append(key, entries);
  }
}

function user(text: string, uuid: string = crypto.randomUUID()): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    uuid,
    message: { role: "user", content: [{ type: "text", text }] },
  });
}

function results(client: TestClient): string[] {
  return client.lines().filter((line) => line.type === "result").map((line) => String(line.result));
}

function hello(client: TestClient): { args: string[]; pid: number } {
  return client.lines().find((line) => line.type === "mirror_hello") as never;
}

function flagValue(args: string[], flag: string): string | undefined {
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

async function spawnOn(url: string): Promise<{ client: TestClient; token: string }> {
  const client = new TestClient(url);
  await client.opened;
  client.send({ t: "hello", v: 1, spawn: {} });
  const ready = await client.next("ready");
  return { client, token: ready.session as string };
}

function resumeOn(url: string, session: string, after: number, token = TOKEN): TestClient {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)]);
  client.opened.then(() => client.send({ t: "hello", v: 1, resume: { session, after } }));
  return client;
}

/** Runs a turn: sends the line, waits for its result, acknowledges everything. */
async function turn(client: TestClient, seq: number, line: string, count: number): Promise<void> {
  client.send({ t: "in", seq, line });
  await client.until(`result ${count}`, () => results(client).length >= count, 10_000);
  await client.until(`ack ${seq}`, () => client.texts("ack").some((ack) => ack.seq === seq));
  client.send({ t: "ack", seq: client.lastSeq() });
}

async function recordsOf(store: SessionStore, token: string) {
  const entries = await store.load({
    projectKey: RELAY_PROJECT_KEY,
    sessionId: await sha256(token),
  });
  return (entries ?? []) as Record<string, unknown>[];
}

for (const kind of ["in memory", "in a directory"] as const) {
  Deno.test(`relay with a session store (${kind})`, async (t) => {
    const workspace = await makeTestDir();
    const folders: string[] = [];
    async function newStore(): Promise<SessionStore> {
      if (kind === "in memory") return new InMemorySessionStore();
      const folder = await makeTestDir();
      folders.push(folder);
      return new DirectorySessionStore(folder);
    }
    try {
      await t.step("the CLI mirrors to the store; no mirror line reaches the client", async () => {
        const store = await newStore();
        await using a = await relayOn(store, workspace);
        const { client, token } = await spawnOn(a.relay.url);
        await using _ = client;
        await turn(client, 1, user("one"), 1);
        await turn(client, 2, user("two"), 2);
        assert.deepEqual(results(client), ["one|seen:one", "two|seen:one,two"]);
        assert.ok(!client.stdout().includes("transcript_mirror"), "no mirror line for the client");
        const cliSessionId = flagValue(hello(client).args, "--session-id")!;
        assert.ok(hello(client).args.includes("--session-mirror"));
        client.send({ t: "close" });
        const exit = await client.next("exit", 10_000);
        client.send({ t: "ack", seq: exit.seq });
        await client.closeCode();
        const projectKey = workspace.replace(/[^a-zA-Z0-9]/g, "-");
        const local = (await Deno.readTextFile(
          `${a.home}/.claude/projects/${projectKey}/${cliSessionId}.jsonl`,
        )).trim().split("\n").map((line) => JSON.parse(line));
        const stored = await store.load({ projectKey, sessionId: cliSessionId });
        assert.deepEqual(stored, local, "the store equals the local transcript, the last line too");

        // The end is recorded as the session goes (after the exit's acknowledgement).
        let records = await recordsOf(store, token);
        for (let i = 0; i < 100 && records.at(-1)?.state !== "closed"; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          records = await recordsOf(store, token);
        }
        assert.ok(records.length >= 3, "at the start and after each input line");
        const last = records.at(-1)!;
        assert.equal(last.type, "duplex-relay-session");
        assert.equal(last.cliSessionId, cliSessionId);
        assert.equal(last.applied, 2);
        assert.equal(last.state, "closed", "a closed conversation is marked so");
        assert.equal(last.owner, await sha256(`token:${TOKEN}`));
        const text = JSON.stringify(await store.listSessions!(RELAY_PROJECT_KEY)) +
          JSON.stringify(records);
        assert.ok(!text.includes(token) && !text.includes(TOKEN), "neither token is stored");
        assert.equal(records.filter((r) => r.applied === 1).length >= 1, true);
      });

      await t.step("another relay resumes a session it never held, from the store", async () => {
        const store = await newStore();
        await using a = await relayOn(store, workspace);
        await using b = await relayOn(store, workspace);
        const { client, token } = await spawnOn(a.relay.url);
        await turn(client, 1, user("one"), 1);
        const after = client.lastSeq();
        const cliSessionId = flagValue(hello(client).args, "--session-id")!;
        await a.relay.close(); // its record stays as it is
        await client.close();

        // Another owner and an unknown token: unknown_session alike.
        const thief = resumeOn(b.relay.url, token, after, OTHER);
        await using _thief = thief;
        assert.equal((await thief.next("error")).kind, "unknown_session");
        const stranger = resumeOn(b.relay.url, "x".repeat(43), after);
        await using _stranger = stranger;
        assert.equal((await stranger.next("error")).kind, "unknown_session");
        assert.equal(b.relay.sessionCount, 0, "nothing was started");

        const again = resumeOn(b.relay.url, token, after);
        await using _again = again;
        const ready = await again.next("ready", 10_000);
        assert.equal(ready.resumed, true);
        assert.equal(ready.session, token);
        assert.equal(ready.inSeq, 1, "input numbering from the record");
        await again.until("hello", () => hello(again) !== undefined);
        assert.equal(flagValue(hello(again).args, "--resume"), cliSessionId);
        assert.ok(again.outputSeqs().every((seq) => seq > after), "output after the client's");
        // Re-sent: counted as applied by the record, so acknowledged and not written again.
        again.send({ t: "in", seq: 1, line: user("one") });
        await again.until("ack 1", () => again.texts("ack").some((ack) => ack.seq === 1));
        await turn(again, 2, user("two"), 1);
        assert.deepEqual(results(again), ["two|seen:one,two"], "the history, nothing twice");
        assert.equal(
          await Deno.stat(`${b.home}/.claude/projects`).then(() => true, () => false),
          false,
          "B's own config folder was not used: a private one was materialised",
        );
      });

      await t.step(
        "a re-sent user line whose uuid the store holds is not written again",
        async () => {
          const store = new FlakyStore();
          // Its failing record appends are waited for within the bound: a short one.
          await using a = await relayOn(store, workspace, { storeTimeoutMs: 300 });
          await using b = await relayOn(store, workspace);
          const { client, token } = await spawnOn(a.relay.url);
          const uuid = crypto.randomUUID();
          store.failRecords = true; // the record lags: it still says nothing was applied
          await turn(client, 1, user("one", uuid), 1);
          const after = client.lastSeq();
          const { pid } = hello(client);
          await a.relay.close();
          await client.close();
          assert.ok(await waitGone(pid, 5000));
          store.failRecords = false;
          assert.equal((await recordsOf(store, token)).at(-1)!.applied, 0);

          const again = resumeOn(b.relay.url, token, after);
          await using _again = again;
          assert.equal((await again.next("ready", 10_000)).inSeq, 0);
          again.send({ t: "in", seq: 1, line: user("one", uuid) });
          await again.until("ack 1", () => again.texts("ack").some((ack) => ack.seq === 1));
          await turn(again, 2, user("two"), 1);
          assert.deepEqual(results(again), ["two|seen:one,two"], "'one' was not written again");
        },
      );

      await t.step(
        "hibernated here, gone on elsewhere: back here, it resumes from the store",
        async () => {
          const store = await newStore();
          await using a = await relayOn(store, workspace, { graceMs: 200 });
          await using b = await relayOn(store, workspace);
          const { client, token } = await spawnOn(a.relay.url);
          await turn(client, 1, user("one"), 1);
          await client.close();
          for (let i = 0; i < 100 && a.relay.hibernatedCount === 0; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          assert.equal(a.relay.hibernatedCount, 1, "hibernated on a");
          const onB = resumeOn(b.relay.url, token, client.lastSeq());
          await onB.next("ready", 10_000);
          await turn(onB, 2, user("two"), 1);
          const after = onB.lastSeq();
          await b.relay.close();
          await onB.close();

          const back = resumeOn(a.relay.url, token, after);
          await using _ = back;
          const ready = await back.next("ready", 10_000);
          assert.equal(ready.inSeq, 2, "the store's numbering, not the stale local one");
          await turn(back, 3, user("three"), 1);
          assert.deepEqual(results(back), ["three|seen:one,two,three"]);
        },
      );

      await t.step("a relay with room for one session resumes one from the store", async () => {
        const store = await newStore();
        await using a = await relayOn(store, workspace);
        await using b = await relayOn(store, workspace, { maxSessions: 1 });
        const { client, token } = await spawnOn(a.relay.url);
        await turn(client, 1, user("one"), 1);
        const after = client.lastSeq();
        await a.relay.close();
        await client.close();
        const again = resumeOn(b.relay.url, token, after);
        await using _again = again;
        assert.equal((await again.next("ready", 10_000)).resumed, true, "not refused as busy");
        assert.equal(b.relay.sessionCount, 1);
        const second = new TestClient(b.relay.url);
        await using _second = second;
        await second.opened;
        second.send({ t: "hello", v: 1, spawn: {} });
        assert.equal((await second.next("error")).kind, "busy", "the one slot is taken");
      });

      await t.step("a conversation that ended is not resumed by another relay", async () => {
        const store = await newStore();
        await using a = await relayOn(store, workspace);
        await using b = await relayOn(store, workspace);
        const { client, token } = await spawnOn(a.relay.url);
        await turn(client, 1, user("one"), 1);
        client.send({ t: "close" });
        const exit = await client.next("exit", 10_000);
        client.send({ t: "ack", seq: exit.seq });
        await client.closeCode();
        const again = resumeOn(b.relay.url, token, exit.seq as number);
        await using _ = again;
        assert.equal((await again.next("error")).kind, "unknown_session");
      });

      await t.step("the other relay's policy is checked again", async () => {
        const store = await newStore();
        await using a = await relayOn(store, workspace);
        await using b = await relayOn(store, workspace, { policy: { models: ["haiku"] } });
        const client = new TestClient(a.relay.url);
        await client.opened;
        client.send({ t: "hello", v: 1, spawn: { model: "sonnet" } });
        const token = (await client.next("ready")).session as string;
        await a.relay.close();
        await client.close();
        const again = resumeOn(b.relay.url, token, 0);
        await using _ = again;
        const error = await again.next("error", 10_000);
        assert.equal(error.kind, "not_permitted");
        assert.match(String(error.message), /model/);
      });

      await t.step("without a store the CLI does not mirror and output is untouched", async () => {
        await using env = await relayOn(undefined, workspace);
        const { client } = await spawnOn(env.relay.url);
        await using _ = client;
        await client.until("hello", () => hello(client) !== undefined);
        assert.ok(!hello(client).args.includes("--session-mirror"));
      });
    } finally {
      for (const folder of [workspace, ...folders]) {
        await Deno.remove(folder, { recursive: true }).catch(() => {});
      }
    }
  });
}

/** A store whose transcript appends take `delayMs`. */
class SlowStore extends InMemorySessionStore {
  delayMs = 0;
  override async append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (key.projectKey !== RELAY_PROJECT_KEY) {
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    }
    return await super.append(key, entries);
  }
}

Deno.test("relay: a result reaches the client once the store holds its turn", async () => {
  const workspace = await makeTestDir();
  try {
    const store = new SlowStore();
    await using a = await relayOn(store, workspace, { storeTimeoutMs: 3000 });
    const { client } = await spawnOn(a.relay.url);
    await using _ = client;
    const cliSessionId = async () => {
      await client.until("hello", () => hello(client) !== undefined);
      return flagValue(hello(client).args, "--session-id")!;
    };
    const key = {
      projectKey: workspace.replace(/[^a-zA-Z0-9]/g, "-"),
      sessionId: await cliSessionId(),
    };
    store.delayMs = 400;
    const uuid = crypto.randomUUID();
    const started = Date.now();
    client.send({ t: "in", seq: 1, line: user("slow", uuid) });
    await client.until("the result", () => results(client).length === 1, 10_000);
    const stored = (await store.load(key)) ?? [];
    assert.ok(stored.some((entry) => entry.uuid === uuid), "the user entry is in the store");
    assert.ok(stored.some((entry) => entry.type === "assistant"), "the answer too");
    assert.ok(Date.now() - started >= 400, "the result waited for the append");
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

/** A store whose appends of the relay's records take `recordDelayMs`. */
class SlowRecords extends InMemorySessionStore {
  recordDelayMs = 0;
  override async append(key: SessionKey, entries: readonly SessionStoreEntry[]): Promise<void> {
    if (key.projectKey === RELAY_PROJECT_KEY) {
      await new Promise((resolve) => setTimeout(resolve, this.recordDelayMs));
    }
    return await super.append(key, entries);
  }
}

Deno.test("relay: a session whose client goes while it wakes is kept for a resume", async () => {
  const workspace = await makeTestDir();
  try {
    const store = new SlowRecords();
    await using a = await relayOn(store, workspace, { graceMs: 200, storeTimeoutMs: 3000 });
    const { client, token } = await spawnOn(a.relay.url);
    await turn(client, 1, user("one"), 1);
    const after = client.lastSeq();
    await client.close();
    await waitFor("the hibernation", () => a.relay.hibernatedCount === 1);

    store.recordDelayMs = 500; // the wake saves its first record before it is ready
    const gone = new TestClient(a.relay.url);
    await gone.opened;
    gone.send({ t: "hello", v: 1, resume: { session: token, after } });
    await waitFor("the wake", () => a.relay.hibernatedCount === 0);
    await gone.close();
    // Woken for nobody: it waits for the grace as after a drop, then sleeps again.
    await waitFor("the next hibernation", () => a.relay.hibernatedCount === 1, 10_000);
    assert.equal(a.relay.sessionCount, 0);

    store.recordDelayMs = 0;
    const again = resumeOn(a.relay.url, token, after);
    await using _ = again;
    assert.equal((await again.next("ready", 10_000)).resumed, true, "the conversation is kept");
    await turn(again, 2, user("two"), 1);
    assert.deepEqual(results(again), ["two|seen:one,two"]);
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

Deno.test("relay: a resume elsewhere before the store holds any of the transcript fences nobody", async () => {
  const workspace = await makeTestDir();
  try {
    const store = new InMemorySessionStore();
    await using a = await relayOn(store, workspace);
    await using b = await relayOn(store, workspace);
    const { client, token } = await spawnOn(a.relay.url);
    await using _ = client;
    await client.until("hello", () => hello(client) !== undefined);
    const cliSessionId = flagValue(hello(client).args, "--session-id")!;
    // Before the first turn: b cannot start a CLI from the store, and says try later.
    const early = resumeOn(b.relay.url, token, 0);
    await using __ = early;
    await early.closeCode();
    const refusal = early.texts("error")[0] as { kind?: string; message?: string };
    assert.equal(refusal?.kind, "busy", JSON.stringify(early.received));
    assert.match(refusal?.message ?? "", /holds none of its transcript/);
    assert.equal(fenceEpoch(await store.load(await fenceKey(cliSessionId))), -1, "no fence");
    // a still runs the conversation, and its turn reaches the store.
    await turn(client, 1, user("still on a"), 1);
    const stored = await store.load({
      projectKey: workspace.replace(/[^a-zA-Z0-9]/g, "-"),
      sessionId: cliSessionId,
    });
    assert.ok((stored ?? []).length > 0, "a's turn is stored");
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

Deno.test("relay: with a store, its sessions catch the store up within 5 s of its return", async () => {
  const workspace = await makeTestDir();
  try {
    const store = new InMemorySessionStore();
    const base = { tokens: [TOKEN], workspace, sessionStore: store };
    assert.deepEqual(checkOptions(base).cli.mirror, { maxCatchUpDelayMs: 5_000 });
    const given = { ...base, cli: { mirror: { maxCatchUpDelayMs: 9_000, attempts: 2 } } };
    assert.deepEqual(checkOptions(given).cli.mirror, { maxCatchUpDelayMs: 9_000, attempts: 2 });
    assert.equal(checkOptions({ tokens: [TOKEN], workspace }).cli.mirror, undefined);
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});
