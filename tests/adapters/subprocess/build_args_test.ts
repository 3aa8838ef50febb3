import assert from "node:assert/strict";
import { buildArgs, type CliOptions } from "../../../adapters/subprocess/mod.ts";
import { DuplexError } from "../../../src/errors.ts";

const BASE = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
];
const PROMPT = "--permission-prompt-tool=stdio";

/** Each option and the arguments it adds after the base and the prompt tool. */
const CASES: ReadonlyArray<readonly [string, CliOptions, readonly string[]]> = [
  ["no options", {}, []],
  ["model", { model: "sonnet" }, ["--model=sonnet"]],
  ["model starting with a dash", { model: "-odd" }, ["--model=-odd"]],
  ["fallbackModel", { fallbackModel: "haiku,sonnet" }, ["--fallback-model=haiku,sonnet"]],
  ["permissionMode default", { permissionMode: "default" }, ["--permission-mode=default"]],
  ["permissionMode acceptEdits", { permissionMode: "acceptEdits" }, [
    "--permission-mode=acceptEdits",
  ]],
  ["permissionMode bypassPermissions", { permissionMode: "bypassPermissions" }, [
    "--permission-mode=bypassPermissions",
  ]],
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
  ["tools default", { tools: "default" }, ["--tools=default"]],
  ["mcpConfig object", { mcpConfig: { mcpServers: { x: { command: "srv", args: ["-v"] } } } }, [
    `--mcp-config={"mcpServers":{"x":{"command":"srv","args":["-v"]}}}`,
  ]],
  ["mcpConfig path", { mcpConfig: "/etc/mcp.json" }, ["--mcp-config=/etc/mcp.json"]],
  ["strictMcpConfig", { strictMcpConfig: true }, ["--strict-mcp-config"]],
  ["strictMcpConfig false", { strictMcpConfig: false }, []],
  ["addDirs", { addDirs: ["/a", "/b c"] }, ["--add-dir=/a", "--add-dir=/b c"]],
  ["maxTurns", { maxTurns: 5 }, ["--max-turns=5"]],
  ["maxBudgetUsd", { maxBudgetUsd: 1.5 }, ["--max-budget-usd=1.5"]],
  ["effort low", { effort: "low" }, ["--effort=low"]],
  ["effort medium", { effort: "medium" }, ["--effort=medium"]],
  ["effort high", { effort: "high" }, ["--effort=high"]],
  ["effort xhigh", { effort: "xhigh" }, ["--effort=xhigh"]],
  ["effort max", { effort: "max" }, ["--effort=max"]],
  ["thinking adaptive", { thinking: "adaptive" }, ["--thinking=adaptive"]],
  ["thinking disabled", { thinking: "disabled" }, ["--thinking=disabled"]],
  ["thinking budget", { thinking: { maxTokens: 2048 } }, ["--max-thinking-tokens=2048"]],
  ["includePartialMessages", { includePartialMessages: true }, ["--include-partial-messages"]],
  ["replayUserMessages", { replayUserMessages: true }, ["--replay-user-messages"]],
  ["resume", { resume: "0b9d3c3e-0000-4000-8000-000000000000" }, [
    "--resume=0b9d3c3e-0000-4000-8000-000000000000",
  ]],
  ["continue", { continue: true }, ["--continue"]],
  ["sessionId", { sessionId: "11111111-1111-4111-8111-111111111111" }, [
    "--session-id=11111111-1111-4111-8111-111111111111",
  ]],
  ["forkSession", { forkSession: true }, ["--fork-session"]],
  ["noSessionPersistence", { noSessionPersistence: true }, ["--no-session-persistence"]],
  ["settingSources none", { settingSources: [] }, ["--setting-sources="]],
  ["settingSources all", { settingSources: ["user", "project", "local"] }, [
    "--setting-sources=user,project,local",
  ]],
  ["settings object", { settings: { env: { FOO: "1" } } }, [`--settings={"env":{"FOO":"1"}}`]],
  ["settings path", { settings: "./settings.json" }, ["--settings=./settings.json"]],
  ["agents object", { agents: { rev: { description: "d", prompt: "p" } } }, [
    `--agents={"rev":{"description":"d","prompt":"p"}}`,
  ]],
  ["agents path", { agents: "agents.json" }, ["--agents=agents.json"]],
  ["jsonSchema", { jsonSchema: { type: "object" } }, [`--json-schema={"type":"object"}`]],
  ["betas", { betas: ["context-1m-2025-08-07"] }, ["--betas=context-1m-2025-08-07"]],
  ["betas empty", { betas: [] }, []],
  ["extraArgs last", { extraArgs: ["--debug", "--x", "-y"], model: "m" }, [
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
        assert.deepEqual(buildArgs(options), [...BASE, PROMPT, ...expected]);
      });
    }
  },
});

Deno.test({
  name: "buildArgs() sets the permission prompt tool",
  permissions: "none",
  fn: async (t) => {
    await t.step("stdio by default", () => {
      assert.deepEqual(buildArgs(), [...BASE, PROMPT]);
    });
    await t.step("another tool", () => {
      assert.deepEqual(buildArgs({ permissionPromptTool: "mcp__auth__prompt" }), [
        ...BASE,
        "--permission-prompt-tool=mcp__auth__prompt",
      ]);
    });
    await t.step("false omits it", () => {
      assert.deepEqual(buildArgs({ permissionPromptTool: false }), BASE);
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
      thinking: "adaptive",
      maxTurns: 2,
      maxBudgetUsd: 3,
      allowedTools: ["Read"],
      disallowedTools: ["Write"],
      tools: ["Read"],
      mcpConfig: "m.json",
      strictMcpConfig: true,
      addDirs: ["/d"],
      settingSources: ["user"],
      settings: "s.json",
      agents: "a.json",
      jsonSchema: {},
      betas: ["b"],
      includePartialMessages: true,
      replayUserMessages: true,
      continue: true,
      resume: "r",
      forkSession: true,
      sessionId: "11111111-1111-4111-8111-111111111111",
      noSessionPersistence: true,
      extraArgs: ["--last"],
    });
    assert.deepEqual(args, [
      ...BASE,
      PROMPT,
      "--model=opus",
      "--fallback-model=sonnet",
      "--permission-mode=plan",
      "--effort=high",
      "--thinking=adaptive",
      "--max-turns=2",
      "--max-budget-usd=3",
      "--allowedTools=Read",
      "--disallowedTools=Write",
      "--tools=Read",
      "--mcp-config=m.json",
      "--strict-mcp-config",
      "--add-dir=/d",
      "--setting-sources=user",
      "--settings=s.json",
      "--agents=a.json",
      "--json-schema={}",
      "--betas=b",
      "--include-partial-messages",
      "--replay-user-messages",
      "--continue",
      "--resume=r",
      "--fork-session",
      "--session-id=11111111-1111-4111-8111-111111111111",
      "--no-session-persistence",
      "--last",
    ]);
  },
});

/** Options the CLI would refuse, and a piece of the expected message. */
const INVALID: ReadonlyArray<readonly [string, unknown, string]> = [
  ["unknown permission mode", { permissionMode: "yolo" }, "default, acceptEdits"],
  ["unknown effort", { effort: "extreme" }, "low, medium, high, xhigh, max"],
  ["unknown thinking", { thinking: "sometimes" }, `"adaptive", "disabled" or { maxTokens: n }`],
  ["thinking budget of zero", { thinking: { maxTokens: 0 } }, "positive integer"],
  ["fractional thinking budget", { thinking: { maxTokens: 1.5 } }, "positive integer"],
  ["unknown setting source", { settingSources: ["user", "global"] }, "user, project, local"],
  ["zero turns", { maxTurns: 0 }, "maxTurns must be a positive integer"],
  ["negative turns", { maxTurns: -1 }, "maxTurns must be a positive integer"],
  ["fractional turns", { maxTurns: 1.5 }, "maxTurns must be a positive integer"],
  ["NaN turns", { maxTurns: NaN }, "maxTurns must be a positive integer"],
  ["infinite budget", { maxBudgetUsd: Infinity }, "finite number greater than 0"],
  ["zero budget", { maxBudgetUsd: 0 }, "finite number greater than 0"],
  ["empty model", { model: "" }, "model must not be empty"],
  ["NUL in a value", { model: "a\0b" }, "NUL"],
  ["NUL in extraArgs", { extraArgs: ["a\0"] }, "NUL"],
  ["empty tool name", { allowedTools: ["Read", ""] }, "allowedTools[1] must not be empty"],
  ["session id not a UUID", { sessionId: "abc" }, "sessionId must be a UUID"],
  ["mcpConfig without mcpServers", { mcpConfig: { x: { command: "c" } } }, "mcpServers"],
  ["cyclic jsonSchema", { jsonSchema: cyclic() }, "cannot be encoded as JSON"],
];

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
}

Deno.test({
  name: "buildArgs() throws invalid_argument for values the CLI would refuse",
  permissions: "none",
  fn: async (t) => {
    for (const [name, options, excerpt] of INVALID) {
      await t.step(name, () => {
        assert.throws(
          () => buildArgs(options as CliOptions),
          (error: unknown) => {
            assert.ok(error instanceof DuplexError, String(error));
            assert.equal(error.kind, "invalid_argument");
            assert.match(error.message, /^Cannot build the claude arguments: /);
            assert.ok(error.message.includes(excerpt), error.message);
            return true;
          },
        );
      });
    }
  },
});

/** Options of the wrong type. */
const WRONG_TYPES: ReadonlyArray<readonly [string, unknown]> = [
  ["model as a number", { model: 5 }],
  ["maxTurns as a string", { maxTurns: "5" }],
  ["maxBudgetUsd as a string", { maxBudgetUsd: "1" }],
  ["allowedTools as a string", { allowedTools: "Read" }],
  ["addDirs with a number", { addDirs: [1] }],
  ["strictMcpConfig as a string", { strictMcpConfig: "yes" }],
  ["jsonSchema as a string", { jsonSchema: "{}" }],
  ["jsonSchema as an array", { jsonSchema: [] }],
  ["extraArgs with a number", { extraArgs: [1] }],
  ["settingSources as a string", { settingSources: "user" }],
  ["options as null", null],
];

Deno.test({
  name: "buildArgs() throws TypeError for values of the wrong type",
  permissions: "none",
  fn: async (t) => {
    for (const [name, options] of WRONG_TYPES) {
      await t.step(name, () => {
        assert.throws(() => buildArgs(options as CliOptions), TypeError);
      });
    }
  },
});
