/**
 * Scoped tokens at the relay: a token's policy narrows the relay's and never
 * widens it, sessions are bound to the token's subject, secrets rotate, and
 * static tokens keep working next to them. Also: the pid in `ready` only when
 * the policy exposes it.
 */

import assert from "node:assert/strict";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import { remote } from "../../../adapters/remote/mod.ts";
import { mintRelayToken, type RelayTokenPolicy } from "../../../src/token/mod.ts";
import { DuplexSession } from "../../../src/session/duplex_session.ts";
import { bearerProtocol, CLOSE, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import {
  countedCli,
  makeTestDir,
  ownerWorkspace,
  refusalOf,
  startRelay,
  TestClient,
  TOKEN,
  userLine,
} from "./_client.ts";

const SECRET = "scoped-suite-secret-0123456789abcdef";
const PREVIOUS = "scoped-suite-previous-0123456789abcd";

function token(policy?: RelayTokenPolicy, subject = "alice", secret = SECRET): Promise<string> {
  return mintRelayToken({ secret, subject, ttlSeconds: 60, ...(policy && { policy }) });
}

async function open(
  url: string,
  bearer: string,
  hello: Record<string, unknown>,
): Promise<TestClient> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(bearer)]);
  await client.opened;
  client.send({ t: "hello", v: 1, ...hello });
  await client.until("ready or error", () => client.received.length > 0);
  return client;
}

/** The CLI flags and folder of a session the stand-in CLI reports. */
async function cliOf(client: TestClient): Promise<{ args: string[]; cwd: string }> {
  await client.until("fake_hello", () => client.lines().length > 0);
  const hello = client.lines()[0]!;
  return { args: hello.args as string[], cwd: hello.cwd as string };
}

Deno.test("a scoped token narrows the relay's policy and never widens it", async (t) => {
  await using env = await startRelay({
    secrets: [SECRET],
    policy: {
      models: ["sonnet", "haiku"],
      permissionModes: ["default", "plan"],
      maxTurns: 5,
      allowPartialMessages: true,
    },
  }, { FAKE_CLAUDE_HELLO: "1" });
  const { relay } = env;
  // Alice's own workspace (tenancy per-owner, the default): the token's cwd is inside it.
  const workspace = await ownerWorkspace(env.workspace, "sub:alice");
  await Deno.mkdir(`${workspace}/alice/notes`, { recursive: true });
  await Deno.mkdir(`${workspace}/bob`);
  const refused = async (policy: RelayTokenPolicy, spawn: Record<string, unknown>) =>
    await refusalOf(relay.url, {
      token: await token(policy),
      send: (client) => client.send({ t: "hello", v: 1, spawn }),
    });

  await t.step("narrowing: only what both allow", async () => {
    for (
      const [policy, spawn, option] of [
        [{ models: ["haiku"] }, { model: "sonnet" }, "model"],
        [{ permissionModes: ["plan"] }, { permissionMode: "default" }, "permissionMode"],
        [{ maxTurns: 2 }, { maxTurns: 3 }, "maxTurns"],
        [
          { allowPartialMessages: false },
          { includePartialMessages: true },
          "includePartialMessages",
        ],
        [{ allowResume: false }, { resume: "0b3a1c2e-1111-4222-8333-444455556666" }, "resume"],
      ] as const
    ) {
      const seen = await refused(policy, spawn);
      assert.equal(seen.kind, "not_permitted", JSON.stringify(policy));
      assert.match(seen.message, new RegExp(`Cannot spawn with ${option}`));
    }
  });

  await t.step("widening attempts are refused as if the token said nothing", async () => {
    for (
      const [policy, spawn, option] of [
        [{ models: ["opus"] }, { model: "opus" }, "model"],
        [{ models: ["--dangerously-skip-permissions"] }, {
          model: "--dangerously-skip-permissions",
        }, "model"],
        [
          { permissionModes: ["bypassPermissions"] },
          { permissionMode: "bypassPermissions" },
          "permissionMode",
        ],
        [{ maxTurns: 100 }, { maxTurns: 6 }, "maxTurns"],
        [{ cwd: ".." }, {}, "the token's cwd"],
        [{ cwd: "alice/../.." }, {}, "the token's cwd"],
        [{ cwd: "missing" }, {}, "the token's cwd"],
        [{ cwd: "alice" }, { cwd: "../bob" }, "cwd"],
      ] as const
    ) {
      const seen = await refused(policy, spawn);
      assert.equal(seen.kind, "not_permitted", JSON.stringify(policy));
      assert.match(seen.message, new RegExp(`Cannot spawn with ${option} `));
    }
    assert.equal(await env.spawns(0), 0, "none of them started a CLI");
  });

  await t.step(
    "what the token allows becomes CLI flags; its cwd confines the session",
    async () => {
      const policy = { models: ["haiku"], maxTurns: 2, cwd: "alice" };
      const client = await open(relay.url, await token(policy), {
        spawn: { model: "haiku", cwd: "notes" },
      });
      await using _ = client;
      const cli = await cliOf(client);
      assert.ok(cli.args.includes("--model=haiku"));
      assert.ok(cli.args.includes("--max-turns=2"), "the token's maxTurns applied by default");
      assert.equal(cli.cwd, `${workspace}/alice/notes`);
      const plain = await open(relay.url, await token(policy), { spawn: {} });
      await using _plain = plain;
      assert.equal((await cliOf(plain)).cwd, `${workspace}/alice`);
    },
  );

  await t.step("a token's allowResume true cannot reopen what the relay closed", async () => {
    await using closed = await startRelay({ secrets: [SECRET], policy: { allowResume: false } });
    const bearer = await token({ allowResume: true });
    const client = await open(closed.relay.url, bearer, { spawn: {} });
    const session = (await client.next("ready")).session;
    await client.close();
    const seen = await refusalOf(closed.relay.url, {
      token: bearer,
      send: (c) => c.send({ t: "hello", v: 1, resume: { session, after: 0 } }),
    });
    assert.equal(seen.kind, "unknown_session");
  });
});

Deno.test("a scoped session is bound to its subject; secrets rotate; static tokens still work", async (t) => {
  await using env = await startRelay({ secrets: [SECRET, PREVIOUS] });
  const url = env.relay.url;

  await t.step("a fresh token of the same subject resumes; another subject cannot", async () => {
    const first = await open(url, await token({}, "alice"), { spawn: {} });
    const ready = await first.next("ready");
    first.send({ t: "in", seq: 1, line: userLine("one") });
    await first.until("result", () => first.lines().some((line) => line.type === "result"));
    const after = first.lastSeq();
    await first.close();
    const stranger = await refusalOf(url, {
      token: await token({}, "mallory"),
      send: (c) => c.send({ t: "hello", v: 1, resume: { session: ready.session, after } }),
    });
    assert.equal(stranger.kind, "unknown_session");
    assert.equal(stranger.code, CLOSE.cannotResume);
    const again = await open(url, await token({}, "alice", PREVIOUS), {
      resume: { session: ready.session, after },
    });
    await using _ = again;
    assert.equal(
      (await again.next("ready")).resumed,
      true,
      "alice, with a token of the old secret",
    );
  });

  await t.step("a static token and a scoped one together", async () => {
    await using both = await startRelay({ tokens: [TOKEN], secrets: [SECRET] });
    const byToken = await open(both.relay.url, TOKEN, { spawn: {} });
    await using _a = byToken;
    assert.equal((await byToken.next("ready")).resumed, false);
    const byJwt = await open(both.relay.url, await token(), { spawn: {} });
    await using _b = byJwt;
    assert.equal((await byJwt.next("ready")).resumed, false);
  });

  await t.step("the remote client drives a turn with a minted token", async () => {
    await using session = await DuplexSession.start({
      transport: remote({ url, token: await token({}, "worker-7"), reconnect: false }),
    });
    assert.equal((await session.send("hello from the edge")).result.text, "hello from the edge");
  });
});

Deno.test("ready names the CLI's pid only when the policy exposes it", async (t) => {
  const workspace = await makeTestDir();
  const log = `${workspace}.spawns`;
  const relayWith = (policy: Record<string, unknown>) =>
    serveRelay({ tokens: [TOKEN], secrets: [SECRET], workspace, cli: countedCli(log), policy });
  try {
    await t.step("by default: no pid", async () => {
      await using relay = relayWith({});
      const client = await open(relay.url, TOKEN, { spawn: {} });
      await using _ = client;
      const ready = await client.next("ready");
      assert.equal("pid" in ready, false, JSON.stringify(ready));
    });
    await t.step("exposePid: the pid, unless a scoped token narrows it away", async () => {
      await using relay = relayWith({ exposePid: true });
      const client = await open(relay.url, TOKEN, { spawn: {} });
      await using _ = client;
      assert.equal(typeof (await client.next("ready")).pid, "number");
      const scoped = await open(relay.url, await token({ exposePid: false }), { spawn: {} });
      await using _scoped = scoped;
      assert.equal("pid" in await scoped.next("ready"), false);
    });
    await t.step("a token's exposePid true cannot widen a relay that hides it", async () => {
      await using relay = relayWith({});
      const client = await open(relay.url, await token({ exposePid: true }), { spawn: {} });
      await using _ = client;
      assert.equal("pid" in await client.next("ready"), false);
    });
  } finally {
    await Deno.remove(log).catch(() => {});
    await Deno.remove(workspace, { recursive: true });
  }
});
