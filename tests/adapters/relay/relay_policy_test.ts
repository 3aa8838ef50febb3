/** The relay's spawn policy: refusals over the wire, and how requests map to CLI flags. */

import assert from "node:assert/strict";
import { CLOSE } from "../../../src/wire/wire.ts";
import {
  type CheckedPolicy,
  checkPolicy,
  Refusal,
  spawnOptions,
} from "../../../adapters/relay/_policy.ts";
import { makeTestDir, openSession, ownerWorkspace, startRelay, TestClient } from "./_client.ts";

async function refused(
  url: string,
  spawn: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const client = new TestClient(url);
  await using _ = client;
  await client.opened;
  client.send({ t: "hello", v: 1, spawn });
  const error = await client.next("error");
  assert.equal(await client.closeCode(), error.kind === "protocol" ? CLOSE.protocol : CLOSE.policy);
  assert.equal(client.texts("ready").length, 0);
  return error;
}

Deno.test("relay policy over the wire", async (t) => {
  await using env = await startRelay({ policy: { maxTurns: 5 } }, { FAKE_CLAUDE_HELLO: "1" });
  const { relay } = env;
  // The test token's own workspace (tenancy per-owner, the default).
  const workspace = await ownerWorkspace(env.workspace);
  await Deno.mkdir(`${workspace}/project/sub`, { recursive: true });
  const outside = await makeTestDir();
  // Deno lets only unscoped --allow-read and --allow-write make symbolic links.
  const canLink = Deno.permissions.querySync({ name: "write" }).state === "granted" &&
    Deno.permissions.querySync({ name: "read" }).state === "granted";
  if (canLink) await Deno.symlink(outside, `${workspace}/escape`);

  await t.step("disallowed values → not_permitted naming the option, 1008", async () => {
    for (
      const [spawn, option] of [
        [{ model: "bad model!" }, "model"],
        [{ permissionMode: "bypassPermissions" }, "permissionMode"],
        [{ maxTurns: 6 }, "maxTurns"],
        [{ cwd: ".." }, "cwd"],
        [{ cwd: "project/../../.." }, "cwd"],
        [{ cwd: "/etc" }, "cwd"],
        ...(canLink ? [[{ cwd: "escape" }, "cwd"] as const] : []),
        [{ cwd: "missing" }, "cwd"],
        [{ mcpConfig: "{}" }, "mcpConfig"],
      ] as const
    ) {
      const error = await refused(relay.url, spawn);
      assert.equal(error.kind, "not_permitted", JSON.stringify(spawn));
      assert.match(String(error.message), new RegExp(option));
    }
    assert.equal((await refused(relay.url, { maxTurns: "3" })).kind, "protocol");
    assert.equal(relay.sessionCount, 0);
  });

  await t.step("allowed values become CLI flags; cwd resolves inside the workspace", async () => {
    // A conversation of the token's own (spawn.resume opens no other).
    const earlier = await openSession(relay.url);
    await earlier.client.until("fake_hello", () => earlier.client.lines().length > 0);
    const named = (earlier.client.lines()[0]!.args as string[])
      .find((arg) => arg.startsWith("--session-id="))!.slice("--session-id=".length);
    await earlier.client.close();
    const { client } = await openSession(relay.url, {
      model: "sonnet",
      permissionMode: "plan",
      maxTurns: 3,
      includePartialMessages: true,
      cwd: "project/sub",
      resume: named,
    });
    await using _ = client;
    await client.until("fake_hello", () => client.lines().length > 0);
    const hello = client.lines()[0]!;
    assert.equal(hello.type, "fake_hello");
    const args = hello.args as string[];
    for (
      const flag of [
        "--model=sonnet",
        "--permission-mode=plan",
        "--max-turns=3",
        "--include-partial-messages",
        `--resume=${named}`,
      ]
    ) assert.ok(args.includes(flag), `${flag} in ${args.join(" ")}`);
    assert.equal(hello.cwd, `${workspace}/project/sub`);
  });

  await t.step("defaults: the workspace as cwd, the policy's maxTurns applied", async () => {
    const { client } = await openSession(relay.url);
    await using _ = client;
    await client.until("fake_hello", () => client.lines().length > 0);
    const hello = client.lines()[0]!;
    assert.equal(hello.cwd, workspace);
    assert.ok((hello.args as string[]).includes("--max-turns=5"));
  });

  await relay.close();
  await Deno.remove(outside, { recursive: true });
});

Deno.test("spawnOptions applies each policy rule", async () => {
  const workspace = await makeTestDir();
  try {
    const check = (policy: Parameters<typeof checkPolicy>[0]): CheckedPolicy => checkPolicy(policy);
    const ok = (request: unknown, policy: CheckedPolicy = check({})) =>
      spawnOptions(request, policy, { binary: "claude" }, workspace);
    const no = async (request: unknown, policy: CheckedPolicy, kind = "not_permitted") => {
      await assert.rejects(
        ok(request, policy),
        (error: unknown) => error instanceof Refusal && error.kind === kind,
      );
    };
    assert.deepEqual(await ok({}), { binary: "claude", cwd: workspace });
    assert.equal((await ok({ model: "claude-sonnet-4.5" })).model, "claude-sonnet-4.5");
    await no({ model: "x".repeat(65) }, check({}));
    await no({ model: "sonnet" }, check({ models: ["haiku"] }));
    assert.equal((await ok({ model: "haiku" }, check({ models: ["haiku"] }))).model, "haiku");
    await no({ permissionMode: "bypassPermissions" }, check({}));
    assert.equal(
      (await ok(
        { permissionMode: "bypassPermissions" },
        check({
          permissionModes: ["bypassPermissions"],
        }),
      )).permissionMode,
      "bypassPermissions",
    );
    const bypass = await ok(
      { permissionMode: "bypassPermissions" },
      check({ permissionModes: ["bypassPermissions"] }),
    );
    // Read untyped: the subprocess adapter's option is newer than this test.
    const skips = (options: object) =>
      (options as Record<string, unknown>).allowDangerouslySkipPermissions;
    assert.equal(skips(bypass), true, "the operator listed it");
    assert.equal(skips(await ok({ permissionMode: "plan" })), undefined);
    await no({ permissionMode: "plan" }, check({ permissionModes: ["default"] }));
    await no({ includePartialMessages: true }, check({ allowPartialMessages: false }));
    assert.equal(
      (await ok({ includePartialMessages: false }, check({ allowPartialMessages: false })))
        .includePartialMessages,
      false,
    );
    await no({ resume: "abc" }, check({ allowResume: false }));
    await no({ resume: "a b" }, check({}));
    await no({ maxTurns: 0 }, check({}), "protocol");
    await no({ maxTurns: 11 }, check({ maxTurns: 10 }));
    assert.equal((await ok({}, check({ maxTurns: 10 }))).maxTurns, 10);
    await no({ extraArgs: ["--dangerously-skip-permissions"] }, check({}));
    await no([], check({}), "protocol");
    await no({ cwd: "a\0b" }, check({}));
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
