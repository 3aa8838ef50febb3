/**
 * The hostile-client suite, part 3: tenants (issue 21, findings 1 and 4).
 * A tenant's CLI gets none of the relay's environment (its secrets, tokens,
 * database URL): only `PATH`, the `ANTHROPIC_*` / `CLAUDE_*` variables and
 * what the operator lists, with a `HOME`, configuration folder, temporary
 * folder and workspace of its own owner's (tenancy `"per-owner"`, the
 * default), so that no owner's CLI starts in, resumes from or writes to
 * another's folders. The stand-in CLI `_env_cli.ts` prints its whole
 * environment, as a tenant's approved `Bash(env)` would.
 */

import assert from "node:assert/strict";
import { mintRelayToken, type RelayOptions, serveRelay } from "../../../adapters/relay/mod.ts";
import { tenantId } from "../../../adapters/relay/_tenancy.ts";
import { DirectorySessionStore } from "../../../adapters/subprocess/history/mod.ts";
import { MARKER_VARIABLE } from "../../../adapters/subprocess/_marked_processes.ts";
import { isDuplexError } from "../../../src/errors.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { denoRunArgs } from "../subprocess/_helpers.ts";
import {
  cliScript,
  makeTestDir,
  mirrorCli,
  refusalOf,
  startRelay,
  TestClient,
  TOKEN,
  userLine,
} from "./_client.ts";
import { startProgram } from "./_relay_program.ts";

const ENV_CLI = decodeURIComponent(new URL("./_env_cli.ts", import.meta.url).pathname);
const OTHER = "tenancy-other-token-0123456789";
const SECRET = "tenancy-suite-secret-0123456789abcdef";

/** What a relay program holds that no tenant may read. */
const RELAY_ONLY: Record<string, string> = {
  DUPLEX_RELAY_SECRETS: SECRET,
  DUPLEX_RELAY_TOKENS: `${TOKEN},${OTHER}`,
  DATABASE_URL: "postgres://relay:hunter2-db@db.internal:5432/relay",
  RELAY_ADMIN_PASSWORD: "hunter2-admin",
  AWS_SECRET_ACCESS_KEY: "aws-secret-of-the-relay",
};
/** What the CLI needs, which it gets. */
const FOR_THE_CLI: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-test-key",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
};

interface Seen {
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly pid: number;
}

/** The stand-in's `fake_env` lines received so far (one per CLI process of the session). */
function envsOf(client: TestClient): Seen[] {
  return client.lines().filter((line) => line.type === "fake_env") as unknown as Seen[];
}

async function seenBy(client: TestClient, count = 1): Promise<Seen> {
  await client.until("the CLI's environment", () => envsOf(client).length >= count, 15_000);
  return envsOf(client)[count - 1]!;
}

async function openAs(url: string, bearer: string, spawn = {}): Promise<TestClient> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(bearer)]);
  await client.opened;
  client.send({ t: "hello", v: 1, spawn });
  await client.next("ready", 15_000);
  return client;
}

/** The folders the relay gives an owner (tenancy per-owner). */
async function foldersOf(root: string, owner: string) {
  const base = `${root}/tenants/${await tenantId(owner)}`;
  return { base, home: `${base}/home`, tmp: `${base}/tmp`, work: `${base}/work` };
}

/** Asserts that none of the relay's own variables, names or values, reached a CLI. */
function assertNoRelaySecret(seen: Seen): void {
  const text = JSON.stringify(seen.env);
  for (const [name, value] of Object.entries(RELAY_ONLY)) {
    assert.equal(seen.env[name], undefined, `${name} reached the CLI`);
    for (const part of value.split(",")) {
      assert.ok(!text.includes(part), `the value of ${name} reached the CLI`);
    }
  }
  assert.ok(
    Object.keys(seen.env).every((name) => !name.startsWith("DUPLEX_RELAY_")),
    `no relay setting: ${Object.keys(seen.env)}`,
  );
}

/* Deno makes links only with unscoped read and write permissions: `ln` makes them here. */
async function link(target: string, path: string): Promise<void> {
  const { code } = await new Deno.Command("ln", { args: ["-s", target, path] }).output();
  assert.equal(code, 0, `ln -s ${target} ${path}`);
}

Deno.test("hostile tenants: deno task relay passes none of its environment to a CLI", async (t) => {
  const workspace = await makeTestDir();
  const relayHome = await makeTestDir();
  const cli = await cliScript(workspace, ENV_CLI);
  await using relay = await startProgram({
    ...RELAY_ONLY,
    ...FOR_THE_CLI,
    DUPLEX_RELAY_PORT: "0",
    DUPLEX_RELAY_WORKSPACE: workspace,
    DUPLEX_RELAY_CLI_ENV: "HTTPS_PROXY",
    HTTPS_PROXY: "http://proxy.internal:3128",
    CLAUDE_CLI: cli,
    // The relay's own folders: never a tenant's.
    HOME: relayHome,
    CLAUDE_CONFIG_DIR: `${relayHome}/.claude`,
    CLAUDE_CODE_TMPDIR: `${relayHome}/tmp`,
    TMPDIR: `${relayHome}/tmp`,
    CLAUDE_ENV_FILE: `${relayHome}/env.sh`,
  });
  try {
    assert.match(relay.url, /^ws:/);
    const alice = await mintRelayToken({ secret: SECRET, subject: "alice", ttlSeconds: 60 });
    for (
      const [name, bearer, owner] of [
        ["a scoped token's", alice, "sub:alice"],
        ["a static token's", TOKEN, `token:${TOKEN}`],
      ]
    ) {
      await t.step(
        `${name} CLI: PATH, ANTHROPIC_* / CLAUDE_*, the listed, its own folders`,
        async () => {
          const client = await openAs(relay.url, bearer!);
          await using _ = client;
          const seen = await seenBy(client);
          assertNoRelaySecret(seen);
          const own = await foldersOf(workspace, owner!);
          // (PWD: set by the wrapper script's shell.)
          assert.deepEqual(Object.keys(seen.env).filter((name) => name !== "PWD").sort(), [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "CLAUDE_CODE_TMPDIR",
            "CLAUDE_CONFIG_DIR",
            MARKER_VARIABLE, // the subprocess adapter's mark of its processes
            "HOME",
            "HTTPS_PROXY",
            "PATH",
            "TMPDIR",
          ]);
          assert.equal(seen.env.ANTHROPIC_API_KEY, FOR_THE_CLI.ANTHROPIC_API_KEY);
          assert.equal(seen.env.HTTPS_PROXY, "http://proxy.internal:3128");
          assert.equal(seen.env.HOME, own.home);
          assert.equal(seen.env.CLAUDE_CONFIG_DIR, `${own.home}/.claude`);
          assert.equal(seen.env.TMPDIR, own.tmp);
          assert.equal(seen.env.CLAUDE_CODE_TMPDIR, own.tmp);
          assert.equal(seen.cwd, own.work);
          assert.ok(
            !JSON.stringify(seen.env).includes(relayHome),
            "nothing of the relay's folders",
          );
        },
      );
    }

    await t.step("an owner's folder is named by a hash, never by its token", async () => {
      const names = [];
      for await (const entry of Deno.readDir(`${workspace}/tenants`)) names.push(entry.name);
      assert.equal(names.length, 2);
      for (const name of names) {
        assert.match(name, /^[0-9a-f]{32}$/);
        assert.equal((await Deno.stat(`${workspace}/tenants/${name}`)).mode! & 0o777, 0o700);
      }
    });
  } finally {
    relay.child.kill("SIGTERM");
    await relay.output();
    await Deno.remove(cli);
    for (const dir of [workspace, relayHome]) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hostile tenants: deno task relay refuses to list its own settings for the CLIs", async () => {
  await using relay = await startProgram({
    DUPLEX_RELAY_TOKENS: TOKEN,
    DUPLEX_RELAY_PORT: "0",
    DUPLEX_RELAY_CLI_ENV: "HTTPS_PROXY,DUPLEX_RELAY_TOKENS",
  });
  const { code, stderr } = await relay.output();
  assert.equal(code, 2, stderr);
  assert.match(stderr, /DUPLEX_RELAY_CLI_ENV lists DUPLEX_RELAY_TOKENS, the relay's own setting/);
});

Deno.test("hostile tenants: serveRelay() passes none of the host's environment", async (t) => {
  const host = { ...RELAY_ONLY, ...FOR_THE_CLI, CLAUDE_CLI: "/the/relay/s/claude" };
  const before = Object.fromEntries(Object.keys(host).map((name) => [name, Deno.env.get(name)]));
  for (const [name, value] of Object.entries(host)) Deno.env.set(name, value);
  try {
    for (const tenancy of ["per-owner", "shared"] as const) {
      await t.step(`tenancy ${tenancy}`, async () => {
        await using env = await startRelay({ tenancy }, {}, { binaryArgs: denoRunArgs(ENV_CLI) });
        const client = await openAs(env.relay.url, TOKEN);
        await using _ = client;
        const seen = await seenBy(client);
        assertNoRelaySecret(seen);
        assert.equal(seen.env.CLAUDE_CLI, undefined);
        assert.equal(seen.env.ANTHROPIC_API_KEY, FOR_THE_CLI.ANTHROPIC_API_KEY);
        assert.equal(seen.env.RELAY_SPAWN_LOG, `${env.workspace}.spawns`, "cli.extraEnv: passed");
        const own = await foldersOf(env.workspace, `token:${TOKEN}`);
        if (tenancy === "shared") {
          assert.equal(seen.env.HOME, Deno.env.get("HOME"));
          assert.equal(seen.cwd, env.workspace);
        } else {
          assert.equal(seen.env.HOME, own.home);
          assert.equal(seen.cwd, own.work);
        }
      });
    }
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
});

Deno.test("hostile tenants: each owner has its own HOME, config, temp and workspace", async (t) => {
  await using env = await startRelay(
    { tokens: [TOKEN, OTHER], secrets: [SECRET] },
    {},
    { binaryArgs: denoRunArgs(ENV_CLI) },
  );
  const { url } = env.relay;
  const bob = await mintRelayToken({ secret: SECRET, subject: "bob", ttlSeconds: 60 });
  const owners = [[TOKEN, `token:${TOKEN}`], [OTHER, `token:${OTHER}`], [bob, "sub:bob"]];
  const seen: Seen[] = [];

  await t.step("three owners: three sets of folders, none shared", async () => {
    for (const [bearer, owner] of owners) {
      const client = await openAs(url, bearer!);
      await using _ = client;
      const own = await foldersOf(env.workspace, owner!);
      const mine = await seenBy(client);
      assert.equal(mine.env.HOME, own.home);
      assert.equal(mine.cwd, own.work);
      seen.push(mine);
    }
    for (const name of ["HOME", "CLAUDE_CONFIG_DIR", "TMPDIR"]) {
      assert.equal(new Set(seen.map((s) => s.env[name])).size, 3, `three different ${name}`);
    }
    assert.equal(new Set(seen.map((s) => s.cwd)).size, 3);
  });

  await t.step("a cwd that leads to another owner's folders is refused", async () => {
    const other = await tenantId(`token:${OTHER}`);
    for (
      const cwd of [
        `../../${other}/work`,
        `../home`,
        "../../..",
        `${env.workspace}/tenants/${other}/work`,
      ]
    ) {
      const seen = await refusalOf(url, {
        send: (client) => client.send({ t: "hello", v: 1, spawn: { cwd } }),
      });
      assert.equal(seen.kind, "not_permitted", cwd);
      assert.match(seen.message, /Cannot spawn with cwd .*(leaves the workspace|relative)/);
    }
    // A link inside the owner's workspace to another owner's is followed, then refused.
    const mine = (await foldersOf(env.workspace, `token:${TOKEN}`)).work;
    await link((await foldersOf(env.workspace, `token:${OTHER}`)).work, `${mine}/link`);
    const seen = await refusalOf(url, {
      send: (client) => client.send({ t: "hello", v: 1, spawn: { cwd: "link" } }),
    });
    assert.match(seen.message, /leaves the workspace/);
  });

  await t.step("a folder of an owner's replaced by a link: refused, nothing spawned", async () => {
    const started = await env.spawns(3);
    const own = await foldersOf(env.workspace, `sub:bob`);
    const elsewhere = await makeTestDir();
    await Deno.remove(own.home, { recursive: true });
    await link(elsewhere, own.home);
    try {
      const seen = await refusalOf(url, { token: bob });
      assert.equal(seen.kind, "spawn_failed");
      assert.match(seen.message, /a folder of this owner's is a link or not a folder/);
      assert.equal(await env.spawns(started), started);
    } finally {
      await Deno.remove(own.home);
      await Deno.remove(elsewhere, { recursive: true });
    }
  });
});

Deno.test("hostile tenants: tenancy and cli.env are checked", async () => {
  const workspace = await makeTestDir();
  try {
    const invalid = (options: Partial<RelayOptions>, message: RegExp) =>
      assert.throws(
        () => serveRelay({ tokens: [TOKEN], workspace, ...options }),
        (error: unknown) => isDuplexError(error, "invalid_argument") && message.test(error.message),
      );
    invalid({ tenancy: "per-host" as never }, /tenancy must be one of per-owner, shared/);
    for (const name of ["HOME", "CLAUDE_CONFIG_DIR", "TMPDIR", "CLAUDE_CODE_TMPDIR"]) {
      invalid({ cli: { env: { [name]: "/srv/x" } } }, new RegExp(`cli\\.env\\.${name} would be`));
      invalid(
        { tenancy: "per-owner", cli: { extraEnv: { [name]: "/srv/x" } } },
        new RegExp(`cli\\.extraEnv\\.${name} would be every owner's`),
      );
    }
    // Shared: one HOME for every session is what it means.
    await serveRelay({
      tokens: [TOKEN],
      workspace,
      tenancy: "shared",
      cli: { env: { HOME: "/x" } },
    })
      .close();
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});

/** A relay of the mirror stand-in (a transcript in `$CLAUDE_CONFIG_DIR`), per owner. */
function mirrorRelay(workspace: string, overrides: Partial<RelayOptions> = {}) {
  return serveRelay({
    tokens: [TOKEN, OTHER],
    workspace,
    cli: mirrorCli(),
    ...overrides,
  });
}

function results(client: TestClient): string[] {
  return client.lines().filter((line) => line.type === "result").map((line) => String(line.result));
}

async function turn(client: TestClient, seq: number, text: string, count: number): Promise<void> {
  client.send({ t: "in", seq, line: userLine(text) });
  await client.until(`result ${count}`, () => results(client).length >= count, 10_000);
  await client.until(`ack ${seq}`, () => client.texts("ack").some((ack) => ack.seq === seq));
  client.send({ t: "ack", seq: client.lastSeq() });
}

function resumeAs(url: string, bearer: string, session: string, after: number): TestClient {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(bearer)]);
  client.opened.then(() => client.send({ t: "hello", v: 1, resume: { session, after } }));
  return client;
}

/** The transcripts under a configuration folder (paths relative to its `projects/`). */
async function transcripts(configDir: string): Promise<string[]> {
  const found: string[] = [];
  try {
    for await (const project of Deno.readDir(`${configDir}/projects`)) {
      for await (const file of Deno.readDir(`${configDir}/projects/${project.name}`)) {
        found.push(`${project.name}/${file.name}`);
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found;
}

Deno.test("hostile tenants: hibernation and the store resume in the owner's own folders", async (t) => {
  const workspace = await makeTestDir();
  const other = await makeTestDir();
  const storeDir = await makeTestDir();
  const alice = await foldersOf(workspace, `token:${TOKEN}`);
  const bob = await foldersOf(workspace, `token:${OTHER}`);
  try {
    await t.step(
      "a hibernated session wakes with --resume from its owner's transcript",
      async () => {
        await using relay = mirrorRelay(workspace, { graceMs: 200 });
        const client = await openAs(relay.url, TOKEN);
        const session = client.texts("ready")[0]!.session as string;
        await turn(client, 1, "one", 1);
        await client.close();
        const bobs = await openAs(relay.url, OTHER);
        await turn(bobs, 1, "bob's", 1);
        await bobs.close();
        for (let i = 0; i < 200 && relay.hibernatedCount < 2; i++) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.equal(relay.hibernatedCount, 2);
        assert.equal((await transcripts(`${alice.home}/.claude`)).length, 1);
        assert.equal((await transcripts(`${bob.home}/.claude`)).length, 1);

        const thief = resumeAs(relay.url, OTHER, session, client.lastSeq());
        await using _thief = thief;
        assert.equal((await thief.next("error")).kind, "unknown_session");
        const again = resumeAs(relay.url, TOKEN, session, client.lastSeq());
        await using _again = again;
        assert.equal((await again.next("ready", 15_000)).resumed, true);
        await turn(again, 2, "two", 1);
        assert.deepEqual(results(again), ["two|seen:one,two"], "alice's history, not bob's");
      },
    );

    await t.step("another relay resumes from the store into the owner's own folders", async () => {
      const store = new DirectorySessionStore(storeDir);
      const options = { sessionStore: store, projectKey: "tenancy-test" };
      const first = mirrorRelay(workspace, options);
      const client = await openAs(first.url, TOKEN);
      const session = client.texts("ready")[0]!.session as string;
      await turn(client, 1, "one", 1);
      const after = client.lastSeq();
      await first.close();
      await client.close();
      // Another host: its own workspace, the same store.
      await using second = mirrorRelay(other, options);
      const thief = resumeAs(second.url, OTHER, session, after);
      await using _thief = thief;
      assert.equal((await thief.next("error")).kind, "unknown_session");
      const again = resumeAs(second.url, TOKEN, session, after);
      await using _again = again;
      assert.equal((await again.next("ready", 15_000)).resumed, true);
      await turn(again, 2, "two", 1);
      assert.deepEqual(results(again), ["two|seen:one,two"]);
      // Materialised for the new process inside alice's folder there, nothing in bob's.
      const there = await foldersOf(other, `token:${TOKEN}`);
      const written = [];
      for await (const entry of Deno.readDir(there.tmp)) written.push(entry.name);
      assert.ok(written.length > 0, "the resumed configuration folder is in alice's tmp");
      const bobThere = await foldersOf(other, `token:${OTHER}`);
      assert.equal((await transcripts(`${bobThere.home}/.claude`)).length, 0);
    });
  } finally {
    for (const dir of [workspace, other, storeDir]) await Deno.remove(dir, { recursive: true });
  }
});
