import assert from "node:assert/strict";
import { DuplexSession, isDuplexError, mcpServer, tool } from "../../mod.ts";
import { splitServers } from "../../src/session/_mcp_servers.ts";
import { controlError, controlSuccess } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { eventsUntil, scripted } from "./_helpers.ts";

const ping = mcpServer({
  name: "inproc",
  tools: [tool("ping", "Answers pong", { type: "object", properties: {} }, () => "pong")],
});
const whisper = { command: "whisper-server", args: ["--quiet"], env: { TOKEN: "s3cret" } };

Deno.test("splitServers() reads a record by name or the 0.1 array, and checks every entry", {
  permissions: "none",
}, async (t) => {
  await t.step("a record of both kinds", () => {
    const split = splitServers({
      inproc: ping,
      whisper,
      web: { type: "http", url: "https://x.test/mcp" },
    });
    assert.deepEqual(split.inProcess, [ping]);
    assert.deepEqual(Object.keys(split.external), ["whisper", "web"]);
  });
  await t.step("the 0.1 array", () => assert.deepEqual(splitServers([ping]).inProcess, [ping]));
  const bad: [string, unknown][] = [
    ["an in-process server under another name", { other: ping }],
    ["a stdio server without a command", { x: { args: [] } }],
    ["args that are not strings", { x: { command: "c", args: [1] } }],
    ["env that is not strings", { x: { command: "c", env: { A: 1 } } }],
    ["an http server without a url", { x: { type: "http" } }],
    ["an unknown type", { x: { type: "ws", url: "ws://x" } }],
    ["a bad name", { "no spaces": whisper }],
    ["not an object", "servers"],
    ["an array of configs", [whisper]],
  ];
  for (const [name, option] of bad) {
    await t.step(name, () => {
      // deno-lint-ignore no-explicit-any
      assert.throws(() => splitServers(option as any), TypeError);
    });
  }
});

Deno.test("external MCP servers go in mcp_set_servers before the first turn, never elsewhere", async () => {
  const cli = new ScriptedCli({ echo: true });
  let reply: (() => void) | undefined;
  cli.on("control_request:mcp_set_servers", (frame, scripted) => {
    reply = () =>
      scripted.emit(
        controlSuccess(String(frame.request_id), {
          added: ["inproc", "whisper"],
          removed: [],
          errors: { whisper: "spawn ENOENT" },
        }),
      );
  });
  await using session = await DuplexSession.start({
    transport: cli.transport,
    mcpServers: { inproc: ping, whisper },
  });
  const events = session.subscribe();
  const set = await cli.nextWrite("control_request:mcp_set_servers");
  assert.deepEqual((set.request as Record<string, unknown>).servers, {
    inproc: { type: "sdk", name: "inproc" },
    whisper,
  });
  const init = cli.received.find((f) => JSON.stringify(f).includes('"initialize"'));
  assert.deepEqual((init?.request as Record<string, unknown>).sdkMcpServers, ["inproc"]);
  assert.ok(!JSON.stringify(init).includes("s3cret"), "the external config is not in initialize");
  const turn = session.send("hi");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(
    cli.received.some((f) => f.type === "user"),
    false,
    "the turn waits for the servers",
  );
  reply?.();
  assert.equal((await turn).result.text, "Echo: hi");
  const failed = await eventsUntil(
    events,
    (e) => e.type === "diagnostic" && e.kind === "mcp_server_failed",
  );
  assert.match(JSON.stringify(failed.at(-1)), /whisper did not connect: spawn ENOENT/);
});

Deno.test("a failed mcp_set_servers rejects the first send; setMcpServers() replaces the set", async () => {
  const { cli, session } = await scripted({
    echo: true,
    rules: [{
      match: (f) =>
        JSON.stringify(f).includes('"mcp_set_servers"') && JSON.stringify(f).includes("whisper"),
      reply: (f) => [controlError(String(f.request_id), "bad config")],
      once: true,
    }],
  }, { mcpServers: { whisper } });
  await using _ = session;
  await assert.rejects(session.send("hi"), (e) => isDuplexError(e, "control_failed"));
  cli.on(
    "control_request:mcp_set_servers",
    (
      f,
    ) => [
      controlSuccess(String(f.request_id), { added: ["inproc"], removed: ["whisper"], errors: {} }),
    ],
  );
  const result = await session.setMcpServers({ inproc: ping });
  assert.deepEqual(result, { added: ["inproc"], removed: ["whisper"], errors: {} });
  cli.emit({
    type: "control_request",
    request_id: "m1",
    request: {
      subtype: "mcp_message",
      server_name: "inproc",
      message: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    },
  });
  const answer = await cli.nextWrite((f) => f.type === "control_response");
  assert.match(JSON.stringify(answer), /"ping"/, "the new in-process server answers");
  assert.equal((await session.send("again")).result.text, "Echo: again");
});
