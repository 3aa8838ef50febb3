/**
 * The subprocess options against the real `claude` 2.1.332: each one reaches
 * the CLI and takes effect (seen in `system/init`, in what reached the fake
 * API, in events, or on disk), and none of the secrets planted in settings,
 * agents and MCP configs is on any process's command line while the session
 * runs. Every scenario runs twice, with the options and without, so each
 * observation is shown to come from its option.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../mod.ts";
import type { SubprocessOptions } from "../../adapters/subprocess/mod.ts";
import { e2eTest, exists, type Sandbox, sandboxedCli, withSandbox } from "./_harness.ts";
import type { FakeApiRequest } from "./fake_api.ts";

const TURN = { timeoutMs: 30_000 } as const;
type Json = Record<string, unknown>;

/** What one run of the scenario saw. */
interface Seen {
  readonly init: Json;
  readonly events: readonly Json[];
  readonly stderr: string;
  readonly requests: readonly FakeApiRequest[];
  /** Every process's command line, read while the session ran (after its MCP servers started). */
  readonly commandLines: readonly string[];
  readonly rules: unknown;
  readonly bypass: unknown;
  readonly rewind: unknown;
  readonly rewoundFileLeft: boolean;
  readonly sessionId: string | undefined;
}

/** Every process's command line, from `ps` (Deno lets only --allow-all read /proc). */
async function commandLines(): Promise<string[]> {
  const output = await new Deno.Command("ps", {
    args: ["-e", "-ww", "-o", "args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(output.success, "ps failed");
  return new TextDecoder().decode(output.stdout).split("\n").filter(Boolean);
}

const SUBAGENT = JSON.stringify({
  description: "sub",
  prompt: "SUBAGENT-PROMPT",
  subagent_type: "general-purpose",
  run_in_background: false,
});

/**
 * Runs the scripted turns on the CLI with the given options (`IS_SANDBOX=1`
 * lets the CLI allow bypassPermissions when the tests run as root).
 */
async function run(
  cli: string,
  sandbox: Sandbox,
  options: SubprocessOptions,
  init?: Json,
): Promise<Seen> {
  const { api, work, env } = sandbox;
  const from = api.requests.length;
  await using session = await DuplexSession.start({
    transport: sandboxedCli(cli, { work, env: { ...env, IS_SANDBOX: "1" } }, options),
    onPermission: () => ({ behavior: "allow" }),
    ...(init && { initialize: init }),
  });
  const events: Json[] = [];
  const sub = session.subscribe({ capacity: 100_000 });
  const reading = (async () => {
    for await (const event of sub) events.push(event as unknown as Json);
  })();
  await session.send("hello", TURN);
  await session.send('[[tool:bash:echo "settings-env=$DUPLEX_SETTINGS_SECRET"]]', TURN);
  const lines = await commandLines();
  await session.send(`[[tool:Agent:${SUBAGENT}]]`, TURN);
  await session.send(
    '[[tool:ToolSearch:{"query":"select:AskUserQuestion","max_results":1}]]',
    TURN,
  );
  const written = `${work}/rewound.txt`;
  const write = await session.send(`[[tool:write:${written}:to be rewound]]`, TURN);
  assert.ok(await exists(written), "the Write tool ran");
  const rewind = await session.rewindFiles(write.uuid).catch((error: unknown) => error);
  const rules = await session.request("list_permission_rules", {});
  const bypass = await session.setPermissionMode("bypassPermissions").catch((error) => error);
  const sessionId = session.sessionId;
  await session.close();
  await reading;
  const init0 = events.find((e) => e.type === "system" && e.subtype === "init");
  assert.ok(init0, "no system/init");
  return {
    init: init0,
    events,
    stderr: events.flatMap((e) => e.type === "stderr" ? [String(e.line)] : []).join("\n"),
    requests: api.requests.slice(from),
    commandLines: lines,
    rules,
    bypass,
    rewind,
    rewoundFileLeft: await exists(written),
    sessionId,
  };
}

/** The text of every Messages request, to look for what reached the model. */
function bodies(seen: Seen): string[] {
  return seen.requests.filter((r) => r.path === "/v1/messages").map((r) => JSON.stringify(r.body));
}

/** The text of the request that answered the first turn. */
function firstTurn(seen: Seen): string {
  const request = seen.requests.find((r) => r.prompt === "hello");
  assert.ok(request, "no request for the first turn");
  return JSON.stringify(request.body);
}

async function writeFixtures(root: string): Promise<{ plugin: string; project: string }> {
  const plugin = `${root}/plugin`;
  await Deno.mkdir(`${plugin}/.claude-plugin`, { recursive: true });
  await Deno.mkdir(`${plugin}/commands`);
  await Deno.writeTextFile(
    `${plugin}/.claude-plugin/plugin.json`,
    JSON.stringify({ name: "duplexplug", version: "1.0.0" }),
  );
  await Deno.writeTextFile(`${plugin}/commands/hello.md`, "---\ndescription: Hi\n---\nSay hi");
  const project = `${root}/project`;
  await Deno.mkdir(`${project}/.claude/agents`, { recursive: true });
  await Deno.writeTextFile(
    `${project}/.claude/agents/projagent.md`,
    "---\nname: projagent\ndescription: From the project root\n---\nYou are projagent.",
  );
  await Deno.mkdir(`${root}/extra`);
  return { plugin, project };
}

const HOOKS = {
  hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "true" }] }] },
};

e2eTest(
  "subprocess options reach the CLI, and their secrets stay off every command line",
  async (t, cli) => {
    await withSandbox(async (sandbox) => {
      const { root, home, api } = sandbox;
      const { plugin, project } = await writeFixtures(root);
      const secret = (what: string) => `duplex-${what}-${crypto.randomUUID()}`;
      const S = {
        settings: secret("settings"),
        agent: secret("agent"),
        mcpEnv: secret("mcp-env"),
        mcpHeader: secret("mcp-header"),
      };
      const on: SubprocessOptions = {
        settings: {
          ...HOOKS,
          env: { DUPLEX_SETTINGS_SECRET: S.settings },
          permissions: { deny: ["NotebookEdit"] },
        },
        sandbox: { enabled: true, failIfUnavailable: false },
        managedSettings: { permissions: { deny: ["WebFetch"] } },
        agents: { planted: { description: "Planted", prompt: `You are planted. ${S.agent}` } },
        agent: "planted",
        mcpConfig: {
          mcpServers: {
            envsrv: {
              command: "sh",
              args: ["-c", `printf %s "$DUPLEX_MCP_SECRET" > '${root}/mcp-env.txt'`],
              env: { DUPLEX_MCP_SECRET: S.mcpEnv },
            },
            httpsrv: {
              type: "http",
              url: `${api.url}/mcp`,
              headers: { Authorization: `Bearer ${S.mcpHeader}` },
            },
          },
        },
        plugins: [{ type: "local", path: plugin }],
        projectConfigRoot: project,
        additionalDirectories: [`${root}/extra`],
        taskBudget: { total: 4321 },
        includeHookEvents: true,
        forwardSubagentText: true,
        promptSuggestions: true,
        debugFile: `${root}/debug.log`,
        title: "Planted title",
        enableFileCheckpointing: true,
        toolConfig: { askUserQuestion: { previewFormat: "html" } },
        allowDangerouslySkipPermissions: true,
        skills: ["dataviz"],
        tempDir: root,
      };
      const off: SubprocessOptions = { settings: HOOKS, tempDir: root };
      // The skills filter is read only from initialize: sent by hand until the session sends it.
      const withOptions = await run(cli, sandbox, on, { skills: ["dataviz"] });
      const without = await run(cli, sandbox, off);

      await t.step("no secret on any command line; the CLI's own is there to be read", () => {
        const cliLine = withOptions.commandLines.find((line) => line.includes("--settings="));
        assert.ok(cliLine?.includes(`${root}/duplex-claude-`), cliLine);
        for (const [what, value] of Object.entries(S)) {
          const found = withOptions.commandLines.filter((line) => line.includes(value));
          assert.deepEqual(found, [], `the ${what} secret is on a command line`);
        }
      });
      await t.step("the planted configs took effect", async () => {
        const results = withOptions.requests.flatMap((r) => r.toolResults.map((x) => x.content));
        assert.ok(
          results.some((text) => text.includes(`settings-env=${S.settings}`)),
          "settings.env",
        );
        assert.ok(firstTurn(withOptions).includes(S.agent), "the agent's prompt");
        assert.equal(await Deno.readTextFile(`${root}/mcp-env.txt`), S.mcpEnv, "MCP env");
        const mcp = withOptions.requests.find((r) => r.path === "/mcp");
        assert.equal(mcp?.headers.authorization, `Bearer ${S.mcpHeader}`, "MCP headers");
        const names = (withOptions.init.mcp_servers as Json[]).map((s) => s.name).sort();
        assert.deepEqual(names, ["envsrv", "httpsrv"]);
      });
      await t.step("the private folder is gone after the session", async () => {
        const left = (await Array.fromAsync(Deno.readDir(root)))
          .filter((entry) => entry.name.startsWith("duplex-claude-"));
        assert.deepEqual(left, []);
      });
      await t.step(
        "settings, managedSettings, agent, plugins, projectConfigRoot, dirs: init",
        () => {
          const tools = (seen: Seen) => seen.init.tools as string[];
          assert.ok(
            !tools(withOptions).includes("NotebookEdit") && tools(without).includes("NotebookEdit"),
          );
          assert.ok(
            !tools(withOptions).includes("WebFetch") && tools(without).includes("WebFetch"),
          );
          const agents = (seen: Seen) => seen.init.agents as string[];
          assert.ok(
            agents(withOptions).includes("planted") && !agents(without).includes("planted"),
          );
          assert.ok(
            agents(withOptions).includes("projagent") && !agents(without).includes("projagent"),
          );
          const plugins = (seen: Seen) => (seen.init.plugins as Json[]).map((p) => p.name);
          assert.ok(plugins(withOptions).includes("duplexplug"));
          assert.ok(!plugins(without).includes("duplexplug"));
          assert.deepEqual(withOptions.init.additional_directories, [`${root}/extra`]);
          assert.equal(withOptions.init.permissionMode, "default");
        },
      );
      await t.step(
        "sandbox: enabled, or reported unavailable when bwrap and socat are missing",
        async () => {
          const deps = await Promise.all(["bwrap", "socat"].map(onPath));
          if (deps.every(Boolean)) {
            assert.equal(withOptions.init.sandbox_enabled, true);
          } else {
            assert.equal(withOptions.init.sandbox_enabled, false);
            assert.match(withOptions.stderr, /sandbox is enabled but dependencies are missing/);
          }
          assert.doesNotMatch(without.stderr, /sandbox/i);
        },
      );
      await t.step("taskBudget: output_config.task_budget of the main thread's requests", () => {
        const budget = (seen: Seen) =>
          (JSON.parse(firstTurn(seen)) as { output_config?: { task_budget?: unknown } })
            .output_config?.task_budget;
        assert.deepEqual(budget(withOptions), { type: "tokens", total: 4321 });
        assert.equal(budget(without), undefined);
        assert.ok(without.requests.every((r) => !JSON.stringify(r.body).includes("task_budget")));
      });
      await t.step("includeHookEvents: hook_started and hook_response frames", () => {
        const hookFrames = (seen: Seen) =>
          seen.events.filter((e) => e.type === "system" && /^hook_/.test(String(e.subtype))).length;
        assert.ok(hookFrames(withOptions) >= 2, String(hookFrames(withOptions)));
        assert.equal(hookFrames(without), 0);
      });
      await t.step("forwardSubagentText: the sub-agent's text and thinking", () => {
        const forwarded = (seen: Seen) =>
          seen.events.some((e) =>
            e.type === "assistant" && e.parent_tool_use_id && JSON.stringify(e).includes("Echo:")
          );
        assert.ok(forwarded(withOptions) && !forwarded(without));
        const display = (seen: Seen) =>
          seen.requests.find((r) => r.prompt === "SUBAGENT-PROMPT")?.body as { thinking?: Json };
        assert.equal(display(withOptions)?.thinking?.display, "updates");
        assert.equal(display(without)?.thinking?.display, "omitted");
      });
      await t.step("promptSuggestions: a suggestion request after turns", () => {
        const suggested = (seen: Seen) => bodies(seen).some((b) => b.includes("SUGGESTION MODE"));
        assert.ok(suggested(withOptions) && !suggested(without));
      });
      await t.step("toolConfig: AskUserQuestion previews are HTML", () => {
        const html = (seen: Seen) => bodies(seen).some((b) => b.includes("self-contained HTML"));
        assert.ok(html(withOptions) && !html(without));
      });
      await t.step("enableFileCheckpointing: rewindFiles restores the files", () => {
        assert.equal((withOptions.rewind as Json).canRewind, true, String(withOptions.rewind));
        assert.equal(withOptions.rewoundFileLeft, false);
        assert.ok(isDuplexError(without.rewind, "control_failed"), String(without.rewind));
        assert.match(without.rewind.message, /not enabled/);
        assert.equal(without.rewoundFileLeft, true);
      });
      await t.step("allowDangerouslySkipPermissions: bypassPermissions can be switched to", () => {
        assert.equal(withOptions.bypass, "bypassPermissions");
        assert.ok(isDuplexError(without.bypass, "control_failed"), String(without.bypass));
      });
      await t.step(
        "skills: Skill(name) allowed on the command line, the others not offered",
        () => {
          const rules = JSON.stringify(withOptions.rules);
          assert.match(rules, /"rule":"Skill\(dataviz\)"/);
          assert.doesNotMatch(JSON.stringify(without.rules), /Skill\(/);
          // A skill the filter leaves out (others, such as verify, the CLI names elsewhere too).
          assert.ok(!firstTurn(withOptions).includes("fewer-permission-prompts"));
          assert.ok(firstTurn(without).includes("fewer-permission-prompts"));
        },
      );
      await t.step("debugFile and title: on disk", async () => {
        assert.ok((await Deno.stat(`${root}/debug.log`)).size > 0);
        const transcript = await findTranscript(home, withOptions.sessionId!);
        assert.match(transcript, /"type":"custom-title","customTitle":"Planted title"/);
        assert.doesNotMatch(await findTranscript(home, without.sessionId!), /custom-title/);
      });
    });
  },
);

async function onPath(name: string): Promise<boolean> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && await exists(`${dir}/${name}`)) return true;
  }
  return false;
}

async function findTranscript(home: string, sessionId: string): Promise<string> {
  for await (const project of Deno.readDir(`${home}/.claude/projects`)) {
    const path = `${home}/.claude/projects/${project.name}/${sessionId}.jsonl`;
    if (await exists(path)) return await Deno.readTextFile(path);
  }
  throw new Error(`Cannot find the transcript of ${sessionId}`);
}

e2eTest(
  "resumeSessionAt and resumeDropsTurn, debug, bypassPermissions, a sandbox that must work",
  async (t, cli) => {
    await withSandbox(async (sandbox) => {
      const { api, work, home } = sandbox;
      const env = { ...sandbox.env, IS_SANDBOX: "1" };
      const open = (options: SubprocessOptions) =>
        DuplexSession.start({ transport: sandboxedCli(cli, { work, env }, options) });
      let sessionId = "";
      let kept = "";
      let first = "";
      let second = "";
      await t.step("debug and bypassPermissions reach the CLI", async () => {
        await using session = await open({
          debug: true,
          permissionMode: "bypassPermissions",
          allowDangerouslySkipPermissions: true,
        });
        const inits: Json[] = [];
        const sub = session.subscribe({ capacity: 1000 });
        const reading = (async () => {
          for await (const event of sub) {
            if (event.type === "system" && event.subtype === "init") {
              inits.push(event as unknown as Json);
            }
          }
        })();
        const one = await session.send("FIRST-TURN-MARK", TURN);
        const two = await session.send("SECOND-TURN-MARK", TURN);
        kept = String(
          (one.events.findLast((e) => e.type === "assistant") as Json | undefined)?.uuid,
        );
        [first, second, sessionId] = [one.uuid, two.uuid, session.sessionId ?? ""];
        await session.close();
        await reading;
        assert.equal(inits[0]?.permissionMode, "bypassPermissions");
        assert.ok(await exists(`${home}/.claude/debug/${sessionId}.txt`), "no debug log");
      });
      await t.step("resumeDropsTurn naming another turn: the CLI refuses the resume", async () => {
        await using session = await open({
          resume: sessionId,
          resumeSessionAt: kept,
          resumeDropsTurn: first,
        });
        const outcome = await session.send("THIRD-TURN-MARK", TURN).then(
          (turn) => JSON.stringify(turn.result.raw),
          (error: unknown) => `${error} ${JSON.stringify(session.exitStatus)}`,
        );
        assert.match(outcome, /Resume rejected by --resume-drops-turn:/);
      });
      await t.step("resumeSessionAt keeps the conversation up to that message", async () => {
        const from = api.messageRequests.length;
        await using session = await open({
          resume: sessionId,
          resumeSessionAt: kept,
          resumeDropsTurn: second,
          forkSession: true,
        });
        await session.send("THIRD-TURN-MARK", TURN);
        const asked = api.messageRequests.slice(from).find((r) => r.prompt === "THIRD-TURN-MARK");
        const text = JSON.stringify(asked?.body);
        assert.ok(text.includes("FIRST-TURN-MARK"), "the kept turn is gone");
        assert.ok(!text.includes("SECOND-TURN-MARK"), "the dropped turn is still there");
      });
      await t.step("sandbox enabled: failIfUnavailable defaults to true", async () => {
        const deps = await Promise.all(["bwrap", "socat"].map(onPath));
        await using session = await open({ sandbox: { enabled: true } });
        const outcome = await session.send("hello", TURN).then(
          (turn) => turn.result.isError ? `refused: ${JSON.stringify(turn.result.raw)}` : "started",
          (error: unknown) => `${error} ${JSON.stringify(session.exitStatus)}`,
        );
        if (deps.every(Boolean)) assert.equal(outcome, "started");
        else assert.match(outcome, /^refused: .*Sandbox required but unavailable/);
      });
    });
  },
);
