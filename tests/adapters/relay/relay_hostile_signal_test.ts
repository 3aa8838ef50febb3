/**
 * The hostile-client suite, part 4: the host's signals (issue 21, finding
 * 10). A SIGTERM or SIGINT to a program that serves a relay closes the relay
 * first (every client is told 1001, going away), then the CLIs, within a
 * bounded time, and leaves no CLI behind: a plain `serveRelay()` program
 * (the CLIs' default `hostSignal`, no listener of its own) and `deno task
 * relay` alike.
 */

import assert from "node:assert/strict";
import { HOST_EXIT_CLOSE_MS } from "../../../adapters/subprocess/_host_exit.ts";
import { CLOSE } from "../../../src/wire/wire.ts";
import { COUNTED_CLI, makeTestDir, TestClient, TOKEN, waitFor, waitGone } from "./_client.ts";
import { startProgram } from "./_relay_program.ts";

const PROGRAM = decodeURIComponent(
  new URL("./_serve_relay_program.ts", import.meta.url).pathname,
);

/** A client with a session open (its CLI's pid exposed). */
async function connected(url: string): Promise<{ client: TestClient; pid: number }> {
  const client = new TestClient(url);
  await client.opened;
  client.send({ t: "hello", v: 1, spawn: {} });
  const ready = await client.next("ready", 15_000);
  assert.equal(typeof ready.pid, "number", "the relay exposes the CLI's pid");
  return { client, pid: ready.pid as number };
}

async function servedProgram(options: { hang?: boolean } = {}) {
  const workspace = await makeTestDir();
  const program = await startProgram({
    RELAY_PROGRAM: JSON.stringify({
      token: TOKEN,
      workspace,
      log: `${workspace}.spawns`,
      ...options,
    }),
  }, PROGRAM);
  return {
    ...program,
    async [Symbol.asyncDispose]() {
      await program[Symbol.asyncDispose]();
      await Deno.remove(`${workspace}.spawns`).catch(() => {});
      await Deno.remove(workspace, { recursive: true });
    },
  };
}

for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
  Deno.test(`hostile signals: ${signal} to a serveRelay() program tells its clients 1001 first`, async () => {
    await using program = await servedProgram();
    assert.match(program.url, /^ws:/);
    const { client, pid } = await connected(program.url);
    await using _ = client;
    program.child.kill(signal);
    assert.equal(await client.closeCode(10_000), CLOSE.goingAway);
    assert.equal((await client.closed).reason, "The relay is shutting down");
    const { code: exit, stderr } = await program.output();
    assert.equal(exit, code, stderr);
    assert.ok(await waitGone(pid, 5000), `the CLI ${pid} is left running`);
  });
}

Deno.test("hostile signals: a participant that never closes delays the exit by a bounded time", async (t) => {
  await t.step("one signal: the CLIs ended and the exit within the bound", async () => {
    await using program = await servedProgram({ hang: true });
    const { client, pid } = await connected(program.url);
    await using _ = client;
    const sent = performance.now();
    program.child.kill("SIGTERM");
    assert.equal(await client.closeCode(10_000), CLOSE.goingAway, "the relay still closed first");
    assert.equal((await program.output()).code, 143);
    const took = performance.now() - sent;
    assert.ok(took >= HOST_EXIT_CLOSE_MS - 500, `it waited for the participant (${took} ms)`);
    assert.ok(took < HOST_EXIT_CLOSE_MS + 5000, `bounded (${took} ms)`);
    assert.ok(await waitGone(pid, 5000), `the CLI ${pid} is left running`);
  });

  await t.step("a second signal meanwhile: the exit at once", async () => {
    await using program = await servedProgram({ hang: true });
    const { client, pid } = await connected(program.url);
    await using _ = client;
    program.child.kill("SIGTERM");
    assert.equal(await client.closeCode(10_000), CLOSE.goingAway);
    const again = performance.now();
    program.child.kill("SIGTERM");
    assert.equal((await program.output()).code, 143);
    const took = performance.now() - again;
    assert.ok(took < HOST_EXIT_CLOSE_MS - 1000, `it did not wait (${took} ms)`);
    assert.ok(await waitGone(pid, 5000), `the CLI ${pid} is left running`);
  });
});

Deno.test("hostile signals: SIGTERM to deno task relay tells its clients 1001, ends the CLIs, exits 0", async (t) => {
  for (const store of [false, true]) {
    await t.step(store ? "with DUPLEX_RELAY_STORE_DIR" : "without a store", async () => {
      const workspace = await makeTestDir();
      const storeDir = await makeTestDir();
      const cli = `${workspace}.cli.sh`;
      const log = `${workspace}.spawns`;
      await Deno.writeTextFile(
        cli,
        `#!/bin/sh\nexec "${Deno.execPath()}" run -A --no-config --quiet "${COUNTED_CLI}" "$@"\n`,
      );
      await Deno.chmod(cli, 0o755);
      try {
        await using relay = await startProgram({
          DUPLEX_RELAY_TOKENS: TOKEN,
          DUPLEX_RELAY_PORT: "0",
          DUPLEX_RELAY_WORKSPACE: workspace,
          ...(store && { DUPLEX_RELAY_STORE_DIR: storeDir }),
          CLAUDE_CLI: cli,
          RELAY_SPAWN_LOG: log,
          DUPLEX_RELAY_CLI_ENV: "RELAY_SPAWN_LOG",
        });
        const client = new TestClient(relay.url);
        await using _ = client;
        await client.opened;
        client.send({ t: "hello", v: 1, spawn: {} });
        await client.next("ready", 15_000);
        await waitFor("the CLI's start", () => pidsIn(log).length === 1, 10_000);
        const pids = pidsIn(log);
        relay.child.kill("SIGTERM");
        assert.equal(await client.closeCode(10_000), CLOSE.goingAway);
        const { code, stderr } = await relay.output();
        assert.equal(code, 0, stderr);
        for (const pid of pids) assert.ok(await waitGone(pid, 5000), `the CLI ${pid} is left`);
      } finally {
        await Deno.remove(cli);
        await Deno.remove(log).catch(() => {});
        for (const dir of [workspace, storeDir]) await Deno.remove(dir, { recursive: true });
      }
    });
  }
});

/** The pids the counted stand-in logged. */
function pidsIn(log: string): number[] {
  try {
    return Deno.readTextFileSync(log).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
