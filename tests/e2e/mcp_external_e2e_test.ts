/**
 * External MCP servers given to `DuplexSession.start({ mcpServers })` with
 * the real `claude` 2.1.332: the CLI starts the server from a config that
 * travelled over the control channel, its tool runs with the secret of its
 * environment, and no process's command line holds that secret.
 *
 * @module
 */

import assert from "node:assert/strict";
import { allow, DuplexSession, mcpServer, tool } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";
import { lastUserBlocks } from "./fake_api.ts";

const SERVER = new URL("../fixtures/mcp_stdio_server.ts", import.meta.url).pathname;

/** Every process's command line, from `ps` (works without --allow-all). */
async function commandLines(): Promise<string> {
  const output = await new Deno.Command("ps", { args: ["-eo", "args="], stdout: "piped" }).output();
  return new TextDecoder().decode(output.stdout);
}

e2eTest(
  "external MCP servers: configured over the control channel, secrets never on argv",
  async (_t, cli) => {
    await withSandbox(async ({ api, work, env }) => {
      const secret = `kumquat-${crypto.randomUUID()}`;
      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }),
        onPermission: () => allow(),
        mcpServers: {
          whisperer: {
            command: Deno.execPath(),
            args: ["run", "-A", SERVER],
            env: { SECRET_WORD: secret },
          },
          inproc: mcpServer({
            name: "inproc",
            tools: [tool("ping", "Answers pong", { type: "object", properties: {} }, () => "pong")],
          }),
        },
      });
      const turn = await session.send("[[tool:mcp__whisperer__whisper:{}]]", { timeoutMs: 30_000 });
      assert.match(
        JSON.stringify(lastUserBlocks(api.messageRequests.at(-1)?.body)),
        new RegExp(`the word is ${secret}`),
      );
      assert.match(turn.result.text, /the word is/);
      const lines = await commandLines();
      assert.match(lines, /mcp_stdio_server\.ts/, "the server runs");
      assert.ok(!lines.includes(secret), "no command line holds the secret");
      const both = await session.send("[[tool:mcp__inproc__ping:{}]]", { timeoutMs: 30_000 });
      assert.match(both.result.text, /pong/, "the in-process server is registered alongside");
      const status = await session.mcpServerStatus();
      assert.deepEqual(status.map((s) => s.name).sort(), ["inproc", "whisperer"]);
      assert.ok(!JSON.stringify(status).includes(secret), "mcp_status does not echo the env");
    });
  },
);
