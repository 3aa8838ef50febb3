/**
 * The hostile-client suite, part 2: what an admitted client sends. Argument
 * injection through spawn fields, oversize and malformed frames, and a flood
 * of unfinished handshakes: each refused with its reason, no `claude` started.
 */

import assert from "node:assert/strict";
import { CLOSE } from "../../../src/wire/wire.ts";
import { makeTestDir, refusalOf, startRelay, TestClient, TOKEN } from "./_client.ts";
import { bearerProtocol } from "../../../src/wire/wire.ts";
import { upgradeRequest } from "./_raw_client.ts";

/** Sends a hello with this spawn request. */
function spawning(spawn: unknown): (client: TestClient) => void {
  return (client) => client.send({ t: "hello", v: 1, spawn });
}

/** Sends this text as one frame. */
function raw(text: string | Uint8Array<ArrayBuffer>): (client: TestClient) => void {
  return (client) => client.socket.send(text);
}

Deno.test("hostile clients: argument injection through spawn fields", async (t) => {
  await using env = await startRelay();
  const url = env.relay.url;
  await Deno.mkdir(`${env.workspace}/project`);
  const outside = await makeTestDir();
  const canLink = Deno.permissions.querySync({ name: "write" }).state === "granted";
  if (canLink) await Deno.symlink(outside, `${env.workspace}/project/escape`);

  const notPermitted: [string, Record<string, unknown>, RegExp][] = [
    ["a model with spaces", { model: "sonnet --dangerously-skip-permissions" }, /model/],
    ["a model with a leading dash", { model: "--dangerously-skip-permissions" }, /model/],
    ["a model that is one dash", { model: "-" }, /model/],
    ["an empty model", { model: "" }, /model/],
    ["a model with a newline", { model: "sonnet\n--print" }, /model/],
    ["a model of 65 characters", { model: "m".repeat(65) }, /model/],
    ["bypassPermissions", { permissionMode: "bypassPermissions" }, /permissionMode/],
    ["a permission mode that is a flag", { permissionMode: "--x" }, /permissionMode/],
    ["a resume id that is a flag", { resume: "--fork-session" }, /resume/],
    ["a resume id with spaces", { resume: "a b" }, /resume/],
    ["cwd ..", { cwd: ".." }, /cwd .* leaves the workspace/],
    ["cwd through ..", { cwd: "project/../../x" }, /cwd .* leaves the workspace/],
    ["an absolute cwd", { cwd: "/etc" }, /cwd .* relative/],
    ["a drive cwd", { cwd: "C:\\Windows" }, /cwd .* relative/],
    ["a NUL in cwd", { cwd: "project\0/etc" }, /cwd .* relative/],
    ["a missing cwd", { cwd: "nowhere" }, /cwd .* no such folder/],
    ...(canLink
      ? [["a symbolic link out", { cwd: "project/escape" }, /leaves the workspace/] as [
        string,
        Record<string, unknown>,
        RegExp,
      ]]
      : []),
    ["mcpConfig", { mcpConfig: '{"mcpServers":{}}' }, /spawn option mcpConfig is not supported/],
    ["extraArgs", { extraArgs: ["--dangerously-skip-permissions"] }, /extraArgs is not/],
    ["binary", { binary: "/bin/sh" }, /binary is not supported/],
    ["env", { env: { PATH: "/tmp" } }, /env is not supported/],
    ["allowedTools", { allowedTools: ["Bash"] }, /allowedTools is not supported/],
    ["settings", { settings: "{}" }, /settings is not supported/],
  ];
  for (const [name, spawn, why] of notPermitted) {
    await t.step(`${name} → not_permitted, 1008`, async () => {
      const seen = await refusalOf(url, { send: spawning(spawn) });
      assert.equal(seen.kind, "not_permitted", seen.message);
      assert.equal(seen.code, CLOSE.policy);
      assert.match(seen.message, why);
    });
  }

  const malformed: [string, string, RegExp][] = [
    ["__proto__", '{"t":"hello","v":1,"spawn":{"__proto__":{"model":"x"}}}', /__proto__/],
    ["maxTurns as a string", '{"t":"hello","v":1,"spawn":{"maxTurns":"3"}}', /maxTurns/],
    ["maxTurns negative", '{"t":"hello","v":1,"spawn":{"maxTurns":-1}}', /maxTurns/],
    ["maxTurns fractional", '{"t":"hello","v":1,"spawn":{"maxTurns":1.5}}', /maxTurns/],
    ["model as a number", '{"t":"hello","v":1,"spawn":{"model":5}}', /model must be a string/],
    ["spawn as an array", '{"t":"hello","v":1,"spawn":["--x"]}', /must be an object/],
    ["spawn as a string", '{"t":"hello","v":1,"spawn":"--x"}', /must be an object/],
  ];
  for (const [name, text, why] of malformed) {
    await t.step(`${name} → refused with the field named`, async () => {
      const seen = await refusalOf(url, { send: raw(text) });
      assert.ok(["protocol", "not_permitted"].includes(seen.kind), seen.kind);
      assert.match(seen.message, why);
    });
  }

  await t.step("nothing was spawned by any of them", async () => {
    assert.equal(await env.spawns(0), 0);
    assert.equal(env.relay.sessionCount, 0);
  });
  await Deno.remove(outside, { recursive: true });
});

Deno.test("hostile clients: oversize and malformed frames", async (t) => {
  const maxFrameBytes = 64 * 1024;
  await using env = await startRelay({ maxFrameBytes, maxPendingInputBytes: maxFrameBytes * 2 });
  const url = env.relay.url;
  const hello = (pad: string) => JSON.stringify({ t: "hello", v: 1, spawn: {}, pad });

  await t.step(
    "a frame one byte over maxFrameBytes → too_large, 1009, before parsing",
    async () => {
      const text = hello("");
      const seen = await refusalOf(url, {
        send: raw(hello("x".repeat(maxFrameBytes + 1 - text.length))),
      });
      assert.equal(seen.kind, "too_large");
      assert.equal(seen.code, CLOSE.tooBig);
      assert.match(seen.reason, /more than 65536 bytes \(the relay's maxFrameBytes\)/);
    },
  );

  await t.step("a frame at maxFrameBytes is taken (the bound is exact)", async () => {
    const text = hello("");
    const client = new TestClient(url);
    await using _ = client;
    await client.opened;
    client.socket.send(hello("x".repeat(maxFrameBytes - text.length)));
    assert.equal((await client.next("ready")).resumed, false);
  });

  await t.step("multi-byte text is measured in UTF-8 bytes, not characters", async () => {
    const text = hello("");
    const pad = "é".repeat(Math.ceil((maxFrameBytes - text.length) / 2) + 1); // 2 bytes each
    assert.ok(hello(pad).length <= maxFrameBytes, "few enough characters");
    const seen = await refusalOf(url, { send: raw(hello(pad)) });
    assert.equal(seen.kind, "too_large");
  });

  await t.step("a huge frame (8 MiB) is refused the same way", async () => {
    const seen = await refusalOf(url, { send: raw("[" + "1,".repeat(4 * 1024 * 1024) + "1]") });
    assert.equal(seen.kind, "too_large");
    assert.equal(seen.code, CLOSE.tooBig);
  });

  await t.step("an oversize input after ready → too_large", async () => {
    const client = new TestClient(url);
    await using _ = client;
    await client.opened;
    client.send({ t: "hello", v: 1, spawn: {} });
    await client.next("ready");
    client.send({ t: "in", seq: 1, line: JSON.stringify({ pad: "x".repeat(maxFrameBytes) }) });
    assert.equal(await client.closeCode(), CLOSE.tooBig);
    assert.equal(client.texts("error")[0]?.kind, "too_large");
  });

  const protocol: [string, string | Uint8Array<ArrayBuffer>, RegExp][] = [
    ["not JSON", "{hello", /must be JSON/],
    ["a binary frame", new Uint8Array([0x7b, 0x7d]), /only text frames/],
    ["JSON that is no message", "42", /JSON object with a string t/],
    ["an empty batch", "[]", /non-empty JSON array/],
    ["a batch with one bad message", '[{"t":"hello","v":1},{"t":"in"}]', /in message needs seq/],
    ["protocol version 2", '{"t":"hello","v":2}', /Unsupported protocol version 2/],
    [
      "spawn and resume at once",
      '{"t":"hello","v":1,"spawn":{},"resume":{"session":"s","after":0}}',
      /either spawn or resume/,
    ],
    [
      "a first message that is no hello",
      '{"t":"in","seq":1,"line":"{}"}',
      /first message must be a hello/,
    ],
    // Until this was refused, the input after the hello crashed the relay's process.
    [
      "a batch of a hello and input",
      '[{"t":"hello","v":1,"spawn":{}},{"t":"in","seq":1,"line":"{}"}]',
      /hello travels alone/,
    ],
    [
      "a batch of a resume and more",
      '[{"t":"hello","v":1,"resume":{"session":"s","after":0}},{"t":"eof"}]',
      /hello travels alone/,
    ],
    [
      "a deeply nested frame",
      "[".repeat(30_000) + "]".repeat(30_000),
      /must be JSON|JSON object|batch/,
    ],
    ["a lone surrogate", '{"t":"hello","v":1,"spawn":{"model":"\ud800"}}', /model/],
  ];
  for (const [name, frame, why] of protocol) {
    await t.step(`${name} → refused with the reason`, async () => {
      const seen = await refusalOf(url, { send: raw(frame) });
      assert.ok(["protocol", "not_permitted", "too_large"].includes(seen.kind), seen.kind);
      assert.match(seen.message, why);
    });
  }

  await t.step("only the two sessions that were asked for properly started a CLI", async () => {
    assert.equal(await env.spawns(2), 2);
  });
});

/** Sends an upgrade request (with the token) on a raw TCP connection and reads the response head. */
async function upgradeStatus(port: number): Promise<{ status: number; body: string }> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await connection.write(
      upgradeRequest(port, [`Sec-WebSocket-Protocol: duplex-claude.v1, ${bearerProtocol(TOKEN)}`]),
    );
    const buffer = new Uint8Array(4096);
    let text = "";
    const deadline = Date.now() + 5000;
    while (!/\r\n\r\n[\s\S]*\n/.test(text) && Date.now() < deadline) {
      const n = await connection.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
      if (text.startsWith("HTTP/1.1 101")) break;
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
    return { status, body: text.split("\r\n\r\n").slice(1).join("\r\n\r\n") };
  } finally {
    connection.close();
  }
}

Deno.test("hostile clients: a flood of unfinished handshakes", async (t) => {
  const limit = 8;
  await using env = await startRelay({ maxPendingConnections: limit, helloTimeoutMs: 400 });
  const { relay } = env;
  const silent: TestClient[] = [];

  await t.step(`${limit} connections that never say hello fill the bound`, async () => {
    for (let i = 0; i < limit; i++) {
      const client = new TestClient(relay.url);
      silent.push(client);
      await client.opened;
    }
  });

  await t.step("the next upgrade gets 503 with the reason, before any WebSocket", async () => {
    const { status, body } = await upgradeStatus(relay.port);
    assert.equal(status, 503);
    assert.match(body, /still in their handshake \(the relay's maxPendingConnections\)/);
    const health = await fetch(`http://127.0.0.1:${relay.port}/health`);
    assert.equal(health.status, 200, "plain HTTP still served");
    await health.body?.cancel();
  });

  await t.step("each silent one is dropped by helloTimeoutMs with its reason", async () => {
    for (const client of silent) {
      assert.equal(await client.closeCode(3000), CLOSE.protocol);
      assert.match(String(client.texts("error")[0]?.message), /No hello within 400 ms/);
    }
  });

  await t.step("then connections are taken again", async () => {
    const { status } = await upgradeStatus(relay.port);
    assert.equal(status, 101);
    const client = new TestClient(relay.url);
    await using _ = client;
    await client.opened;
    client.send({ t: "hello", v: 1, spawn: {} });
    await client.next("ready");
    assert.equal(await env.spawns(1), 1, "only that one started a CLI");
  });
  for (const client of silent) await client.close();
});
