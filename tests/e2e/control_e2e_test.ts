/**
 * End-to-end scenarios of the control side of {@linkcode DuplexSession}
 * (`initialize` options, hooks, in-process MCP tools, permission mode, model
 * switch, status requests) over the subprocess transport, against the real
 * `claude` CLI and the fake Messages API. Each scenario checks what the user
 * sees (turns, events, replies, errors) and what reached the model (the fake
 * API's request log). One session serves every step: the CLI starts once.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  allow,
  deny,
  DuplexSession,
  isDuplexError,
  mcpServer,
  type PermissionHandler,
  type PermissionRequest,
  type SessionEvent,
  tool,
} from "../../mod.ts";
import type { HookOutput } from "../../src/protocol/mod.ts";
import {
  CLI_CHANGES,
  cliAtLeast,
  cliVersion,
  e2eTest,
  exists,
  processAlive,
  sandboxedCli,
  waitUntil,
  withSandbox,
} from "./_harness.ts";
import type { FakeApi, FakeApiRequest } from "./fake_api.ts";

/** Bound on every turn: a hung turn fails its step (interrupted) instead of hanging the suite. */
const TURN = { timeoutMs: 20_000 } as const;
/** Bound on every control request of ours. */
const CONTROL = { timeoutMs: 10_000 } as const;

const CUSTOM_PROMPT = "You are the duplex e2e assistant. MARKER-SYSTEM-7f3a";
const APPENDED_PROMPT = "Always end with MARKER-APPEND-91c2.";
const AGENT = "e2e-reviewer";
const SERVER = "calc";
const MCP_TOOL = `mcp__${SERVER}__add`;

/** The request's system prompt, as one text. */
function systemText(request: FakeApiRequest): string {
  const body = request.body as { system?: unknown } | null;
  const system = body?.system;
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system.map((block) => (block as { text?: string }).text ?? "").join("\n");
}

function permissionRequests(events: readonly SessionEvent[]): SessionEvent[] {
  return events.filter((event) => event.type === "permission_request");
}

/** The only request (past or future) whose prompt is `prompt`. */
async function requestFor(api: FakeApi, prompt: string): Promise<FakeApiRequest> {
  const request = await api.waitForRequest((r) => r.prompt === prompt);
  assert.equal(api.messageRequests.filter((r) => r.prompt === prompt).length, 1, prompt);
  return request;
}

e2eTest(
  "DuplexSession + subprocess: initialize options, hooks, MCP tools, control requests",
  async (t, cli) => {
    await withSandbox(async ({ api, work, env }) => {
      const asked: PermissionRequest[] = [];
      let decide: PermissionHandler = () => deny("No decision was scripted for this step");
      /** What the PreToolUse hook answers: nothing (`undefined`), or this output. */
      let preToolUse: HookOutput | undefined;
      const preToolUseInputs: Record<string, unknown>[] = [];
      const preToolUseIds: (string | undefined)[] = [];
      /** The context the UserPromptSubmit hook adds, when set. */
      let context: string | undefined;
      const promptsSubmitted: string[] = [];
      /** Permission asks and MCP handler runs, in order. */
      const order: string[] = [];
      const handled: Record<string, unknown>[] = [];
      const handledIds: (string | undefined)[] = [];

      const add = tool(
        "add",
        "Adds two numbers",
        {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } },
          required: ["a", "b"],
        },
        (input, { toolUseId }) => {
          handled.push(input);
          handledIds.push(toolUseId);
          order.push("handler");
          return `sum=${Number(input.a) + Number(input.b)}`;
        },
      );

      await using session = await DuplexSession.start({
        transport: sandboxedCli(cli, { work, env }),
        systemPrompt: CUSTOM_PROMPT,
        appendSystemPrompt: APPENDED_PROMPT,
        agents: {
          [AGENT]: {
            description: "Reviews e2e changes",
            prompt: "You review changes made by the e2e tests.",
          },
        },
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            run: (input, { toolUseId }) => {
              preToolUseInputs.push(input);
              preToolUseIds.push(toolUseId);
              return preToolUse;
            },
          }],
          UserPromptSubmit: [{
            run: (input) => {
              promptsSubmitted.push(input.prompt);
              if (context === undefined) return;
              return {
                hookSpecificOutput: {
                  hookEventName: "UserPromptSubmit",
                  additionalContext: context,
                },
              };
            },
          }],
        },
        mcpServers: [mcpServer({ name: SERVER, tools: [add] })],
        onPermission: (request) => {
          asked.push(request);
          order.push(`permission:${request.toolName}`);
          return decide(request);
        },
      });
      const pid = session.pid;
      assert.ok(pid !== undefined && await processAlive(pid), "the CLI runs");

      await t.step("initialize: systemPrompt, appendSystemPrompt and agents", async () => {
        const info = await session.initialized;
        assert.ok(info !== undefined, "initialize was sent and answered");
        assert.equal(session.info, info);
        if (cliAtLeast(CLI_CHANGES.initializeVersion)) assert.equal(info.version, cliVersion(cli));
        else assert.ok([undefined, cliVersion(cli)].includes(info.version), `${info.version}`);
        assert.ok(info.agents.includes(AGENT), `agents: ${info.agents.join(", ")}`);
        assert.ok(info.models.length > 0, "the CLI offers models");
        assert.equal(info.pid, pid);

        const turn = await session.send("hello with a custom prompt", TURN);
        assert.equal(turn.result.text, "Echo: hello with a custom prompt");
        assert.equal(turn.result.isError, false);
        const request = await requestFor(api, "hello with a custom prompt");
        const system = systemText(request);
        assert.ok(system.includes(CUSTOM_PROMPT), `system prompt: ${system.slice(0, 500)}`);
        assert.ok(system.includes(APPENDED_PROMPT), "the appended text reached the model");
        assert.ok(
          system.indexOf(APPENDED_PROMPT) > system.indexOf(CUSTOM_PROMPT),
          "the appended text comes after the custom prompt",
        );
        // The in-process MCP tool is offered to the model.
        // The agent and the in-process MCP tool are announced to the model (2.1.332 defers MCP
        // tools: listed by name in a reminder, not in `tools`).
        const body = JSON.stringify(request.body);
        assert.ok(body.includes(AGENT), "the agent is announced");
        assert.ok(body.includes(MCP_TOOL), "the MCP tool is announced");
      });

      await t.step("a PreToolUse hook that allows: the tool runs unasked", async () => {
        preToolUse = {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "allow",
            permissionDecisionReason: "The e2e hook allows it",
          },
        };
        asked.length = 0;
        preToolUseInputs.length = 0;
        preToolUseIds.length = 0;
        const command = "touch hook-allowed.txt && echo hook-allowed-ran";
        const turn = await session.send(`[[tool:bash:${command}]]`, TURN);
        assert.equal(turn.result.text, "Tool said: hook-allowed-ran");
        assert.equal(turn.result.isError, false);
        assert.ok(await exists(`${work}/hook-allowed.txt`), "the tool ran");
        assert.equal(asked.length, 0, "onPermission was not called");
        assert.equal(permissionRequests(turn.events).length, 0, "no permission_request event");
        assert.equal(preToolUseInputs.length, 1);
        assert.equal(preToolUseInputs[0]?.hook_event_name, "PreToolUse");
        assert.equal(preToolUseInputs[0]?.tool_name, "Bash");
        assert.equal((preToolUseInputs[0]?.tool_input as { command?: string }).command, command);
        const followUp = await api.waitForRequest((r) =>
          r.toolResults.some((x) => x.content === "hook-allowed-ran")
        );
        assert.equal(followUp.toolResults[0]?.isError, false);
        // The hook's context names the tool use the model asked for.
        assert.equal(preToolUseIds[0], followUp.toolResults[0]?.toolUseId);
        assert.equal(preToolUseInputs[0]?.tool_use_id, preToolUseIds[0]);
      });

      await t.step(
        "a PreToolUse hook that denies: no run, the reason reaches the model",
        async () => {
          const reason = "Blocked by the e2e PreToolUse hook: no touching";
          preToolUse = {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: reason,
            },
          };
          asked.length = 0;
          preToolUseInputs.length = 0;
          const turn = await session.send(
            "[[tool:bash:touch hook-denied.txt && echo denied]]",
            TURN,
          );
          assert.equal(turn.result.isError, false);
          // 2.1.332 prefixes the reason: "PreToolUse:Bash hook error: <reason>".
          assert.ok(turn.result.text.startsWith("Tool failed: "), turn.result.text);
          assert.ok(turn.result.text.includes(reason), turn.result.text);
          assert.ok(!(await exists(`${work}/hook-denied.txt`)), "the tool did not run");
          assert.deepEqual(turn.result.permissionDenials.map((d) => d.tool_name), ["Bash"]);
          assert.equal(asked.length, 0, "onPermission was not called");
          assert.equal(preToolUseInputs.length, 1);
          const followUp = await api.waitForRequest((r) =>
            r.toolResults.some((x) => x.content.includes(reason))
          );
          assert.equal(followUp.toolResults[0]?.isError, true);
          preToolUse = undefined;
        },
      );

      await t.step("a UserPromptSubmit hook adds context for the model", async () => {
        const marker = `MARKER-CONTEXT-${crypto.randomUUID()}`;
        context = marker;
        promptsSubmitted.length = 0;
        try {
          const turn = await session.send("prompt with added context", TURN);
          assert.equal(turn.result.text, "Echo: prompt with added context");
        } finally {
          context = undefined;
        }
        assert.deepEqual(promptsSubmitted, ["prompt with added context"]);
        const request = await api.waitForRequest((r) =>
          r.reply !== "other" && JSON.stringify(r.body).includes(marker)
        );
        assert.ok(
          JSON.stringify(request.body).includes("prompt with added context"),
          "the marker went along with the prompt",
        );
        // Before the hook answered with it, no request carried the marker.
        assert.equal(
          api.messageRequests.filter((r) => JSON.stringify(r.body).includes(marker)).length,
          1,
        );
      });

      await t.step(
        "an in-process MCP tool: asked first, run, its result reaches the model",
        async () => {
          decide = (request) =>
            request.toolName === MCP_TOOL ? allow() : deny("Only the MCP tool is allowed here");
          asked.length = 0;
          order.length = 0;
          handled.length = 0;
          handledIds.length = 0;
          const turn = await session.send(`[[tool:${MCP_TOOL}:{"a":2,"b":40}]]`, TURN);
          assert.equal(turn.result.text, "Tool said: sum=42");
          assert.equal(turn.result.isError, false);
          assert.deepEqual(handled, [{ a: 2, b: 40 }]);
          assert.deepEqual(order, [`permission:${MCP_TOOL}`, "handler"]);
          assert.equal(asked[0]?.toolName, MCP_TOOL);
          assert.deepEqual(asked[0]?.input, { a: 2, b: 40 });
          assert.equal(permissionRequests(turn.events).length, 1);
          const followUp = await api.waitForRequest((r) =>
            r.toolResults.some((x) => x.content === "sum=42")
          );
          assert.equal(followUp.toolResults[0]?.isError, false);
          assert.equal(handledIds[0], followUp.toolResults[0]?.toolUseId);
          assert.equal(asked[0]?.toolUseId, handledIds[0]);
        },
      );

      await t.step(
        "an MCP call with schema-invalid input: an error result, no handler run",
        async () => {
          asked.length = 0;
          handled.length = 0;
          const turn = await session.send(`[[tool:${MCP_TOOL}:{"a":"two"}]]`, TURN);
          assert.equal(turn.result.isError, false);
          assert.ok(turn.result.text.startsWith("Tool failed: "), turn.result.text);
          assert.ok(turn.result.text.includes("Invalid input for tool add"), turn.result.text);
          assert.deepEqual(handled, [], "the handler did not run");
          assert.equal(asked.length, 1, "the call was asked for, like a valid one");
          const followUp = await api.waitForRequest((r) =>
            r.toolResults.some((x) => x.content.includes("Invalid input for tool add"))
          );
          const result = followUp.toolResults[0];
          assert.equal(result?.isError, true);
          assert.ok(result?.content.includes("/b: is required but missing"), result?.content);
          assert.ok(result?.content.includes("/a: expected number, got string"), result?.content);
          decide = () => deny("No decision was scripted for this step");
        },
      );

      await t.step(
        "setPermissionMode: acceptEdits writes unasked, default asks again",
        async () => {
          asked.length = 0;
          assert.equal(await session.setPermissionMode("acceptEdits", CONTROL), "acceptEdits");
          const accepted = `${work}/accepted.txt`;
          const first = await session.send(
            `[[tool:write:${accepted}:written in acceptEdits]]`,
            TURN,
          );
          assert.equal(first.result.isError, false);
          assert.ok(first.result.text.startsWith("Tool said: File created"), first.result.text);
          assert.equal(await Deno.readTextFile(accepted), "written in acceptEdits");
          assert.equal(asked.length, 0, "onPermission was not called");
          assert.equal(permissionRequests(first.events).length, 0);

          assert.equal(await session.setPermissionMode("default", CONTROL), "default");
          decide = () => deny("Not in default mode");
          const refused = `${work}/refused.txt`;
          const second = await session.send(`[[tool:write:${refused}:written in default]]`, TURN);
          assert.equal(second.result.text, "Tool failed: Not in default mode");
          assert.equal(asked.length, 1, "the Write asked again");
          assert.equal(asked[0]?.toolName, "Write");
          assert.equal(asked[0]?.input.file_path, refused);
          assert.ok(!(await exists(refused)));
          await api.waitForRequest((r) =>
            r.toolResults.some((x) => x.isError && x.content === "Not in default mode")
          );
          decide = () => deny("No decision was scripted for this step");
        },
      );

      await t.step("setModel: the next request uses it; null goes back", async () => {
        const defaultModel = api.messageRequests.at(-1)?.model;
        assert.ok(defaultModel, "the requests so far named a model");

        // Before 2.1.307 the reply names no model: setModel resolves undefined, the switch holds.
        const named = cliAtLeast(CLI_CHANGES.setModelReply);
        const resolved = await session.setModel("sonnet", CONTROL);
        if (named) {
          assert.ok(resolved !== undefined && /sonnet/.test(resolved), `resolved: ${resolved}`);
        } else assert.equal(resolved, undefined);
        await session.send("which model now", TURN);
        const switched = (await requestFor(api, "which model now")).model;
        assert.ok(switched !== undefined && /sonnet/.test(switched), `switched: ${switched}`);
        assert.notEqual(switched, defaultModel);
        if (named) assert.equal(switched, resolved);

        assert.equal(await session.setModel(null, CONTROL), named ? defaultModel : undefined);
        await session.send("back to the default model", TURN);
        assert.equal((await requestFor(api, "back to the default model")).model, defaultModel);
      });

      await t.step(
        "mcpServerStatus, getContextUsage, settings, and an unknown request",
        async () => {
          const servers = await session.mcpServerStatus(CONTROL);
          const calc = servers.find((s) => s.name === SERVER);
          assert.ok(calc, `servers: ${JSON.stringify(servers)}`);
          assert.equal(calc.status, "connected");
          // What our server answered to the CLI's MCP `initialize`.
          assert.deepEqual(calc.serverInfo, { name: SERVER, version: "1.0.0" });

          const usage = await session.getContextUsage(CONTROL);
          assert.ok(typeof usage === "object" && usage !== null);
          assert.ok(Array.isArray(usage.categories) && usage.categories.length > 0);
          assert.equal(typeof usage.totalTokens, "number");

          const settings = await session.settings(CONTROL);
          assert.ok(typeof settings === "object" && settings !== null);
          assert.ok(typeof settings.applied === "object" && settings.applied !== null);

          await assert.rejects(
            session.request("definitely_not_a_subtype", {}, CONTROL),
            (error) => {
              assert.ok(isDuplexError(error, "control_failed"), `got ${error}`);
              const coded = cliAtLeast(CLI_CHANGES.controlErrorCode);
              assert.equal(error.errorCode, coded ? "unsupported_request" : undefined);
              assert.equal(error.subtype, "definitely_not_a_subtype");
              return true;
            },
          );
          // The session is still usable after the failed request.
          const turn = await session.send("still alive after the unknown request", TURN);
          assert.equal(turn.result.text, "Echo: still alive after the unknown request");
          assert.equal(session.pid, pid);
        },
      );

      await t.step("close ends the CLI", async () => {
        const status = await session.close();
        assert.equal(status.state, "completed");
        await waitUntil(async () => !(await processAlive(pid)), "the CLI process gone", 5_000);
      });
    });
  },
);
