/**
 * The typed runtime controls of `SessionControls` against the real `claude`
 * 2.1.332: each reaches the CLI with the wire fields it expects and its reply
 * is read (replies observed offline; `getUsage` reports the session's own
 * cost without the network).
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

const SERVER = new URL("../fixtures/mcp_stdio_server.ts", import.meta.url).pathname;

e2eTest("runtime controls: reloads, usage, settings, MCP toggles, tasks", async (t, cli) => {
  await withSandbox(async ({ api, work, env }) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
      mcpServers: { whisperer: { command: Deno.execPath(), args: ["run", "-A", SERVER] } },
    });
    await session.send("hi", { timeoutMs: 30_000 });
    const status = async () =>
      Object.fromEntries((await session.mcpServerStatus()).map((s) => [s.name, s.status]));

    await t.step("reloadSkills, reloadOutputStyles, reloadPlugins", async () => {
      const skills = await session.reloadSkills();
      assert.ok(Array.isArray((skills as { skills?: unknown }).skills));
      const styles = await session.reloadOutputStyles();
      assert.ok(
        (styles as { available_output_styles?: string[] }).available_output_styles?.includes(
          "default",
        ),
      );
      const plugins = await session.reloadPlugins();
      assert.ok(Array.isArray((plugins as { commands?: unknown }).commands));
    });
    await t.step(
      "reloadPlugins: addPlugins loads a plugin; refuseIfBusy refuses in a turn",
      async () => {
        const plugin = `${work}/../duplex-probe-plugin`;
        await Deno.mkdir(`${plugin}/.claude-plugin`, { recursive: true });
        await Deno.mkdir(`${plugin}/commands`);
        await Deno.writeTextFile(
          `${plugin}/.claude-plugin/plugin.json`,
          JSON.stringify({ name: "duplex-probe", version: "1.0.0", description: "probe" }),
        );
        await Deno.writeTextFile(
          `${plugin}/commands/probe.md`,
          "---\ndescription: A probe command\n---\nSay probe.\n",
        );
        const added = await session.reloadPlugins({
          addPlugins: [{ type: "local", path: await Deno.realPath(plugin) }],
          holdOnCacheImpact: false,
        });
        assert.ok(
          added.plugins.some((p) => p.name === "duplex-probe"),
          `plugins after the reload: ${JSON.stringify(added.plugins)}`,
        );
        assert.ok(added.commands.some((c) => c.name.includes("probe")));

        const from = api.messageRequests.length;
        const stalled = session.send("[[stall]] keep the turn busy", { timeoutMs: 30_000 });
        stalled.catch(() => {});
        for (let i = 0; i < 300 && api.messageRequests.length === from; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.ok(api.messageRequests.length > from, "the turn reached the model");
        await assert.rejects(
          session.reloadPlugins({ refuseIfBusy: true }),
          (e) =>
            isDuplexError(e) && e.kind === "control_failed" &&
            e.errorCode === "reload_plugins_busy",
        );
        await session.interrupt();
        await stalled.catch(() => {});
      },
    );
    await t.step("getUsage reports the session's cost", async () => {
      const usage = await session.getUsage() as { session?: { total_cost_usd?: number } };
      assert.equal(typeof usage.session?.total_cost_usd, "number");
    });
    await t.step(
      "applyFlagSettings is in force, updateSettings writes the local file",
      async () => {
        await session.applyFlagSettings({ env: { DUPLEX_FLAG: "on" } });
        assert.match(JSON.stringify(await session.settings()), /DUPLEX_FLAG/);
        await session.updateSettings("localSettings", { outputStyle: "Concise" });
        const local = JSON.parse(await Deno.readTextFile(`${work}/.claude/settings.local.json`));
        assert.equal(local.outputStyle, "Concise");
        await assert.rejects(
          session.updateSettings("localSettings", { model: "haiku" }),
          (e) => isDuplexError(e, "control_failed") && /not allowed: model/.test(e.message),
        );
      },
    );
    await t.step("toggleMcpServer and reconnectMcpServer", async () => {
      await session.toggleMcpServer("whisperer", false);
      assert.equal((await status()).whisperer, "disabled");
      await session.toggleMcpServer("whisperer", true);
      await session.reconnectMcpServer("whisperer");
      assert.equal((await status()).whisperer, "connected");
    });
    await t.step("seedReadState, stopTask, backgroundTasks are accepted", async () => {
      await Deno.writeTextFile(`${work}/seen.txt`, "x");
      await session.seedReadState(`${work}/seen.txt`, Date.now());
      await session.stopTask("no-such-task");
      assert.deepEqual(await session.backgroundTasks(), {});
    });
    await t.step("readFile and setMcpPermissionModeOverride", async () => {
      await Deno.writeTextFile(`${work}/notes.txt`, "hello file");
      const file = await session.readFile("notes.txt");
      assert.equal(file.contents, "hello file");
      assert.equal(file.absPath, `${work}/notes.txt`);
      const cut = await session.readFile("notes.txt", { maxBytes: 5 });
      assert.equal(cut.contents, "hello");
      await assert.rejects(
        session.readFile("missing.txt"),
        (e) => isDuplexError(e, "control_failed"),
      );
      assert.deepEqual(await session.setMcpPermissionModeOverride("whisperer", "auto"), {});
      const unknown = await session.setMcpPermissionModeOverride("nobody", null);
      assert.equal(typeof unknown.warning, "string", "a warning for a server nobody knows");
      assert.match(unknown.warning ?? "", /nobody/);
    });
    await t.step("the deprecated names still answer", async () => {
      assert.deepEqual(await session.mcpStatus(), await session.mcpServerStatus());
      assert.equal(typeof (await session.contextUsage()).totalTokens, "number");
    });
  });
});
