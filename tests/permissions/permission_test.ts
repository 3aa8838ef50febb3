import assert from "node:assert/strict";
import { allow, defer, deny } from "../../mod.ts";
import {
  checkDecision,
  decisionPayload,
  type PermissionRequest,
  permissionRequestFrom,
} from "../../src/permissions/permission.ts";

const ABORT = new AbortController().signal;

Deno.test("checkDecision() accepts the three decisions", { permissions: "none" }, () => {
  assert.deepEqual(checkDecision(allow()), { ok: true, decision: { behavior: "allow" } });
  assert.deepEqual(checkDecision(deny("no", { interrupt: true })), {
    ok: true,
    decision: { behavior: "deny", message: "no", interrupt: true },
  });
  assert.deepEqual(checkDecision(defer()), { ok: true, decision: { behavior: "defer" } });
  assert.deepEqual(checkDecision({ behavior: "deny" }), {
    ok: true,
    decision: { behavior: "deny", message: "Denied by the host" },
  });
});

Deno.test(
  "checkDecision() rejects bad shapes with a reason",
  { permissions: "none" },
  async (t) => {
    const bad: [string, unknown, RegExp][] = [
      ["undefined", undefined, /expected a decision object, got undefined/],
      ["null", null, /got null/],
      ["a string", "allow", /got "allow"/],
      ["an array", [], /got an array/],
      ["unknown behavior", { behavior: "maybe" }, /behavior must be/],
      ["no behavior", {}, /behavior must be/],
      ["non-object updatedInput", { behavior: "allow", updatedInput: "x" }, /updatedInput/],
      [
        "bad updatedPermissions",
        { behavior: "allow", updatedPermissions: [1] },
        /updatedPermissions/,
      ],
      ["non-string message", { behavior: "deny", message: 5 }, /message must be a string/],
      ["non-boolean interrupt", { behavior: "deny", message: "m", interrupt: "yes" }, /interrupt/],
    ];
    for (const [name, value, reason] of bad) {
      await t.step(name, () => {
        const check = checkDecision(value);
        assert.equal(check.ok, false);
        assert.match(check.ok ? "" : check.reason, reason);
      });
    }
  },
);

Deno.test("decisionPayload() always sends updatedInput on allow", { permissions: "none" }, () => {
  const request = { input: { command: "ls" }, toolUseId: "toolu_1" };
  assert.deepEqual(decisionPayload(allow(), request), {
    behavior: "allow",
    updatedInput: { command: "ls" },
    toolUseID: "toolu_1",
  });
  assert.deepEqual(
    decisionPayload({
      behavior: "allow",
      updatedInput: { command: "echo safe" },
      updatedPermissions: [{
        type: "addRules",
        rules: [{ toolName: "Bash" }],
        behavior: "allow",
        destination: "session",
      }],
    }, request),
    {
      behavior: "allow",
      updatedInput: { command: "echo safe" },
      updatedPermissions: [{
        type: "addRules",
        rules: [{ toolName: "Bash" }],
        behavior: "allow",
        destination: "session",
      }],
      toolUseID: "toolu_1",
    },
  );
  assert.deepEqual(
    decisionPayload(deny("no", { interrupt: true }), { input: {}, toolUseId: undefined }),
    {
      behavior: "deny",
      message: "no",
      interrupt: true,
    },
  );
});

Deno.test("permissionRequestFrom() reads the CLI's fields and tolerates junk", {
  permissions: "none",
}, () => {
  const signal = new AbortController().signal;
  const request = permissionRequestFrom("r1", {
    subtype: "can_use_tool",
    tool_name: "Bash",
    display_name: "Bash",
    input: { command: "touch x" },
    tool_use_id: "toolu_1",
    permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
    blocked_path: "/p/x",
  }, signal);
  assert.equal(request.toolName, "Bash");
  assert.deepEqual(request.input, { command: "touch x" });
  assert.equal(request.suggestions.length, 1);
  assert.equal(request.blockedPath, "/p/x");
  assert.equal(request.signal, signal);
  const junk = permissionRequestFrom("r2", {
    subtype: "can_use_tool",
    tool_name: 7 as unknown as string,
    input: null as unknown as Record<string, unknown>,
    permission_suggestions: "x" as unknown as [],
  }, signal);
  assert.equal(junk.toolName, "");
  assert.deepEqual(junk.input, {});
  assert.deepEqual(junk.suggestions, []);
});

/** What 2.1.332 sent for `rm -rf /` under a `Bash(rm:*)` ask rule (recorded), plus an MCP server. */
const FULL = {
  subtype: "can_use_tool",
  tool_name: "Bash",
  display_name: "Run command",
  title: "Claude wants to run rm -rf /",
  input: { command: "rm -rf /", description: "Run it" },
  description: "Run it",
  permission_suggestions: [],
  blocked_path: "/",
  decision_reason: "Dangerous rm operation on critical path: /",
  decision_reason_type: "safetyCheck",
  decision_reason_code: "org_ask_ceiling",
  classifier_approvable: false,
  server_policy_ask_only: false,
  plan_floor_ask_only: true,
  ask_only_false_cause: "rule",
  mcp_server: { name: "whisperer", source: "dynamic" },
  default_to_no: true,
  suppress_always_allow_rule: true,
  managed_rules_only: true,
  plugin: "tidy",
  requires_user_interaction: false,
  server_prompt: "connector_card",
  computer_folder: { path: "/home/me/work", computer_name: "laptop" },
  matched_ask_rule: { source: "flagSettings", tool_name: "Bash", rule_content: "rm:*" },
  agent_id: "agent-1",
  tool_use_id: "toolu_fake_1",
  decision_reason_hook_source: "settings",
} as const;

Deno.test("permissionRequestFrom() types every field the SDK's canUseTool receives", {
  permissions: "none",
}, () => {
  const request = permissionRequestFrom("r1", structuredClone(FULL) as never, ABORT);
  const { signal: _s, receivedAt: _r, raw, ...fields } = request;
  assert.deepEqual(fields, {
    requestId: "r1",
    toolName: "Bash",
    title: "Claude wants to run rm -rf /",
    displayName: "Run command",
    input: { command: "rm -rf /", description: "Run it" },
    toolUseId: "toolu_fake_1",
    description: "Run it",
    suggestions: [],
    blockedPath: "/",
    decisionReason: "Dangerous rm operation on critical path: /",
    decisionReasonType: "safetyCheck",
    decisionReasonCode: "org_ask_ceiling",
    classifierApprovable: false,
    serverPolicyAskOnly: false,
    planFloorAskOnly: true,
    askOnlyFalseCause: "rule",
    mcpServer: { name: "whisperer", source: "dynamic" },
    defaultToNo: true,
    suppressAlwaysAllowRule: true,
    managedRulesOnly: true,
    plugin: "tidy",
    requiresUserInteraction: false,
    serverPrompt: "connector_card",
    computerFolder: { path: "/home/me/work", computerName: "laptop" },
    matchedAskRule: { source: "flagSettings", toolName: "Bash", ruleContent: "rm:*" },
    agentId: "agent-1",
  });
  // Fields we do not type stay in raw.
  assert.equal(raw.decision_reason_hook_source, "settings");
});

Deno.test("permissionRequestFrom() leaves absent fields undefined, false booleans false", {
  permissions: "none",
}, () => {
  const bare = permissionRequestFrom("r1", {
    subtype: "can_use_tool",
    tool_name: "Read",
    input: {},
    tool_use_id: "t",
  }, ABORT);
  for (
    const key of [
      "title",
      "defaultToNo",
      "suppressAlwaysAllowRule",
      "matchedAskRule",
      "mcpServer",
      "managedRulesOnly",
      "requiresUserInteraction",
      "classifierApprovable",
      "computerFolder",
    ] as const
  ) {
    assert.equal(bare[key], undefined, key);
  }
  const no = permissionRequestFrom("r2", {
    subtype: "can_use_tool",
    tool_name: "Read",
    input: {},
    default_to_no: false,
    suppress_always_allow_rule: false,
    managed_rules_only: false,
    matched_ask_rule: { source: "userSettings", tool_name: "Read" },
  }, ABORT);
  assert.equal(no.defaultToNo, false);
  assert.equal(no.suppressAlwaysAllowRule, false);
  assert.equal(no.managedRulesOnly, undefined, "as the SDK: only true is passed on");
  assert.deepEqual(no.matchedAskRule, { source: "userSettings", toolName: "Read" });
  assert.ok(!("ruleContent" in no.matchedAskRule!));
});

Deno.test("permissionRequestFrom() drops malformed fields and keeps them in raw", {
  permissions: "none",
}, async (t) => {
  const cases: [string, Record<string, unknown>, keyof PermissionRequest][] = [
    ["mcp_server as a string (the old typing)", { mcp_server: "whisperer" }, "mcpServer"],
    ["mcp_server without source", { mcp_server: { name: "w" } }, "mcpServer"],
    ["mcp_server with a numeric name", { mcp_server: { name: 1, source: "sdk" } }, "mcpServer"],
    ["title as a number", { title: 7 }, "title"],
    ["default_to_no as a string", { default_to_no: "true" }, "defaultToNo"],
    [
      "suppress_always_allow_rule as 1",
      { suppress_always_allow_rule: 1 },
      "suppressAlwaysAllowRule",
    ],
    ["managed_rules_only as a string", { managed_rules_only: "true" }, "managedRulesOnly"],
    [
      "requires_user_interaction null",
      { requires_user_interaction: null },
      "requiresUserInteraction",
    ],
    ["server_policy_ask_only as a string", { server_policy_ask_only: "no" }, "serverPolicyAskOnly"],
    ["decision_reason_type as an object", { decision_reason_type: {} }, "decisionReasonType"],
    ["matched_ask_rule without tool_name", { matched_ask_rule: { source: "u" } }, "matchedAskRule"],
    [
      "matched_ask_rule with a numeric rule_content",
      { matched_ask_rule: { source: "u", tool_name: "Bash", rule_content: 3 } },
      "matchedAskRule",
    ],
    ["matched_ask_rule as an array", { matched_ask_rule: ["Bash"] }, "matchedAskRule"],
    [
      "computer_folder without computer_name",
      { computer_folder: { path: "/x" } },
      "computerFolder",
    ],
    ["plugin as a number", { plugin: 5 }, "plugin"],
  ];
  for (const [name, fields, key] of cases) {
    await t.step(name, () => {
      const body = { subtype: "can_use_tool", "tool_name": "Bash", input: {}, ...fields };
      const request = permissionRequestFrom("r", body as never, ABORT);
      assert.equal(request[key], undefined);
      assert.deepEqual(request.raw, body);
      assert.equal(request.toolName, "Bash", "the rest is still read");
    });
  }
});

Deno.test("checkDecision() accepts decisionClassification on allow and deny", {
  permissions: "none",
}, async (t) => {
  for (const classification of ["user_temporary", "user_permanent", "user_reject"] as const) {
    await t.step(classification, () => {
      assert.deepEqual(
        checkDecision({ behavior: "allow", decisionClassification: classification }),
        {
          ok: true,
          decision: { behavior: "allow", decisionClassification: classification },
        },
      );
      assert.deepEqual(
        checkDecision({ behavior: "deny", message: "no", decisionClassification: classification }),
        {
          ok: true,
          decision: { behavior: "deny", message: "no", decisionClassification: classification },
        },
      );
    });
  }
  assert.deepEqual(
    checkDecision(allow(undefined, { decisionClassification: "user_permanent" })),
    { ok: true, decision: { behavior: "allow", decisionClassification: "user_permanent" } },
  );
  assert.deepEqual(checkDecision(deny("no", { decisionClassification: "user_reject" })), {
    ok: true,
    decision: { behavior: "deny", message: "no", decisionClassification: "user_reject" },
  });
});

Deno.test("checkDecision() refuses a bad decisionClassification with the reason", {
  permissions: "none",
}, async (t) => {
  const bad: [string, unknown][] = [
    ["an unknown word", "user_forever"],
    ["a number", 1],
    ["null", null],
    ["the telemetry's own words", "config"],
  ];
  for (const [name, value] of bad) {
    await t.step(name, () => {
      for (const behavior of ["allow", "deny"]) {
        const check = checkDecision({ behavior, message: "m", decisionClassification: value });
        assert.equal(check.ok, false);
        assert.match(
          check.ok ? "" : check.reason,
          new RegExp(
            `^${behavior}\\.decisionClassification must be "user_temporary", "user_permanent" or "user_reject", got `,
          ),
        );
      }
    });
  }
});

Deno.test("decisionPayload() sends decisionClassification as the SDK does", {
  permissions: "none",
}, () => {
  const request = { input: { command: "ls" }, toolUseId: "toolu_1" };
  assert.deepEqual(
    decisionPayload(
      allow(undefined, {
        updatedPermissions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
        decisionClassification: "user_permanent",
      }),
      request,
    ),
    {
      behavior: "allow",
      updatedInput: { command: "ls" },
      updatedPermissions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
      decisionClassification: "user_permanent",
      toolUseID: "toolu_1",
    },
  );
  assert.deepEqual(
    decisionPayload(deny("no", { decisionClassification: "user_reject" }), request),
    {
      behavior: "deny",
      message: "no",
      decisionClassification: "user_reject",
      toolUseID: "toolu_1",
    },
  );
  assert.ok(!("decisionClassification" in decisionPayload(allow(), request)));
});
