/**
 * Hostile tenants of one relay (issue 21, findings 3 and 6).
 *
 * - `spawn.resume` names a CLI session id, which is in every frame of its
 *   conversation: Bob naming Alice's (from the host's transcripts, or from
 *   the shared store) gets exactly what an unknown id gets, after the same
 *   work, and Alice's transcript is unchanged; Alice still resumes it.
 * - A hibernated session's wake checks its spawn request again against the
 *   resuming credential's policy, as a resume from the store does: a
 *   narrower token of the same subject is refused what it does not allow.
 */

import assert from "node:assert/strict";
import { bearerProtocol, CLOSE, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { InMemorySessionStore } from "../../../src/store/in_memory_session_store.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import {
  mintRelayToken,
  type RelayOptions,
  type RelayTokenPolicy,
  serveRelay,
} from "../../../adapters/relay/mod.ts";
import { tenantId, TENANTS_FOLDER } from "../../../adapters/relay/_tenancy.ts";
import {
  makeTestDir,
  mirrorCli,
  refusalOf,
  type SeenRefusal,
  startRelay,
  TestClient,
  userLine,
  waitFor,
  waitGone,
} from "./_client.ts";

const ALICE = "alice-static-token-0123456789";
const BOB = "bob-static-token-9876543210ab";
const SECRET = "tenants-suite-secret-0123456789abcdef";
/**
 * Every owner's CLIs share the host's configuration folder (one HOME) and
 * workspace: a transcript of one is where any other's `--resume` would look.
 */
const SHARED: Partial<RelayOptions> = { tenancy: "shared" };

function user(text: string): string {
  return JSON.stringify({
    type: "user",
    session_id: "",
    parent_tool_use_id: null,
    uuid: crypto.randomUUID(),
    message: { role: "user", content: [{ type: "text", text }] },
  });
}

function results(client: TestClient): Record<string, unknown>[] {
  return client.lines().filter((line) => line.type === "result");
}

/** Connects with a token and sends a hello. */
async function connect(
  url: string,
  token: string,
  hello: Record<string, unknown>,
): Promise<TestClient> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(token)]);
  await client.opened;
  client.send({ t: "hello", v: 1, ...hello });
  return client;
}

/** Runs a turn: sends the line, waits for its result and acknowledgement, acknowledges all. */
async function turn(client: TestClient, seq: number, text: string): Promise<string> {
  const before = results(client).length;
  client.send({ t: "in", seq, line: user(text) });
  await client.until(`result of ${text}`, () => results(client).length > before, 10_000);
  await client.until(`ack ${seq}`, () => client.texts("ack").some((ack) => ack.seq === seq));
  client.send({ t: "ack", seq: client.lastSeq() });
  return String(results(client).at(-1)!.result);
}

/** Ends a conversation as its client does: close, the exit acknowledged. */
async function end(client: TestClient): Promise<void> {
  client.send({ t: "close" });
  const exit = await client.next("exit", 10_000);
  client.send({ t: "ack", seq: exit.seq });
  await client.closeCode();
}

/** A relay of two tenants running the transcript-keeping stand-in CLI on its own HOME. */
async function tenantsRelay(workspace: string, overrides: Partial<RelayOptions> = {}) {
  const home = await makeTestDir();
  const relay = serveRelay({
    tokens: [ALICE, BOB],
    workspace,
    storeTimeoutMs: 2000,
    ...SHARED,
    cli: mirrorCli({ extraEnv: { HOME: home }, tempDir: home }),
    ...overrides,
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

/** The path of a transcript under a config folder (wherever its project folder is). */
async function transcriptPath(home: string, cliSessionId: string): Promise<string> {
  for await (const project of Deno.readDir(`${home}/.claude/projects`)) {
    const path = `${home}/.claude/projects/${project.name}/${cliSessionId}.jsonl`;
    if (await Deno.stat(path).then(() => true, () => false)) return path;
  }
  throw new Error(`No transcript of ${cliSessionId} under ${home}`);
}

/** Alice's conversation: one turn, then ended by her client. Returns its CLI session id. */
async function alicesConversation(url: string): Promise<string> {
  const alice = await connect(url, ALICE, { spawn: {} });
  await using _ = alice;
  await alice.next("ready");
  assert.equal(
    await turn(alice, 1, "alice's secret").then((r) => r.split("|")[0]),
    "alice's secret",
  );
  // The id is in every frame her client receives.
  const id = String(results(alice)[0]!.session_id);
  assert.match(id, /^[0-9a-f-]{36}$/);
  await end(alice);
  return id;
}

/** What a spawn that resumes `resume` gets, as `token`. */
function resumeRefusal(url: string, token: string, resume: string): Promise<SeenRefusal> {
  return refusalOf(url, {
    token,
    send: (client) => client.send({ t: "hello", v: 1, spawn: { resume } }),
  });
}

/**
 * Bob's spawn.resume of Alice's id and of unknown ids, one after the other
 * (so that the machine's load falls on both alike): the median of each,
 * which must not differ by more than a few ms or half of the unknown's.
 */
async function assertSameTime(url: string, id: string, rounds: number): Promise<void> {
  const stolen: number[] = [];
  const unknown: number[] = [];
  const time = async (resume: string, into: number[]) => {
    const started = performance.now();
    await resumeRefusal(url, BOB, resume);
    into.push(performance.now() - started);
  };
  await time(id, []); // warm up
  for (let i = 0; i < rounds; i++) {
    await time(id, stolen);
    await time(crypto.randomUUID(), unknown);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
  const [a, b] = [median(stolen), median(unknown)];
  assert.ok(
    Math.abs(a - b) < Math.max(5, 0.5 * b),
    `medians ${a.toFixed(2)} ms (Alice's id) and ${b.toFixed(2)} ms (unknown)`,
  );
}

/** Bob's attempts on Alice's id get exactly what an unknown id and a name get. */
async function assertLikeUnknown(url: string, id: string): Promise<void> {
  const stolen = await resumeRefusal(url, BOB, id);
  assert.deepEqual(stolen, await resumeRefusal(url, BOB, crypto.randomUUID()), "as an unknown id");
  assert.deepEqual(stolen, await resumeRefusal(url, BOB, "alice"), "as a name");
  assert.equal(stolen.kind, "unknown_session");
  assert.equal(stolen.code, CLOSE.cannotResume);
  assert.doesNotMatch(stolen.message, new RegExp(id), "the id is not echoed");
}

Deno.test("spawn.resume opens only the asking owner's own conversation", async (t) => {
  const workspace = await makeTestDir();
  try {
    await t.step("from the host's transcripts: Bob gets what an unknown id gets", async () => {
      await using env = await tenantsRelay(workspace);
      const url = env.relay.url;
      const id = await alicesConversation(url);
      const path = await transcriptPath(env.home, id);
      const before = await Deno.readTextFile(path);

      await assertLikeUnknown(url, id);
      assert.equal(await Deno.readTextFile(path), before, "Alice's transcript is unchanged");
      await waitFor("no session", () => env.relay.sessionCount === 0);

      const owner = await connect(url, ALICE, { spawn: { resume: id } });
      await using _ = owner;
      await owner.next("ready");
      assert.equal(await turn(owner, 1, "again"), "again|seen:alice's secret,again");
      await assertLikeUnknown(url, id);
    });

    await t.step("per-owner tenancy (the default): the same answer", async () => {
      await using relay = serveRelay({
        tokens: [ALICE, BOB],
        workspace,
        cli: mirrorCli(),
      });
      const id = await alicesConversation(relay.url);
      const home = `${workspace}/${TENANTS_FOLDER}/${await tenantId(`token:${ALICE}`)}/home`;
      const path = await transcriptPath(home, id);
      const before = await Deno.readTextFile(path);
      await assertLikeUnknown(relay.url, id);
      assert.equal(await Deno.readTextFile(path), before, "Alice's transcript is unchanged");
      const owner = await connect(relay.url, ALICE, { spawn: { resume: id } });
      await using _ = owner;
      await owner.next("ready");
      assert.equal(await turn(owner, 1, "again"), "again|seen:alice's secret,again");
    });

    await t.step("about the same time for Alice's id as for an unknown one", async () => {
      await using env = await tenantsRelay(workspace);
      const id = await alicesConversation(env.relay.url);
      const url = env.relay.url;
      await assertSameTime(url, id, 20);
    });

    for (const kind of ["in memory", "in a directory"] as const) {
      await t.step(
        `from the shared store (${kind}): Bob gets what an unknown id gets`,
        async () => {
          const folder = await makeTestDir();
          try {
            const store: SessionStore = kind === "in memory"
              ? new InMemorySessionStore()
              : new (await import("../../../adapters/subprocess/history/mod.ts"))
                .DirectorySessionStore(
                folder,
              );
            // One project key for every relay and owner: the transcript's key is its id alone.
            const shared = { sessionStore: store, projectKey: "tenants" };
            await using a = await tenantsRelay(workspace, shared);
            await using b = await tenantsRelay(workspace, shared);
            const id = await alicesConversation(a.relay.url);
            await a.relay.close();
            const key = { projectKey: "tenants", sessionId: id };
            const stored = await store.load(key);
            assert.ok((stored ?? []).length >= 3, "her transcript is in the store");

            await assertLikeUnknown(b.relay.url, id);
            assert.deepEqual(await store.load(key), stored, "her stored transcript is unchanged");
            assert.equal(b.relay.sessionCount, 0, "nothing was started for Bob");
            await assertSameTime(b.relay.url, id, 12);

            // Alice resumes it on the other relay: the store knows her.
            const owner = await connect(b.relay.url, ALICE, { spawn: { resume: id } });
            await using _ = owner;
            await owner.next("ready", 10_000);
            assert.equal(await turn(owner, 1, "again"), "again|seen:alice's secret,again");
          } finally {
            await Deno.remove(folder, { recursive: true }).catch(() => {});
          }
        },
      );
    }
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});

function token(subject: string, policy?: RelayTokenPolicy): Promise<string> {
  return mintRelayToken({ secret: SECRET, subject, ttlSeconds: 300, ...(policy && { policy }) });
}

/** The stand-in CLI's report of its flags and folder (the first line of its output). */
async function cliOf(client: TestClient): Promise<{ args: string[]; cwd: string }> {
  await client.until("fake_hello", () => client.lines().some((l) => l.type === "fake_hello"));
  const hello = client.lines().find((line) => line.type === "fake_hello")!;
  return { args: hello.args as string[], cwd: hello.cwd as string };
}

const POLICY = {
  models: ["sonnet", "haiku"],
  permissionModes: ["default", "acceptEdits", "plan"],
  maxTurns: 8,
};

/**
 * Spawns as `bearer`, runs a turn, acknowledges everything and leaves; waits
 * until its process has gone and the session is hibernated.
 */
async function hibernate(
  relay: { readonly url: string; readonly hibernatedCount: number },
  bearer: string,
  spawn: Record<string, unknown>,
): Promise<{ session: string; after: number }> {
  const before = relay.hibernatedCount;
  const client = await connect(relay.url, bearer, { spawn });
  const ready = await client.next("ready");
  client.send({ t: "in", seq: 1, line: userLine("one") });
  await client.until("result", () => results(client).length === 1);
  const after = client.lastSeq();
  client.send({ t: "ack", seq: after });
  await client.close();
  assert.ok(await waitGone(ready.pid as number, 5000), "the process is closed after the grace");
  await waitFor("the hibernation", () => relay.hibernatedCount === before + 1);
  return { session: ready.session as string, after };
}

/** A resume's answer: its ready, or its refusal. */
async function resumeAs(
  url: string,
  bearer: string,
  session: { session: string; after: number },
): Promise<TestClient> {
  const client = await connect(url, bearer, { resume: session });
  await client.until(
    "ready or error",
    () => client.texts("ready").length > 0 || client.texts("error").length > 0,
    10_000,
  );
  return client;
}

Deno.test("a hibernated session's wake is checked against the resuming token's policy", async (t) => {
  await using env = await startRelay(
    { ...SHARED, secrets: [SECRET], graceMs: 200, policy: POLICY },
    { FAKE_CLAUDE_HELLO: "1" },
  );
  const { relay } = env;
  const wide = await token("alice");

  /** The narrower token is refused, the session stays; the wide one still wakes it. */
  async function refused(
    spawn: Record<string, unknown>,
    narrow: RelayTokenPolicy,
    option: RegExp,
  ): Promise<{ message: string; woken: { args: string[]; cwd: string } }> {
    const hibernated = await hibernate(relay, wide, spawn);
    const client = await resumeAs(relay.url, await token("alice", narrow), hibernated);
    await using _ = client;
    assert.equal(client.texts("ready").length, 0, "not woken for the narrower token");
    const error = client.texts("error")[0]!;
    assert.equal(error.kind, "not_permitted");
    assert.match(String(error.message), option);
    assert.equal(await client.closeCode(), CLOSE.policy);
    assert.equal(relay.hibernatedCount, 1, "still hibernated");
    const owner = await resumeAs(relay.url, wide, hibernated);
    await using _owner = owner;
    assert.equal(owner.texts("ready").length, 1, "the first token still wakes it");
    const woken = await cliOf(owner);
    await end(owner); // for good: nothing left hibernated for the next step
    await waitFor("the session's end", () => relay.sessionCount === 0);
    assert.equal(relay.hibernatedCount, 0);
    return { message: String(error.message), woken };
  }

  await t.step(
    "an acceptEdits session: not woken in acceptEdits for a token without it",
    async () => {
      const { woken } = await refused(
        { permissionMode: "acceptEdits" },
        { permissionModes: ["default", "plan"] },
        /permissionMode "acceptEdits"/,
      );
      assert.ok(woken.args.includes("--permission-mode=acceptEdits"));
    },
  );

  await t.step("a model the token does not list", async () => {
    await refused({ model: "sonnet" }, { models: ["haiku"] }, /model "sonnet"/);
  });

  await t.step("maxTurns above the token's", async () => {
    await refused({ maxTurns: 6 }, { maxTurns: 2 }, /maxTurns 6/);
  });

  await t.step("partial messages the token does not allow", async () => {
    await refused(
      { includePartialMessages: true },
      { allowPartialMessages: false },
      /includePartialMessages/,
    );
  });

  await t.step("a folder outside the token's cwd", async () => {
    await Deno.mkdir(`${env.workspace}/alice/a`, { recursive: true });
    await Deno.mkdir(`${env.workspace}/alice/b`, { recursive: true });
    const { woken } = await refused({ cwd: "alice/a" }, { cwd: "alice/b" }, /folder "alice\/a"/);
    assert.equal(woken.cwd, `${env.workspace}/alice/a`);
  });

  await t.step("what the token allows narrows the wake, as for a new spawn", async () => {
    const hibernated = await hibernate(relay, wide, { cwd: "alice/a" });
    // maxTurns the request did not name is the token's; the folder is inside the token's cwd.
    const narrow = await token("alice", { maxTurns: 2, cwd: "alice" });
    const client = await resumeAs(relay.url, narrow, hibernated);
    await using _ = client;
    assert.equal(client.texts("ready").length, 1, JSON.stringify(client.texts("error")));
    const { args, cwd } = await cliOf(client);
    assert.ok(args.includes("--max-turns=2"), args.join(" "));
    assert.equal(cwd, `${env.workspace}/alice/a`, "in the folder it ran in");
  });
});

Deno.test("the store's wake refuses the narrower token with the same words", async () => {
  const store = new InMemorySessionStore();
  const workspace = await makeTestDir();
  try {
    await using hibernating = await startRelay(
      { ...SHARED, secrets: [SECRET], graceMs: 200, policy: POLICY, workspace },
      { FAKE_CLAUDE_HELLO: "1" },
    );
    await using a = await startRelay(
      { ...SHARED, secrets: [SECRET], policy: POLICY, workspace, sessionStore: store },
      { FAKE_CLAUDE_HELLO: "1" },
    );
    await using b = await startRelay(
      { ...SHARED, secrets: [SECRET], policy: POLICY, workspace, sessionStore: store },
      { FAKE_CLAUDE_HELLO: "1" },
    );
    const wide = await token("alice");
    const narrow = await token("alice", { permissionModes: ["default"] });
    const spawn = { permissionMode: "acceptEdits" };

    const slept = await hibernate(hibernating.relay, wide, spawn);
    const fromHibernation = await resumeAs(hibernating.relay.url, narrow, slept);
    await using _h = fromHibernation;

    const client = await connect(a.relay.url, wide, { spawn });
    const session = (await client.next("ready")).session as string;
    await a.relay.close();
    await client.close();
    const fromStore = await resumeAs(b.relay.url, narrow, { session, after: 0 });
    await using _s = fromStore;

    const hibernated = fromHibernation.texts("error");
    const stored = fromStore.texts("error");
    assert.equal(stored.length, 1);
    assert.deepEqual(hibernated, stored, "one rule for both wakes");
    assert.equal(stored[0]!.kind, "not_permitted");
  } finally {
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});
