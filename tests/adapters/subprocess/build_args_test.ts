import assert from "node:assert/strict";
import { buildArgs, type CliOptions, planLaunch } from "../../../adapters/subprocess/mod.ts";

const BASE = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
];
const PROMPT = "--permission-prompt-tool=stdio";
/** Named when no permissionMode is given: the CLI's own default is never relied on. */
const MODE = "--permission-mode=default";

/** Each option and the arguments it adds after the base, the prompt tool and the default mode. */
const CASES: ReadonlyArray<readonly [string, CliOptions, readonly string[]]> = [
  ["no options", {}, []],
  ["model", { model: "sonnet" }, ["--model=sonnet"]],
  ["model starting with a dash", { model: "-odd" }, ["--model=-odd"]],
  ["fallbackModel", { fallbackModel: "haiku,sonnet" }, ["--fallback-model=haiku,sonnet"]],
  ["permissionMode default", { permissionMode: "default" }, ["--permission-mode=default"]],
  ["permissionMode acceptEdits", { permissionMode: "acceptEdits" }, [
    "--permission-mode=acceptEdits",
  ]],
  ["permissionMode bypassPermissions", {
    permissionMode: "bypassPermissions",
    allowDangerouslySkipPermissions: true,
  }, ["--permission-mode=bypassPermissions", "--allow-dangerously-skip-permissions"]],
  ["allowDangerouslySkipPermissions alone", { allowDangerouslySkipPermissions: true }, [
    "--allow-dangerously-skip-permissions",
  ]],
  ["allowDangerouslySkipPermissions false", { allowDangerouslySkipPermissions: false }, []],
  ["permissionMode plan", { permissionMode: "plan" }, ["--permission-mode=plan"]],
  ["permissionMode dontAsk", { permissionMode: "dontAsk" }, ["--permission-mode=dontAsk"]],
  ["permissionMode auto", { permissionMode: "auto" }, ["--permission-mode=auto"]],
  ["permissionMode manual", { permissionMode: "manual" }, ["--permission-mode=manual"]],
  ["allowedTools", { allowedTools: ["Read", "Bash(git log:*)"] }, [
    "--allowedTools=Read,Bash(git log:*)",
  ]],
  ["allowedTools empty", { allowedTools: [] }, []],
  ["disallowedTools", { disallowedTools: ["WebFetch", "Write"] }, [
    "--disallowedTools=WebFetch,Write",
  ]],
  ["disallowedTools empty", { disallowedTools: [] }, []],
  ["tools list", { tools: ["Read", "Bash"] }, ["--tools=Read,Bash"]],
  ["tools none", { tools: [] }, ["--tools="]],
  ["tools default (deprecated)", { tools: "default" }, ["--tools=default"]],
  ["tools preset", { tools: { type: "preset", preset: "claude_code" } }, ["--tools=default"]],
  ["mcpConfig object", { mcpConfig: { mcpServers: { x: { command: "srv", args: ["-v"] } } } }, [
    "--mcp-config=<private dir>/mcp.json",
  ]],
  ["mcpConfig JSON text", { mcpConfig: '{"mcpServers":{}}' }, [
    "--mcp-config=<private dir>/mcp.json",
  ]],
  ["mcpConfig path", { mcpConfig: "/etc/mcp.json" }, ["--mcp-config=/etc/mcp.json"]],
  ["strictMcpConfig", { strictMcpConfig: true }, ["--strict-mcp-config"]],
  ["strictMcpConfig false", { strictMcpConfig: false }, []],
  ["additionalDirectories", { additionalDirectories: ["/a", "/b c"] }, [
    "--add-dir=/a",
    "--add-dir=/b c",
  ]],
  ["addDirs (deprecated)", { addDirs: ["/a", "/b c"] }, ["--add-dir=/a", "--add-dir=/b c"]],
  ["projectConfigRoot", { projectConfigRoot: "/repo" }, ["--project-config-root=/repo"]],
  ["plugins", {
    plugins: [{ type: "local", path: "./p" }, {
      type: "local",
      path: "/q",
      skipMcpDiscovery: true,
    }],
  }, ["--plugin-dir=./p", "--plugin-dir-no-mcp=/q"]],
  ["taskBudget", { taskBudget: { total: 5000 } }, ["--task-budget=5000"]],
  ["agent", { agent: "reviewer" }, ["--agent=reviewer"]],
  ["maxTurns", { maxTurns: 5 }, ["--max-turns=5"]],
  ["maxBudgetUsd", { maxBudgetUsd: 1.5 }, ["--max-budget-usd=1.5"]],
  ["effort low", { effort: "low" }, ["--effort=low"]],
  ["effort medium", { effort: "medium" }, ["--effort=medium"]],
  ["effort high", { effort: "high" }, ["--effort=high"]],
  ["effort xhigh", { effort: "xhigh" }, ["--effort=xhigh"]],
  ["effort max", { effort: "max" }, ["--effort=max"]],
  ["thinking adaptive", { thinking: { type: "adaptive" } }, ["--thinking=adaptive"]],
  ["thinking adaptive, displayed", { thinking: { type: "adaptive", display: "summarized" } }, [
    "--thinking=adaptive",
    "--thinking-display=summarized",
  ]],
  ["thinking enabled without budget", { thinking: { type: "enabled" } }, ["--thinking=adaptive"]],
  ["thinking enabled with budget", { thinking: { type: "enabled", budgetTokens: 2048 } }, [
    "--max-thinking-tokens=2048",
  ]],
  ["thinking disabled", { thinking: { type: "disabled" } }, ["--thinking=disabled"]],
  ['thinking "adaptive" (deprecated)', { thinking: "adaptive" }, ["--thinking=adaptive"]],
  ['thinking "disabled" (deprecated)', { thinking: "disabled" }, ["--thinking=disabled"]],
  ["thinking maxTokens (deprecated)", { thinking: { maxTokens: 2048 } }, [
    "--max-thinking-tokens=2048",
  ]],
  ["includePartialMessages", { includePartialMessages: true }, ["--include-partial-messages"]],
  ["includeHookEvents", { includeHookEvents: true }, ["--include-hook-events"]],
  ["forwardSubagentText", { forwardSubagentText: true }, ["--forward-subagent-text"]],
  ["promptSuggestions", { promptSuggestions: true }, ["--prompt-suggestions=true"]],
  ["promptSuggestions off", { promptSuggestions: false }, ["--prompt-suggestions=false"]],
  ["debug", { debug: true }, ["--debug"]],
  ["debug off", { debug: false }, []],
  ["debug filter", { debug: "hooks,mcp" }, ["--debug=hooks,mcp"]],
  ["debugFile", { debugFile: "/tmp/d.log" }, ["--debug-file=/tmp/d.log"]],
  ["debug and debugFile", { debug: true, debugFile: "/tmp/d.log" }, ["--debug-file=/tmp/d.log"]],
  ["debug filter and debugFile", { debug: "api", debugFile: "/d" }, [
    "--debug=api",
    "--debug-file=/d",
  ]],
  ["replayUserMessages", { replayUserMessages: true }, ["--replay-user-messages"]],
  ["resume", { resume: "0b9d3c3e-0000-4000-8000-000000000000" }, [
    "--resume=0b9d3c3e-0000-4000-8000-000000000000",
  ]],
  ["continue", { continue: true }, ["--continue"]],
  ["resumeSessionAt", { resume: "r", resumeSessionAt: "11111111-1111-4111-8111-111111111111" }, [
    "--resume=r",
    "--resume-session-at=11111111-1111-4111-8111-111111111111",
  ]],
  ["resumeDropsTurn", {
    continue: true,
    resumeSessionAt: "11111111-1111-4111-8111-111111111111",
    resumeDropsTurn: "22222222-2222-4222-8222-222222222222",
  }, [
    "--continue",
    "--resume-session-at=11111111-1111-4111-8111-111111111111",
    "--resume-drops-turn=22222222-2222-4222-8222-222222222222",
  ]],
  ["sessionId", { sessionId: "11111111-1111-4111-8111-111111111111" }, [
    "--session-id=11111111-1111-4111-8111-111111111111",
  ]],
  ["forkSession", { forkSession: true }, ["--fork-session"]],
  ["awaitClaim", { awaitClaim: true }, ["--await-claim"]],
  ["persistSession false", { persistSession: false }, ["--no-session-persistence"]],
  ["persistSession true", { persistSession: true }, []],
  ["noSessionPersistence (deprecated)", { noSessionPersistence: true }, [
    "--no-session-persistence",
  ]],
  ["title", { title: "Release notes" }, ["--name=Release notes"]],
  ["settingSources none", { settingSources: [] }, ["--setting-sources="]],
  ["settingSources all", { settingSources: ["user", "project", "local"] }, [
    "--setting-sources=user,project,local",
  ]],
  ["settings object", { settings: { env: { FOO: "1" } } }, [
    "--settings=<private dir>/settings.json",
  ]],
  ["settings JSON text", { settings: ' {"model":"m"}' }, [
    "--settings=<private dir>/settings.json",
  ]],
  ["settings path", { settings: "./settings.json" }, ["--settings=./settings.json"]],
  ["sandbox", { sandbox: { enabled: true } }, ["--settings=<private dir>/settings.json"]],
  ["managedSettings", { managedSettings: { permissions: { deny: ["WebFetch"] } } }, [
    `--managed-settings={"permissions":{"deny":["WebFetch"]}}`,
  ]],
  ["agents object", { agents: { rev: { description: "d", prompt: "p" } } }, [
    "--agents=<private dir>/agents.json",
  ]],
  ["agents path", { agents: "agents.json" }, ["--agents=agents.json"]],
  ["outputFormat", { outputFormat: { type: "json_schema", schema: { type: "object" } } }, [
    `--json-schema={"type":"object"}`,
  ]],
  ["jsonSchema (deprecated)", { jsonSchema: { type: "object" } }, [
    `--json-schema={"type":"object"}`,
  ]],
  ["skills list", { skills: ["pdf", "my-plugin:docx"] }, [
    "--allowedTools=Skill(pdf),Skill(my-plugin:docx)",
  ]],
  ["skills all, merged into allowedTools", { skills: "all", allowedTools: ["Read", "Skill"] }, [
    "--allowedTools=Read,Skill",
  ]],
  ["permissionPrompts none", { permissionPrompts: "none" }, ["--permission-prompts=none"]],
  ["permissionPrompts host", { permissionPrompts: "host" }, ["--permission-prompts=host"]],
  ["enableFileCheckpointing (a variable, no flag)", { enableFileCheckpointing: true }, []],
  ["toolConfig (a variable, no flag)", {
    toolConfig: { askUserQuestion: { previewFormat: "html" } },
  }, []],
  ["betas", { betas: ["context-1m-2025-08-07"] }, ["--betas=context-1m-2025-08-07"]],
  ["betas empty", { betas: [] }, []],
  ["extraArgs last", { extraArgs: { "debug-to-stderr": null, x: "1", y: "-v" }, model: "m" }, [
    "--model=m",
    "--debug-to-stderr",
    "--x=1",
    "--y=-v",
  ]],
  ["extraArgs array (deprecated)", { extraArgs: ["--debug", "--x", "-y"], model: "m" }, [
    "--model=m",
    "--debug",
    "--x",
    "-y",
  ]],
];

Deno.test({
  name: "buildArgs() maps each option to its flag",
  permissions: "none",
  fn: async (t) => {
    for (const [name, options, expected] of CASES) {
      await t.step(name, () => {
        const mode = options.permissionMode === undefined ? [MODE] : [];
        assert.deepEqual(buildArgs(options), [...BASE, PROMPT, ...mode, ...expected]);
      });
    }
  },
});

Deno.test({
  name: "buildArgs() sets the permission prompt tool",
  permissions: "none",
  fn: async (t) => {
    await t.step("stdio by default", () => {
      assert.deepEqual(buildArgs(), [...BASE, PROMPT, MODE]);
    });
    await t.step("an MCP tool (permissionPromptToolName)", () => {
      assert.deepEqual(buildArgs({ permissionPromptToolName: "mcp__auth__prompt" }), [
        ...BASE,
        "--permission-prompt-tool=mcp__auth__prompt",
        MODE,
      ]);
    });
    await t.step("an MCP tool (deprecated permissionPromptTool)", () => {
      assert.deepEqual(buildArgs({ permissionPromptTool: "mcp__auth__prompt" }), [
        ...BASE,
        "--permission-prompt-tool=mcp__auth__prompt",
        MODE,
      ]);
    });
    await t.step("false omits it (deprecated)", () => {
      assert.deepEqual(buildArgs({ permissionPromptTool: false }), [...BASE, MODE]);
    });
  },
});

Deno.test({
  name: "buildArgs() keeps a fixed order when every option is set",
  permissions: "none",
  fn: () => {
    const args = buildArgs({
      model: "opus",
      fallbackModel: "sonnet",
      permissionMode: "plan",
      effort: "high",
      allowDangerouslySkipPermissions: true,
      agent: "a",
      thinking: { type: "adaptive" },
      maxTurns: 2,
      maxBudgetUsd: 3,
      taskBudget: { total: 9 },
      allowedTools: ["Read"],
      skills: ["s"],
      disallowedTools: ["Write"],
      tools: ["Read"],
      mcpConfig: "m.json",
      strictMcpConfig: true,
      additionalDirectories: ["/d"],
      projectConfigRoot: "/r",
      plugins: [{ type: "local", path: "/p" }],
      settingSources: ["user"],
      settings: "s.json",
      managedSettings: {},
      agents: "a.json",
      outputFormat: { type: "json_schema", schema: {} },
      betas: ["b"],
      includePartialMessages: true,
      includeHookEvents: true,
      forwardSubagentText: true,
      promptSuggestions: true,
      replayUserMessages: true,
      debug: "api",
      debugFile: "/d.log",
      continue: true,
      resume: "r",
      resumeSessionAt: "33333333-3333-4333-8333-333333333333",
      resumeDropsTurn: "44444444-4444-4444-8444-444444444444",
      forkSession: true,
      sessionId: "11111111-1111-4111-8111-111111111111",
      persistSession: false,
      title: "t",
      permissionPrompts: "host",
      extraArgs: { last: null },
    });
    assert.deepEqual(args, [
      ...BASE,
      PROMPT,
      "--permission-mode=plan",
      "--permission-prompts=host",
      "--model=opus",
      "--fallback-model=sonnet",
      "--allow-dangerously-skip-permissions",
      "--agent=a",
      "--effort=high",
      "--thinking=adaptive",
      "--max-turns=2",
      "--max-budget-usd=3",
      "--task-budget=9",
      "--allowedTools=Read,Skill(s)",
      "--disallowedTools=Write",
      "--tools=Read",
      "--mcp-config=m.json",
      "--strict-mcp-config",
      "--add-dir=/d",
      "--project-config-root=/r",
      "--plugin-dir=/p",
      "--setting-sources=user",
      "--settings=s.json",
      "--managed-settings={}",
      "--agents=a.json",
      "--json-schema={}",
      "--betas=b",
      "--include-partial-messages",
      "--include-hook-events",
      "--forward-subagent-text",
      "--prompt-suggestions=true",
      "--replay-user-messages",
      "--debug=api",
      "--debug-file=/d.log",
      "--continue",
      "--resume=r",
      "--resume-session-at=33333333-3333-4333-8333-333333333333",
      "--resume-drops-turn=44444444-4444-4444-8444-444444444444",
      "--fork-session",
      "--session-id=11111111-1111-4111-8111-111111111111",
      "--no-session-persistence",
      "--name=t",
      "--last",
    ]);
  },
});

Deno.test({
  name: "planLaunch() always names the permission mode, and says which one the CLI will take",
  permissions: "none",
  fn: async (t) => {
    await t.step("default when none is given", () => {
      const plan = planLaunch({});
      assert.ok(plan.args.includes(MODE), plan.args.join(" "));
      assert.equal(plan.permissionMode, "default");
    });
    await t.step("the one given", () => {
      const plan = planLaunch({ permissionMode: "acceptEdits" });
      assert.deepEqual(plan.args.filter((arg) => arg.startsWith("--permission-mode")), [
        "--permission-mode=acceptEdits",
      ]);
      assert.equal(plan.permissionMode, "acceptEdits");
    });
    await t.step("the last one extraArgs name (the CLI takes the last)", () => {
      assert.equal(planLaunch({ extraArgs: { "permission-mode": "plan" } }).permissionMode, "plan");
      assert.equal(
        planLaunch({ extraArgs: ["--permission-mode", "dontAsk"] }).permissionMode,
        "dontAsk",
      );
    });
    await t.step("none when extraArgs name one that cannot be read", () => {
      assert.equal(planLaunch({ extraArgs: ["--permission-mode"] }).permissionMode, undefined);
    });
  },
});
