/**
 * The controls a reconnecting or long-lived client needs, against the real
 * `claude` (2.1.332; the subtypes are in every CLI of the window):
 * `initializationResult()` and the readers over it, `supportedCommands()`
 * following `system/commands_changed`, `reinitialize()` with a permission
 * request pending (directly and through the relay across a dropped
 * connection: the same request, once), `readMcpResource()` on a stdio MCP
 * server with a `ui://` resource, `getUsage({ skipBehaviors })`, and
 * `streamInput()`.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  allow,
  DuplexSession,
  isDuplexError,
  mcpServer,
  type PermissionRequest,
  type SessionEvent,
  type StreamInputItem,
  tool,
  type Turn,
} from "../../mod.ts";
import { remote } from "../../adapters/remote/mod.ts";
import { record } from "../../src/testing/mod.ts";
import { serveRelay } from "../../adapters/relay/mod.ts";
import { e2eTest, sandboxedCli, trackedWebSockets, waitUntil, withSandbox } from "./_harness.ts";

const WRITE = "[[tool:bash:echo x >> ran.txt && echo it-ran]]";

/** A stdio MCP server with one `ui://` resource (written by the test: the CLI dials it). */
const RESOURCE_SERVER = `
const enc = new TextEncoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += new TextDecoder().decode(chunk, { stream: true });
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.id === undefined) continue;
    let result = {};
    if (msg.method === "initialize") {
      result = {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { resources: {}, tools: {} },
        serverInfo: { name: "widgets", version: "1" },
      };
    } else if (msg.method === "tools/list") {
      result = { tools: [] };
    } else if (msg.method === "resources/list") {
      result = { resources: [{ uri: "ui://widgets/card.html", name: "card", mimeType: "text/html" }] };
    } else if (msg.method === "resources/read") {
      result = {
        contents: [{
          uri: msg.params.uri,
          mimeType: "text/html;profile=mcp-app",
          text: "<p>card for " + msg.params.uri + "</p>",
          _meta: { ui: { prefersBorder: true } },
        }],
      };
    }
    Deno.stdout.writeSync(enc.encode(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\\n"));
  }
}
`;

/** The next `permission_request` event of a subscription (bounded by the scenario's limit). */
async function nextPermission(events: AsyncIterator<SessionEvent>): Promise<PermissionRequest> {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error("The subscription ended before a permission request");
    if (next.value.type === "permission_request") return next.value.request;
  }
}

e2eTest("initializationResult, the readers over it, and supportedCommands", async (t, cli) => {
  await withSandbox(async ({ work, env }) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
    });
    await t.step(
      "a session that sent no initialize sends one for initializationResult",
      async () => {
        const reply = await session.initializationResult();
        assert.match(String(reply.claude_code_version), /^\d+\.\d+\.\d+$/);
        assert.equal(typeof reply.pid, "number");
        assert.equal(session.info?.pid, reply.pid);
        assert.ok(Array.isArray(reply.available_output_styles));
      },
    );
    await t.step("supportedModels, supportedAgents, accountInfo read the reply", async () => {
      const models = await session.supportedModels();
      assert.ok(
        models.some((m) => m.value === "sonnet"),
        JSON.stringify(models.map((m) => m.value)),
      );
      const agents = await session.supportedAgents();
      assert.ok(agents.some((a) => a.name === "Explore" && typeof a.description === "string"));
      const account = await session.accountInfo();
      assert.equal(account.apiKeySource, "ANTHROPIC_API_KEY");
      assert.equal(account.email, undefined, "no claude.ai login offline");
    });
    await t.step("supportedCommands follows system/commands_changed", async () => {
      assert.equal((await session.supportedCommands()).some((c) => c.name === "shipit"), false);
      await session.send("hi", { timeoutMs: 30_000 });
      await Deno.mkdir(`${work}/.claude/skills/shipit`, { recursive: true });
      await Deno.writeTextFile(
        `${work}/.claude/skills/shipit/SKILL.md`,
        "---\nname: shipit\ndescription: Ships the thing\n---\nShip it.\n",
      );
      const events = session.subscribe();
      await session.reloadSkills(); // the CLI pushes commands_changed with the new skill
      for await (const event of events) {
        if (event.type === "system" && event.subtype === "commands_changed") break;
      }
      const commands = await session.supportedCommands();
      assert.ok(commands.some((c) => c.name === "shipit"), "the pushed list wins");
      const reply = await session.initializationResult();
      assert.equal(reply.commands?.some((c) => c.name === "shipit"), false, "not the reply's");
    });
    await t.step("getUsage({ skipBehaviors }) leaves behaviors out", async () => {
      const usage = await session.getUsage({ skipBehaviors: true });
      assert.equal(usage.behaviors, null);
      assert.equal(typeof usage.session.total_cost_usd, "number");
      assert.equal(usage.rate_limits_available, false, "an API key has no plan limits");
    });
  });
});

e2eTest(
  "reinitialize() with a deferred permission pending: the same request, once, then answered",
  async (t, cli) => {
    await withSandbox(async ({ work, env, api }) => {
      const asked: string[] = [];
      const hookCalls: string[] = [];
      const lines: string[] = []; // the transcript: what the CLI really wrote
      await using session = await DuplexSession.start({
        transport: record(sandboxedCli(cli, { work, env }), {
          to: (line) => void lines.push(line),
        }),
        hooks: {
          PostToolUse: [{ matcher: "Bash", run: (input) => void hookCalls.push(input.tool_name) }],
        },
        onPermission: (request) => {
          asked.push(request.requestId);
          return { behavior: "defer" };
        },
      });
      const first = await session.initialized;
      const events = session.subscribe()[Symbol.asyncIterator]();
      const turn = session.send(WRITE, { timeoutMs: 60_000 });
      const pending = await nextPermission(events);
      await t.step("the CLI lists the pending request again; it stays one request", async () => {
        const reply = await session.reinitialize();
        const resent = lines.filter((line) =>
          line.includes('"pending_permission_requests"') && line.includes(pending.requestId)
        );
        assert.equal(resent.length, 1, "the reply's envelope re-sent the pending request");
        assert.equal(reply.hooks_applied, true, "the hooks re-registered");
        assert.equal(reply.pid, first?.pid, "the same process");
        assert.equal(session.info?.pid, reply.pid);
        assert.deepEqual(asked, [pending.requestId], "the handler ran once");
        assert.deepEqual(session.pendingPermissions.map((p) => p.requestId), [pending.requestId]);
        assert.equal(session.pendingPermissions[0], pending, "the same request object");
      });
      await t.step("answered after the reinitialize, the turn completes", async () => {
        assert.equal(await session.respondToPermission(pending.requestId, allow()), true);
        const done: Turn = await turn;
        assert.equal(done.result.isError, false);
        assert.equal(done.result.text, "Tool said: it-ran");
        assert.equal(await Deno.readTextFile(`${work}/ran.txt`), "x\n", "the tool ran once");
        assert.deepEqual(hookCalls, ["Bash"], "the re-registered hook ran, once");
        assert.equal(api.messageRequests.length, 2);
      });
      await events.return?.();
    });
  },
);

e2eTest("reinitialize() over the relay after a dropped connection", async (t, cli) => {
  await withSandbox(async ({ env, work }) => {
    const token = crypto.randomUUID();
    await using relay = serveRelay({
      tokens: [token],
      workspace: work,
      tenancy: "shared",
      cli: { binary: cli, env, clearEnv: true, hostSignal: "ignore" },
    });
    const { sockets, WebSocket: Tracked } = trackedWebSockets();
    const asked: string[] = [];
    await using session = await DuplexSession.start({
      transport: remote({
        url: relay.url,
        token,
        spawn: { permissionMode: "default" },
        WebSocket: Tracked,
        reconnect: { attempts: 5, initialDelayMs: 20, maxDelayMs: 200 },
      }),
      onPermission: (request) => {
        asked.push(request.requestId);
        return { behavior: "defer" };
      },
    });
    const events = session.subscribe()[Symbol.asyncIterator]();
    const turn = session.send(WRITE, { timeoutMs: 60_000 });
    const pending = await nextPermission(events);
    await t.step("cut, resumed, reinitialized: the pending request is still one", async () => {
      const before = sockets.length;
      for (const socket of sockets) socket.close(4999, "network cut by the test");
      await waitUntil(() => sockets.length > before, "the client reconnecting");
      const reply = await session.reinitialize({ timeoutMs: 20_000 });
      assert.equal(typeof reply.claude_code_version, "string");
      assert.deepEqual(asked, [pending.requestId]);
      assert.deepEqual(session.pendingPermissions.map((p) => p.requestId), [pending.requestId]);
    });
    await t.step("answered, the turn completes and the tool ran once", async () => {
      assert.equal(await session.respondToPermission(pending.requestId, allow()), true);
      assert.equal((await turn).result.text, "Tool said: it-ran");
      assert.equal(await Deno.readTextFile(`${work}/ran.txt`), "x\n");
    });
    await events.return?.();
  });
});

e2eTest("readMcpResource reads a ui:// resource from a stdio MCP server", async (t, cli) => {
  await withSandbox(async ({ root, work, env }) => {
    const script = `${root}/widgets_server.ts`;
    await Deno.writeTextFile(script, RESOURCE_SERVER);
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
      mcpServers: {
        widgets: { command: Deno.execPath(), args: ["run", "-A", script] },
        inproc: mcpServer({
          name: "inproc",
          tools: [tool("ping", "Answers pong", { type: "object", properties: {} }, () => "pong")],
        }),
      },
    });
    await session.send("hi", { timeoutMs: 30_000 });
    await waitUntil(
      async () =>
        (await session.mcpServerStatus()).some((s) =>
          s.name === "widgets" && s.status === "connected"
        ),
      "the widgets server connected",
      20_000,
    );
    await t.step("the server's contents, as it sent them", async () => {
      const read = await session.readMcpResource("widgets", "ui://widgets/card.html");
      assert.equal(read.contents.length, 1);
      const [item] = read.contents;
      assert.equal(item?.uri, "ui://widgets/card.html");
      assert.equal(item?.mimeType, "text/html;profile=mcp-app");
      assert.equal(item?.text, "<p>card for ui://widgets/card.html</p>");
      assert.deepEqual(item?._meta, { ui: { prefersBorder: true } });
    });
    await t.step("refused: another scheme, an unknown server, an in-process server", async () => {
      for (
        const [server, uri] of [
          ["widgets", "file:///etc/passwd"],
          ["nobody", "ui://x/y.html"],
          ["inproc", "ui://x/y.html"],
        ]
      ) {
        const error = await session.readMcpResource(server!, uri!).catch((e) => e);
        assert.ok(isDuplexError(error, "control_failed"), `${server} ${uri}: ${error}`);
      }
    });
  });
});

e2eTest("streamInput writes queued lines; every turn completes", async (t, cli) => {
  await withSandbox(async ({ work, env, api }) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
    });
    await t.step("strings, blocks and an SDK-shaped message, with its origin", async () => {
      const turns: Promise<Turn>[] = [];
      async function* feed(): AsyncGenerator<StreamInputItem> {
        yield "streamed one";
        yield [{ type: "text", text: "streamed two" }];
        yield {
          type: "user",
          message: { role: "user", content: "streamed three" },
          parent_tool_use_id: null,
          origin: { kind: "human" },
        };
      }
      const { sent } = await session.streamInput(feed(), { onTurn: (turn) => turns.push(turn) });
      assert.equal(sent, 3);
      const done = await Promise.all(turns);
      for (const turn of done) assert.equal(turn.result.isError, false);
      const prompts = JSON.stringify(api.messageRequests.map((r) => r.body));
      for (const text of ["streamed one", "streamed two", "streamed three"]) {
        assert.ok(prompts.includes(text), `${text} reached the model`);
      }
    });
    await t.step("a bad item stops the stream with invalid_argument", async () => {
      const error = await session.streamInput(["fine", { type: "user" } as never]).catch((e) => e);
      assert.ok(isDuplexError(error, "invalid_argument"), String(error));
      await waitUntil(() => !session.busy, "the one line's turn finishing", 30_000);
    });
  });
});
