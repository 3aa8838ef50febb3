/**
 * End-to-end: hook functions, typed frames, typed control replies and an
 * in-process MCP tool described by a zod schema, against the real `claude`
 * CLI (2.1.332) and the fake Messages API. Every hook event the fake API can
 * make the CLI fire is registered through `DuplexSession.start({ hooks })`
 * and asserted with its typed input. Not reachable offline: Notification
 * (a headless session sends none), SessionStart with source `"startup"` (it
 * fires before `initialize` registers the host's hooks), and the events that
 * need teammates, worktrees, elicitations, watched files or model switches.
 *
 * On a CLI older than blocking hooks need (`CLI_FEATURES.blockingHooks`, an
 * older version of the support window), the session runs without the
 * `onFailure: "block"` hook, and a second session checks that asking for one
 * fails the start with `unsupported` instead of running unprotected.
 *
 * @module
 */

import assert from "node:assert/strict";
import { z } from "npm:zod@4.6.7";
import {
  DuplexSession,
  type HookEvent,
  type HooksOptions,
  isDuplexError,
  mcpServer,
  type SessionEvent,
  tool,
} from "../../mod.ts";
import { type HookInputs, isSystemFrame } from "../../src/protocol/mod.ts";
import { CLI_FEATURES } from "../../src/compat/cli_features.ts";
import {
  cliAtLeast,
  cliVersion,
  e2eTest,
  sandboxedCli,
  stepSince,
  withSandbox,
} from "./_harness.ts";

const TURN = { timeoutMs: 40_000 } as const;
const CONTROL = { timeoutMs: 10_000 } as const;

/** The events the fake API makes the CLI fire. */
const REACHABLE: readonly HookEvent[] = [
  "UserPromptSubmit",
  "MessageDisplay",
  "Stop",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "SessionStart",
];

/** A PreToolUse hook on Read that throws, set to block. */
function blockingReadHook() {
  return {
    matcher: "Read",
    onFailure: "block" as const,
    run: () => {
      throw new Error("the e2e hook failed on purpose");
    },
  };
}

class Seen {
  readonly inputs: Record<string, unknown>[] = [];
  of<E extends HookEvent>(event: E): HookInputs[E][] {
    return this.inputs.filter((i) => i.hook_event_name === event) as HookInputs[E][];
  }
  last<E extends HookEvent>(event: E): HookInputs[E] {
    const found = this.of(event).at(-1);
    assert.ok(found, `the ${event} hook fired`);
    return found;
  }
  clear(): void {
    this.inputs.length = 0;
  }
}

e2eTest("hooks: every reachable event fires its typed function on the real CLI", async (t, cli) => {
  await withSandbox(async ({ work, env }) => {
    await Deno.writeTextFile(`${work}/hello.txt`, "hello file\n");
    const seen = new Seen();
    const hooks: Record<string, unknown> = {};
    for (const event of REACHABLE) {
      hooks[event] = [{ run: (input: Record<string, unknown>) => void seen.inputs.push(input) }];
    }
    // A failing hook on Read, set to block: the CLI must block the Read (when it can).
    const blocking = cliAtLeast(CLI_FEATURES.blockingHooks.since);
    if (blocking) (hooks.PreToolUse as unknown[]).push(blockingReadHook());
    const adder = tool(
      "add",
      "Adds two numbers",
      z.object({ a: z.number(), b: z.number() }),
      ({ a, b }) => `${a + b}`,
    );
    const events: SessionEvent[] = [];
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
      hooks: hooks as HooksOptions,
      mcpServers: { zcalc: mcpServer({ name: "zcalc", tools: [adder] }) },
      onPermission: () => ({ behavior: "allow" }),
    });
    const sub = session.subscribe({ capacity: 4096 });
    const collecting = (async () => {
      for await (const event of sub) events.push(event);
    })();

    await t.step("a plain turn: UserPromptSubmit, MessageDisplay, Stop", async () => {
      const turn = await session.send("hello hooks", TURN);
      assert.equal(turn.result.text, "Echo: hello hooks");
      const prompt = seen.last("UserPromptSubmit");
      assert.equal(prompt.prompt, "hello hooks");
      assert.equal(prompt.session_id, session.sessionId);
      assert.equal(prompt.cwd, work);
      assert.ok(prompt.transcript_path.endsWith(".jsonl"));
      const display = seen.last("MessageDisplay");
      assert.equal(display.delta, "Echo: hello hooks");
      assert.equal(display.final, true);
      const stop = seen.last("Stop");
      assert.equal(stop.stop_hook_active, false);
      assert.equal(stop.last_assistant_message, "Echo: hello hooks");
      assert.deepEqual(stop.background_tasks, []);
    });

    await t.step(
      "a tool that runs: PreToolUse, PermissionRequest, PostToolUse, PostToolBatch",
      async () => {
        seen.clear();
        const turn = await session.send("[[tool:bash:touch ran.txt && echo hooks-e2e-ran]]", TURN);
        assert.equal(turn.result.text, "Tool said: hooks-e2e-ran");
        const pre = seen.last("PreToolUse");
        assert.equal(pre.tool_name, "Bash");
        assert.equal(pre.tool_input.command, "touch ran.txt && echo hooks-e2e-ran");
        assert.match(pre.tool_use_id, /^toolu_/);
        const asked = seen.last("PermissionRequest");
        assert.equal(asked.tool_name, "Bash");
        assert.ok(Array.isArray(asked.permission_suggestions));
        const post = seen.last("PostToolUse");
        assert.equal(post.tool_use_id, pre.tool_use_id);
        assert.equal((post.tool_response as { stdout?: string }).stdout, "hooks-e2e-ran");
        const batch = seen.last("PostToolBatch");
        assert.deepEqual(batch.tool_calls.map((c) => c.tool_use_id), [pre.tool_use_id]);
      },
    );

    await t.step("a tool that fails: PostToolUseFailure", async () => {
      seen.clear();
      const turn = await session.send("[[tool:bash:exit 3]]", TURN);
      assert.equal(turn.result.text, "Tool failed: Exit code 3");
      const failure = seen.last("PostToolUseFailure");
      assert.equal(failure.tool_name, "Bash");
      assert.equal(failure.error, "Exit code 3");
      assert.equal(failure.is_interrupt, false);
      assert.equal(seen.of("PostToolUse").length, 0, "no PostToolUse for a failed tool");
    });

    if (!blocking) {
      await t.step(
        `onFailure: block on claude ${cliVersion()}: the start fails unsupported, nothing runs`,
        async () => {
          await withSandbox(async (other) => {
            const ran: string[] = [];
            const error = await (async () => {
              await using blocked = await DuplexSession.start({
                transport: sandboxedCli(cli, { work: other.work, env: other.env }),
                hooks: { PreToolUse: [blockingReadHook()] },
                onPermission: (request) => {
                  ran.push(request.toolName);
                  return { behavior: "allow" };
                },
              });
              await blocked.send("[[tool:read:hello.txt]]", TURN);
            })().then(() => undefined, (e: unknown) => e);
            assert.ok(isDuplexError(error, "unsupported"), `unsupported, got ${error}`);
            assert.match(error.message, /hook_on_failure_supported/);
            assert.equal(other.api.messageRequests.length, 0, "no prompt reached the model");
            assert.deepEqual(ran, []);
          });
        },
      );
    }

    await stepSince(
      t,
      CLI_FEATURES.blockingHooks.since,
      'hook_on_failure_supported (onFailure: "block")',
      "onFailure: block: a throwing PreToolUse hook blocks the tool",
      async () => {
        seen.clear();
        const turn = await session.send("[[tool:read:hello.txt]]", TURN);
        assert.match(
          turn.result.text,
          /^Tool failed: PreToolUse:Read hook error: .*onFailure is "block"/,
        );
        const warning = turn.events.find((e) => isSystemFrame(e, "informational"));
        assert.ok(warning && isSystemFrame(warning, "informational"), "a typed warning frame");
        assert.equal(warning.tag, "hook_callback_failed");
        assert.equal(warning.level, "warning");
        assert.equal(seen.of("PostToolUse").length, 0, "the Read never ran");
      },
    );

    await t.step(
      "/compact: PreCompact, PostCompact, SessionStart (compact), compact_boundary",
      async () => {
        seen.clear();
        await session.send("/compact", TURN);
        const pre = seen.last("PreCompact");
        assert.equal(pre.trigger, "manual");
        assert.equal(pre.custom_instructions, null);
        const post = seen.last("PostCompact");
        assert.equal(post.trigger, "manual");
        assert.equal(typeof post.compact_summary, "string");
        assert.equal(seen.last("SessionStart").source, "compact");
        const boundary = events.find((e) => isSystemFrame(e, "compact_boundary"));
        assert.ok(boundary && isSystemFrame(boundary, "compact_boundary"));
        assert.equal(boundary.compact_metadata.trigger, "manual");
      },
    );

    await t.step("an in-process MCP tool with a zod schema", async () => {
      const ok = await session.send('[[tool:mcp__zcalc__add:{"a":2,"b":3}]]', TURN);
      assert.equal(ok.result.text, "Tool said: 5");
      const bad = await session.send('[[tool:mcp__zcalc__add:{"a":"two","b":3}]]', TURN);
      assert.match(
        bad.result.text,
        /^Tool failed: Invalid input for tool add:\n- \/a: .*expected number/,
      );
      // The CLI listed the tool (its tools/list entry carries the JSON Schema zod derived).
      const init = ok.events.find((e) => isSystemFrame(e, "init"));
      assert.ok(init && isSystemFrame(init, "init") && init.tools?.includes("mcp__zcalc__add"));
    });

    await t.step("a sub-agent: SubagentStart, SubagentStop and the task frames", async () => {
      seen.clear();
      const input = {
        description: "e2e task",
        prompt: "sub agent says hi",
        "subagent_type": "general-purpose",
      };
      await session.send(`[[tool:Agent:${JSON.stringify(input)}]]`, TURN);
      // The CLI runs it in the background: its end can come after the turn's result.
      const deadline = Date.now() + 20_000;
      while (seen.of("SubagentStop").length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Its end starts a turn of the CLI's own (the task notification): let it finish too.
      while (seen.of("Stop").length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const start = seen.last("SubagentStart");
      assert.equal(start.agent_type, "general-purpose");
      const stop = seen.last("SubagentStop");
      assert.equal(stop.agent_id, start.agent_id);
      assert.equal(stop.last_assistant_message, "Echo: sub agent says hi");
      const started = events.find((e) => isSystemFrame(e, "task_started"));
      assert.ok(started && isSystemFrame(started, "task_started"));
      assert.equal(started.task_id, start.agent_id);
      assert.equal(started.description, "e2e task");
    });

    await t.step("typed control replies", async () => {
      const file = await session.request("read_file", { path: "hello.txt" }, CONTROL);
      assert.equal(file.contents, "hello file\n");
      assert.equal(file.absPath, `${work}/hello.txt`);
      const b64 = await session.request("read_file", {
        path: "hello.txt",
        encoding: "base64",
        max_bytes: 3,
      }, CONTROL);
      assert.deepEqual([b64.contents, b64.encoding, b64.truncated], ["aGVs", "base64", true]);
      const known = await session.request("set_mcp_permission_mode_override", {
        serverName: "zcalc",
        mode: "default",
      }, CONTROL);
      assert.equal(known.warning, undefined);
      const unknown = await session.request("set_mcp_permission_mode_override", {
        serverName: "nosuch",
        mode: null,
      }, CONTROL);
      assert.match(unknown.warning ?? "", /not known/);
      const background = await session.request(
        "background_tasks",
        { tool_use_id: "toolu_none" },
        CONTROL,
      );
      assert.equal(background.backgrounded, false);
      const styles = await session.request("reload_output_styles", {}, CONTROL);
      assert.ok(styles.available_output_styles.includes("default"));
      const skills = await session.request("reload_skills", {}, CONTROL);
      assert.ok(Array.isArray(skills.skills));
      const plugins = await session.request("reload_plugins", {}, CONTROL);
      assert.equal(typeof plugins.error_count, "number");
      assert.ok(plugins.mcpServers.some((s) => s.name === "zcalc"));
      const usage = await session.request("get_usage", { skip_behaviors: true }, CONTROL);
      assert.equal(typeof usage.session.total_cost_usd, "number");
      assert.equal(usage.rate_limits_available, false);
      assert.deepEqual(
        await session.request(
          "apply_flag_settings",
          { settings: { effortLevel: "high" } },
          CONTROL,
        ),
        {},
      );
      const mtime = Math.floor((await Deno.stat(`${work}/hello.txt`)).mtime?.getTime() ?? 0);
      assert.deepEqual(
        await session.request("seed_read_state", { path: `${work}/hello.txt`, mtime }, CONTROL),
        {},
      );
      assert.deepEqual(
        await session.request("stop_task", { task_id: "no-such-task" }, CONTROL),
        {},
      );
    });

    await session.close();
    await collecting;
    const unknownFrames = events.filter((e) => e.type === "unknown");
    assert.deepEqual(unknownFrames, [], "every frame the CLI wrote is typed");
  });
});
