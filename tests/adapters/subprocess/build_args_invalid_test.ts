import assert from "node:assert/strict";
import { buildArgs, type CliOptions } from "../../../adapters/subprocess/mod.ts";
import { DuplexError } from "../../../src/errors.ts";

/** Options the CLI would refuse, and a piece of the expected message. */
const INVALID: ReadonlyArray<readonly [string, unknown, string]> = [
  ["unknown permission mode", { permissionMode: "yolo" }, "default, acceptEdits"],
  ["unknown effort", { effort: "extreme" }, "low, medium, high, xhigh, max"],
  ["unknown thinking", { thinking: "sometimes" }, `{ type: "adaptive" | "enabled" | "disabled" }`],
  ["unknown thinking type", { thinking: { type: "on" } }, "thinking.type must be one of"],
  ["unknown thinking display", { thinking: { type: "adaptive", display: "all" } }, "display"],
  ["thinking budget of zero", { thinking: { type: "enabled", budgetTokens: 0 } }, "positive"],
  ["deprecated thinking budget of zero", { thinking: { maxTokens: 0 } }, "positive integer"],
  ["fractional thinking budget", { thinking: { maxTokens: 1.5 } }, "positive integer"],
  [
    "bypassPermissions without consent",
    { permissionMode: "bypassPermissions" },
    "allowDangerouslySkipPermissions: true",
  ],
  ["unknown permissionPrompts", { permissionPrompts: "ask" }, "host, none"],
  ["taskBudget of zero", { taskBudget: { total: 0 } }, "taskBudget.total must be a positive"],
  ["fractional taskBudget", { taskBudget: { total: 2.5 } }, "taskBudget.total"],
  ["skill name with parentheses", { skills: ["a(b)"] }, "skills[0] must be a skill name"],
  ["skill name with a comma", { skills: ["a,b"] }, "skills[0]"],
  ["padded skill name", { skills: [" pdf"] }, "surrounding spaces"],
  ["skill name with a control character", { skills: ["a\u0007"] }, "control characters"],
  ["empty skill name", { skills: [""] }, "skills[0] must not be empty"],
  ["plugin of another type", { plugins: [{ type: "npm", path: "x" }] }, 'must be "local"'],
  ["resumeSessionAt without resume", {
    resumeSessionAt: "11111111-1111-4111-8111-111111111111",
  }, "resumeSessionAt needs resume"],
  ["resumeSessionAt not a UUID", { resume: "r", resumeSessionAt: "last" }, "must be a UUID"],
  ["resumeDropsTurn without resumeSessionAt", {
    resume: "r",
    resumeDropsTurn: "11111111-1111-4111-8111-111111111111",
  }, "resumeDropsTurn needs resumeSessionAt"],
  ["awaitClaim with resume", { awaitClaim: true, resume: "r" }, "awaitClaim cannot be combined"],
  [
    "addDirs with additionalDirectories",
    { addDirs: ["/a"], additionalDirectories: ["/b"] },
    "pass additionalDirectories or its deprecated name addDirs",
  ],
  ["persistSession with noSessionPersistence", {
    persistSession: false,
    noSessionPersistence: true,
  }, "deprecated name noSessionPersistence"],
  ["permissionPromptToolName with permissionPromptTool", {
    permissionPromptToolName: "a",
    permissionPromptTool: "b",
  }, "deprecated name permissionPromptTool"],
  ["permissionPromptToolName with permissionPromptTool false", {
    permissionPromptToolName: "a",
    permissionPromptTool: false,
  }, "not both"],
  ["outputFormat of another type", { outputFormat: { type: "xml", schema: {} } }, "json_schema"],
  ["outputFormat without a schema", { outputFormat: { type: "json_schema" } }, "needs a schema"],
  ["outputFormat with jsonSchema", {
    outputFormat: { type: "json_schema", schema: {} },
    jsonSchema: {},
  }, "deprecated name jsonSchema"],
  ["settings JSON text that does not parse", { settings: "{nope" }, "does not parse"],
  ["agents JSON text", { agents: "{]" }, "agents looks like JSON text"],
  ["sandbox with a settings file path", { settings: "s.json", sandbox: {} }, "file path"],
  ["extraArgs key with dashes", { extraArgs: { "--x": null } }, "without the leading --"],
  ["extraArgs key with a space", { extraArgs: { "a b": "1" } }, "flag names"],
  ["NUL in an extraArgs value", { extraArgs: { x: "a\0" } }, "NUL"],
  [
    "unknown previewFormat",
    { toolConfig: { askUserQuestion: { previewFormat: "pdf" } } },
    "markdown, html",
  ],
  ["unknown tools preset", { tools: { type: "preset", preset: "minimal" } }, "claude_code"],
  ["mcpConfig JSON text without mcpServers", { mcpConfig: '{"x":{}}' }, "mcpServers"],
  ["an empty privateDir", undefined, "privateDir must not be empty"],
  ["unknown setting source", { settingSources: ["user", "global"] }, "user, project, local"],
  ["zero turns", { maxTurns: 0 }, "maxTurns must be a positive integer"],
  ["negative turns", { maxTurns: -1 }, "maxTurns must be a positive integer"],
  ["fractional turns", { maxTurns: 1.5 }, "maxTurns must be a positive integer"],
  ["NaN turns", { maxTurns: NaN }, "maxTurns must be a positive integer"],
  ["infinite budget", { maxBudgetUsd: Infinity }, "finite number greater than 0"],
  ["zero budget", { maxBudgetUsd: 0 }, "finite number greater than 0"],
  ["empty model", { model: "" }, "model must not be empty"],
  ["fallbackModel the same as model", { model: "opus", fallbackModel: "opus" }, "must differ"],
  ["NUL in a value", { model: "a\0b" }, "NUL"],
  ["NUL in a title", { title: "a\0b" }, "NUL"],
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
          () => options === undefined ? buildArgs({}, "") : buildArgs(options as CliOptions),
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
  ["debug as a number", { debug: 1 }],
  ["debugFile as a boolean", { debugFile: true }],
  ["taskBudget as a number", { taskBudget: 100 }],
  ["plugins as an object", { plugins: { type: "local", path: "p" } }],
  ["plugin as a string", { plugins: ["./p"] }],
  ["plugin without a path", { plugins: [{ type: "local" }] }],
  ["skills as a string", { skills: "pdf" }],
  ["sandbox as a string", { sandbox: "on" }],
  ["managedSettings as a string", { managedSettings: "{}" }],
  ["toolConfig as a string", { toolConfig: "html" }],
  ["title as a number", { title: 1 }],
  ["includeHookEvents as a string", { includeHookEvents: "yes" }],
  ["promptSuggestions as a string", { promptSuggestions: "true" }],
  ["allowDangerouslySkipPermissions as a string", { allowDangerouslySkipPermissions: "yes" }],
  ["extraArgs value as a number", { extraArgs: { x: 1 } }],
  ["outputFormat as a string", { outputFormat: "json" }],
  ["persistSession as a string", { persistSession: "no" }],
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
