/**
 * What the real `claude` (2.1.332) puts in a permission request, field by
 * field, as `PermissionRequest` types it, and what it does with a decision's
 * `decisionClassification`. Each ask is made to happen offline: a Bash call
 * in the work folder, paths outside it, `permissions.ask` rules on top of a
 * safety check and a folder check, MCP tools of an external and an
 * in-process server, a PreToolUse hook that asks.
 *
 * Observed and asserted here: the CLI reads `decisionClassification` (its
 * `user` frame's `tool_result_meta` names it as the decision's source, even
 * an allow classified permanent without a rule). `title`, `default_to_no`
 * and `requires_user_interaction` come only with an ask the host worded: a
 * PreToolUse hook's `permissionDisplay`, which the CLI reads behind its
 * `tengu_linear_owl` feature flag (turned on here through the CLI's own
 * feature cache in `$HOME/.claude.json`, read offline with
 * `CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF=1`); the initialize reply
 * then says `host_worded_asks: true`. Never sent in any of these asks
 * (asserted, so a CLI that starts sending one fails here):
 * `managed_rules_only`, `plugin`, `server_prompt`, `computer_folder`,
 * `decision_reason_code`, `plan_floor_ask_only`, `ask_only_false_cause`
 * (features of the CLI's own hosts: managed settings, plugins' runs, the
 * session service, auto mode); the unit tests cover their reading.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  DuplexSession,
  mcpServer,
  type PermissionDecision,
  type PermissionRequest,
  type SessionEvent,
  tool,
} from "../../mod.ts";
import { e2eTest, exists, sandboxedCli, withSandbox } from "./_harness.ts";

const SERVER = new URL("../fixtures/mcp_stdio_server.ts", import.meta.url).pathname;
const TURN = { timeoutMs: 40_000 } as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The fields no ask of the first test gets from 2.1.332 (the second sends the first three). */
const NEVER_SENT = [
  "title",
  "defaultToNo",
  "requiresUserInteraction",
  "managedRulesOnly",
  "plugin",
  "serverPrompt",
  "computerFolder",
  "decisionReasonCode",
  "planFloorAskOnly",
  "askOnlyFalseCause",
] as const satisfies readonly (keyof PermissionRequest)[];

type Decide = (request: PermissionRequest) => PermissionDecision;

/** The `permission_decision` the CLI records in `tool_result_meta` for a tool call. */
function recordedDecision(events: readonly SessionEvent[], toolUseId: string | undefined): unknown {
  for (const event of events) {
    if (event.type !== "user") continue;
    const meta = (event as { tool_result_meta?: unknown }).tool_result_meta;
    if (!Array.isArray(meta)) continue;
    const entry = meta.find((m) => (m as { id?: unknown }).id === toolUseId);
    if (entry) return (entry as { permission_decision?: unknown }).permission_decision;
  }
  return undefined;
}

e2eTest("permission requests carry the CLI's fields, typed; decisionClassification is read", async (
  t,
  cli,
) => {
  await withSandbox(async ({ api, work, home, root, env }) => {
    await Deno.writeTextFile(`${root}/outside.txt`, "outside\n");
    const asked: PermissionRequest[] = [];
    let decide: Decide = () => ({ behavior: "deny", message: "unexpected ask" });
    const events: SessionEvent[] = [];
    const ping = tool("ping", "Answers pong", { type: "object", properties: {} }, () => "pong");
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }, {
        settings: { permissions: { ask: ["Bash(rm:*)", "Read", "mcp__inproc__ping"] } },
      }),
      mcpServers: {
        whisperer: {
          command: Deno.execPath(),
          args: ["run", "-A", SERVER],
          env: { SECRET_WORD: "kumquat" },
        },
        inproc: mcpServer({ name: "inproc", tools: [ping] }),
      },
      hooks: {
        PreToolUse: [{
          matcher: "Bash",
          // Only the one call of its step: every other ask keeps the CLI's own reason.
          run: (input) =>
            JSON.stringify(input.tool_input).includes("hook-asks")
              ? {
                hookSpecificOutput: {
                  hookEventName: "PreToolUse",
                  permissionDecision: "ask",
                  permissionDecisionReason: "the e2e hook wants a person",
                },
              }
              : {},
        }],
      },
      onPermission: (request) => {
        asked.push(request);
        return decide(request);
      },
    });
    const sub = session.subscribe({ capacity: 4096 });
    const collecting = (async () => {
      for await (const event of sub) events.push(event);
    })();

    /** Sends `prompt`, answering its one ask with `answer`; returns the ask and the result text. */
    async function askOnce(prompt: string, answer: Decide) {
      const before = asked.length;
      decide = answer;
      const turn = await session.send(prompt, TURN);
      assert.equal(asked.length, before + 1, `one ask for ${prompt}`);
      return { request: asked.at(-1)!, text: turn.result.text };
    }

    await t.step("a Bash call in the work folder: its fields and nothing more", async () => {
      const { request, text } = await askOnce(
        "[[tool:bash:touch plain.txt]]",
        () => ({ behavior: "allow", decisionClassification: "user_temporary" }),
      );
      assert.match(request.requestId, UUID);
      assert.equal(request.toolName, "Bash");
      assert.equal(request.displayName, "Bash");
      assert.equal(request.description, "Run it");
      assert.deepEqual(request.input, { command: "touch plain.txt", description: "Run it" });
      assert.match(request.toolUseId ?? "", /^toolu_fake_\d+$/);
      assert.equal(request.blockedPath, `${work}/plain.txt`);
      assert.deepEqual(request.suggestions.map((s) => s.type), [
        "addRules",
        "addDirectories",
        "setMode",
      ]);
      for (
        const key of [
          "decisionReason",
          "decisionReasonType",
          "mcpServer",
          "matchedAskRule",
          "suppressAlwaysAllowRule",
          "serverPolicyAskOnly",
          "classifierApprovable",
          "agentId",
        ] as const
      ) {
        assert.equal(request[key], undefined, key);
      }
      assert.equal(text, "Tool said: (Bash completed with no output)");
      assert.ok(await exists(`${work}/plain.txt`));
      assert.deepEqual(recordedDecision(events, request.toolUseId), {
        decision: "accept",
        source: "user_temporary",
      });
    });

    await t.step("the CLI takes decisionClassification: permanent without a rule", async () => {
      // Unclassified, an allow with no rule would count as temporary.
      const { request } = await askOnce(
        "[[tool:bash:touch permanent.txt]]",
        () => ({ behavior: "allow", decisionClassification: "user_permanent" }),
      );
      assert.ok(await exists(`${work}/permanent.txt`), "the turn went on: the tool ran");
      assert.deepEqual(recordedDecision(events, request.toolUseId), {
        decision: "accept",
        source: "user_permanent",
      });
      assert.ok(!(await exists(`${work}/.claude/settings.local.json`)), "no rule was saved");
    });

    await t.step("a bad decisionClassification is a deny with the reason", async () => {
      const { text } = await askOnce(
        "[[tool:bash:touch refused.txt]]",
        () => ({ behavior: "allow", decisionClassification: "always" }) as never,
      );
      assert.match(
        text,
        /^Tool failed: Denied: the permission handler returned an invalid decision \(allow\.decisionClassification must be "user_temporary", "user_permanent" or "user_reject", got "always"\)$/,
      );
      assert.ok(!(await exists(`${work}/refused.txt`)));
    });

    await t.step("paths outside the work folder: blockedPath, a workingDir reason", async () => {
      const bash = await askOnce(
        `[[tool:bash:cat ${root}/outside.txt]]`,
        () => ({ behavior: "deny", message: "not there", decisionClassification: "user_reject" }),
      );
      assert.equal(bash.request.blockedPath, `${root}/outside.txt`);
      assert.equal(bash.text, "Tool failed: not there");
      assert.deepEqual(recordedDecision(events, bash.request.toolUseId), {
        decision: "reject",
        source: "user_reject",
      });
      const write = await askOnce(
        `[[tool:write:${root}/written.txt:x]]`,
        () => ({ behavior: "deny", message: "not there" }),
      );
      assert.equal(write.request.decisionReason, "Path is outside allowed working directories");
      assert.equal(write.request.decisionReasonType, "workingDir");
      assert.equal(write.request.matchedAskRule, undefined);
      assert.ok(!(await exists(`${root}/written.txt`)));
    });

    await t.step("ask rules on top of the tool's own ask: matchedAskRule", async () => {
      // A dangerous rm (of the sandbox's HOME; denied): its safety check suppresses "always".
      const rm = await askOnce("[[tool:bash:rm -rf ~]]", () => ({
        behavior: "deny",
        message: "never",
      }));
      assert.deepEqual(rm.request.matchedAskRule, {
        source: "flagSettings",
        toolName: "Bash",
        ruleContent: "rm:*",
      });
      assert.equal(rm.request.suppressAlwaysAllowRule, true);
      assert.equal(rm.request.decisionReasonType, "safetyCheck");
      assert.equal(rm.request.decisionReason, `Dangerous rm operation on critical path: ${home}`);
      assert.equal(rm.request.classifierApprovable, false);
      assert.deepEqual(rm.request.suggestions, []);
      assert.ok(await exists(home), "the sandbox HOME is still there");
      // A rule on the whole tool has no ruleContent.
      const read = await askOnce(`[[tool:read:${root}/outside.txt]]`, () => ({
        behavior: "deny",
        message: "no",
      }));
      assert.deepEqual(read.request.matchedAskRule, { source: "flagSettings", toolName: "Read" });
      assert.ok(!("ruleContent" in read.request.matchedAskRule!));
      assert.equal(read.request.decisionReasonType, "workingDir");
    });

    await t.step("MCP tools: the server's name and source (dynamic, sdk)", async () => {
      const external = await askOnce("[[tool:mcp__whisperer__whisper:{}]]", () => ({
        behavior: "allow",
      }));
      assert.deepEqual(external.request.mcpServer, { name: "whisperer", source: "dynamic" });
      assert.equal(external.request.displayName, "Whisper");
      assert.equal(external.request.serverPolicyAskOnly, true);
      assert.match(external.text, /the word is kumquat/);
      const own = await askOnce("[[tool:mcp__inproc__ping:{}]]", () => ({ behavior: "allow" }));
      assert.deepEqual(own.request.mcpServer, { name: "inproc", source: "sdk" });
      assert.equal(own.request.decisionReasonType, "rule");
      assert.equal(own.request.serverPolicyAskOnly, false, "an ask rule asked, not the default");
      assert.equal(own.request.raw.decision_reason_rule_source, "flagSettings");
      assert.match(own.text, /pong/);
    });

    await t.step("a PreToolUse hook that asks: a hook reason", async () => {
      const { request } = await askOnce("[[tool:bash:echo hook-asks]]", () => ({
        behavior: "allow",
      }));
      assert.equal(request.toolName, "Bash");
      assert.equal(request.decisionReason, "the e2e hook wants a person");
      assert.equal(request.decisionReasonType, "hook");
      assert.equal(request.raw.decision_reason_hook_event, "PreToolUse");
    });

    await t.step("none of these asks carries the fields of gated features", () => {
      assert.equal(asked.length, 10);
      for (const request of asked) {
        for (const key of NEVER_SENT) {
          assert.equal(request[key], undefined, `${request.toolName}: ${key} (raw has it?)`);
        }
      }
      assert.ok(api.messageRequests.length > 0);
    });

    await session.close();
    await collecting;
  });
});

e2eTest("a host-worded ask: title, displayName, description, defaultToNo, no always", async (
  t,
  cli,
) => {
  await withSandbox(async ({ work, home, env }) => {
    // The CLI's feature cache, as it writes it: the flag that lets a hook word an ask.
    await Deno.writeTextFile(
      `${home}/.claude.json`,
      JSON.stringify({ cachedGrowthBookFeatures: { tengu_linear_owl: true } }),
    );
    const asked: PermissionRequest[] = [];
    const display = {
      title: "Claude wants to create worded.txt",
      description: "An empty file in the work folder",
      displayName: "Create file",
    };
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, {
        work,
        env: { ...env, CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF: "1" },
      }),
      hooks: {
        PreToolUse: [{
          matcher: "Bash",
          run: () => ({
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "ask",
              permissionDecisionReason: "the host asks in its own words",
              permissionDisplay: display,
            },
          }),
        }],
      },
      onPermission: (request) => {
        asked.push(request);
        return { behavior: "allow", decisionClassification: "user_temporary" };
      },
    });
    const info = await session.initialized;
    assert.equal(info?.raw.host_worded_asks, true, "the flag is on: the CLI reads the words");

    await t.step("the ask carries the host's words and the CLI's care", async () => {
      const turn = await session.send("[[tool:bash:touch worded.txt]]", TURN);
      assert.equal(asked.length, 1);
      const [request] = asked;
      assert.equal(request!.title, display.title);
      assert.equal(request!.displayName, display.displayName);
      assert.equal(request!.description, display.description);
      assert.equal(request!.defaultToNo, true);
      assert.equal(request!.suppressAlwaysAllowRule, true);
      assert.equal(request!.requiresUserInteraction, true);
      assert.equal(request!.decisionReasonType, "hook");
      assert.equal(request!.decisionReason, "the host asks in its own words");
      // An answer to the card approves it: the tool ran.
      assert.equal(turn.result.text, "Tool said: (Bash completed with no output)");
      assert.ok(await exists(`${work}/worded.txt`));
    });
  });
});
