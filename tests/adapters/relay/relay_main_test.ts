/**
 * `deno task relay` (adapters/relay/main.ts) as a process: configured by
 * DUPLEX_RELAY_* variables, scoped tokens and origins included.
 */

import assert from "node:assert/strict";
import { mintRelayToken } from "../../../adapters/relay/mod.ts";
import { COUNTED_CLI, makeTestDir, spawnCount, TestClient } from "./_client.ts";
import { refusedUpgrade } from "./_upgrade.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { startProgram } from "./_relay_program.ts";

const SECRET = "main-test-secret-0123456789abcdefgh";
const OLD = "main-test-old-secret-0123456789abcd";

Deno.test("deno task relay reads DUPLEX_RELAY_SECRETS and DUPLEX_RELAY_ORIGINS", async (t) => {
  const workspace = await makeTestDir();
  const log = `${workspace}.spawns`;
  const cli = `${workspace}.cli.sh`;
  await Deno.writeTextFile(
    cli,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A --no-config --quiet "${COUNTED_CLI}" "$@"\n`,
  );
  await Deno.chmod(cli, 0o755);
  const relay = await startProgram({
    DUPLEX_RELAY_SECRETS: `${SECRET}, ${OLD}`,
    DUPLEX_RELAY_ORIGINS: "https://app.example.com,https://admin.example.com",
    DUPLEX_RELAY_PORT: "0",
    DUPLEX_RELAY_WORKSPACE: workspace,
    CLAUDE_CLI: cli,
    RELAY_SPAWN_LOG: log,
    DUPLEX_RELAY_CLI_ENV: "RELAY_SPAWN_LOG",
    PATH: Deno.env.get("PATH") ?? "",
  });
  try {
    await t.step("it listens and takes a scoped token signed with either secret", async () => {
      assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1$/);
      for (const secret of [SECRET, OLD]) {
        const token = await mintRelayToken({ secret, subject: "u", ttlSeconds: 60 });
        const client = new TestClient(relay.url, [SUBPROTOCOL, bearerProtocol(token)], {
          origin: "https://admin.example.com",
        });
        await using _ = client;
        await client.opened;
        client.send({ t: "hello", v: 1, spawn: {} });
        assert.equal((await client.next("ready", 15_000)).resumed, false);
      }
    });

    await t.step(
      "an origin it does not list is refused; so is a token of another secret",
      async () => {
        const token = await mintRelayToken({ secret: SECRET, subject: "u", ttlSeconds: 60 });
        const origin = await refusedUpgrade(relay.url, {
          token,
          headers: { origin: "https://evil.example" },
        });
        assert.equal(origin.kind, "not_permitted");
        assert.equal(origin.status, 403, "refused before the upgrade");
        const stranger = await mintRelayToken({
          secret: "x".repeat(40),
          subject: "u",
          ttlSeconds: 60,
        });
        assert.equal((await refusedUpgrade(relay.url, { token: stranger })).kind, "unauthorized");
      },
    );

    await t.step("SIGTERM: it closes every session and exits 0", async () => {
      relay.child.kill("SIGTERM");
      const { code } = await relay.output();
      assert.equal(code, 0);
      assert.equal(await spawnCount(log), 2);
    });
  } finally {
    try {
      relay.child.kill("SIGKILL");
    } catch {
      // Exited.
    }
    await relay.output().catch(() => {});
    for (const path of [log, cli]) await Deno.remove(path).catch(() => {});
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("deno task relay refuses to start without tokens or secrets, or with a bad one", async () => {
  for (
    const [env, message] of [
      [{}, /DUPLEX_RELAY_TOKENS and DUPLEX_RELAY_SECRETS are both empty/],
      [{ DUPLEX_RELAY_SECRETS: "short" }, /secrets\[0\] must be at least 32 bytes/],
      [{ DUPLEX_RELAY_TOKENS: "t", DUPLEX_RELAY_ORIGINS: "https://a.example/" }, /not an origin/],
    ] as const
  ) {
    const relay = await startProgram({ ...env, DUPLEX_RELAY_PORT: "0" });
    const { code, stderr } = await relay.output();
    assert.equal(code, 2, stderr);
    assert.match(stderr, message);
  }
});

Deno.test("deno task relay mirrors to DUPLEX_RELAY_STORE_DIR and keeps records there", async () => {
  const workspace = await makeTestDir();
  const store = await makeTestDir();
  const cli = `${workspace}.cli.sh`;
  const mirrorCli = decodeURIComponent(new URL("./_mirror_cli.ts", import.meta.url).pathname);
  await Deno.writeTextFile(
    cli,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A --no-config --quiet "${mirrorCli}" "$@"\n`,
  );
  await Deno.chmod(cli, 0o755);
  const relay = await startProgram({
    DUPLEX_RELAY_TOKENS: "main-store-token",
    DUPLEX_RELAY_PORT: "0",
    DUPLEX_RELAY_WORKSPACE: workspace,
    DUPLEX_RELAY_STORE_DIR: store,
    DUPLEX_RELAY_PROJECT_KEY: "main-test",
    CLAUDE_CLI: cli,
    HOME: workspace,
    PATH: Deno.env.get("PATH") ?? "",
  });
  try {
    const client = new TestClient(relay.url, [SUBPROTOCOL, bearerProtocol("main-store-token")]);
    await using _ = client;
    await client.opened;
    client.send({ t: "hello", v: 1, spawn: {} });
    await client.next("ready");
    client.send({
      t: "in",
      seq: 1,
      line: JSON.stringify({ type: "user", message: { content: "hi" } }),
    });
    await client.until("the result", () => client.lines().some((line) => line.type === "result"));
    await client.until("the ack", () => client.texts("ack").length > 0);
    const folders: string[] = [];
    for await (const entry of Deno.readDir(store)) folders.push(entry.name);
    assert.ok(folders.includes("duplex-relay"), `the records: ${folders}`);
    assert.ok(folders.includes("main-test"), `the transcripts under the project key: ${folders}`);
    assert.ok(!client.stdout().includes("transcript_mirror"));
  } finally {
    relay.child.kill("SIGTERM");
    await relay.output().catch(() => {});
    await Deno.remove(cli).catch(() => {});
    for (const dir of [workspace, store]) await Deno.remove(dir, { recursive: true });
  }
});
