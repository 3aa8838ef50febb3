import assert from "node:assert/strict";
import { DuplexSession, type HookEvent, type HooksOptions } from "../../mod.ts";
import type { HookInputs, HookOutput } from "../../src/protocol/mod.ts";
import { HOOK_EVENTS, registerHooks } from "../../src/hooks/hooks.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { SDK_PREFIX_ENV, sdkPackageDir } from "../bench/install_sdk.ts";
import { sdkHookEvents } from "../../.ci/_latest_catalogue.ts";

/**
 * `HOOK_EVENTS` of `@anthropic-ai/claude-agent-sdk` 0.3.332 (`sdk.d.ts`), in its order; with
 * `CLAUDE_SDK_PREFIX` set (the drift watch), those of the SDK installed there.
 */
const SDK_HOOK_EVENTS = Deno.env.get(SDK_PREFIX_ENV)
  ? sdkHookEvents(Deno.readTextFileSync(`${sdkPackageDir()}/sdk.d.ts`))
  : (
    "PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification UserPromptSubmit " +
    "UserPromptExpansion SessionStart SessionEnd Stop StopFailure SubagentStart SubagentStop " +
    "PreCompact PostCompact PreModelSwitch PostModelSwitch PermissionRequest PermissionDenied " +
    "Setup TeammateIdle TaskCreated TaskCompleted Elicitation ElicitationResult ConfigChange " +
    "WorktreeCreate WorktreeRemove InstructionsLoaded CwdChanged FileChanged DirectoryAdded " +
    "MessageDisplay PreSkillShellCommand"
  ).split(" ");

function recordedCallbacks(): { request_id: string; request: Record<string, unknown> }[] {
  const url = new URL("../protocol/fixtures/hook-callbacks-2.1.332.ndjson", import.meta.url);
  return Deno.readTextFileSync(url).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

Deno.test({
  name: "HOOK_EVENTS lists the 34 events of the official SDK, in its order",
  permissions: "none",
  fn() {
    assert.deepEqual([...HOOK_EVENTS], SDK_HOOK_EVENTS);
    assert.ok(Object.isFrozen(HOOK_EVENTS));
  },
});

Deno.test({
  name: "registerHooks() registers every event and sends onFailure and timeouts",
  permissions: "none",
  fn() {
    const hooks: Record<string, unknown> = {};
    for (const event of HOOK_EVENTS) hooks[event] = [{ run: () => {} }];
    const all = registerHooks(hooks as HooksOptions);
    assert.equal(Object.keys(all.initialize).length, 34);
    assert.equal(all.callbacks.size, 34);

    const registry = registerHooks({
      PreToolUse: [{ matcher: "Bash", onFailure: "block", timeoutMs: 1500, run: () => {} }],
      Stop: [{ onFailure: "continue", timeoutMs: Infinity, run: [() => {}, () => {}] }],
    });
    assert.deepEqual(registry.initialize, {
      PreToolUse: [{
        matcher: "Bash",
        hookCallbackIds: ["hook_0"],
        timeout: 2,
        onFailure: "block",
      }],
      Stop: [{ hookCallbackIds: ["hook_1", "hook_2"], onFailure: "continue" }],
    });
  },
});

Deno.test({
  name: 'registerHooks() lists the events with a matcher that asks for onFailure: "block"',
  permissions: "none",
  fn() {
    const registry = registerHooks({
      Stop: [{ run: () => {}, onFailure: "block" }],
      PreToolUse: [{ run: () => {} }, { matcher: "Bash", run: () => {}, onFailure: "block" }],
      PostToolUse: [{ run: () => {}, onFailure: "continue" }],
      Notification: [{ run: () => {} }],
    });
    assert.deepEqual(registry.blocking, ["Stop", "PreToolUse"]);
    assert.deepEqual(registerHooks({ Stop: [{ run: () => {} }] }).blocking, []);
  },
});

Deno.test({
  name: "registerHooks() throws a TypeError naming the bad entry",
  permissions: "none",
  async fn(t) {
    const cases: [string, unknown, RegExp][] = [
      ["an unknown event", { PreTooluse: [{ run: () => {} }] }, /"PreTooluse" is not a hook event/],
      ["matchers not an array", { Stop: { run: () => {} } }, /hooks\.Stop must be an array/],
      ["no function", { Stop: [{}] }, /hooks\.Stop\[0\]\.run must be a function/],
      ["an empty run list", { Stop: [{ run: [] }] }, /hooks\.Stop\[0\]\.run/],
      ["a bad onFailure", { Stop: [{ run: () => {}, onFailure: "halt" }] }, /onFailure must be/],
      ["a zero timeout", { Stop: [{ run: () => {}, timeoutMs: 0 }] }, /timeoutMs must be/],
      ["a NaN timeout", { Stop: [{ run: () => {}, timeoutMs: NaN }] }, /timeoutMs must be/],
      ["a numeric matcher", { Stop: [{ run: () => {}, matcher: 5 }] }, /matcher must be a string/],
      ["not an object", null, /hooks must be an object/],
    ];
    for (const [label, hooks, message] of cases) {
      await t.step(label, () => {
        assert.throws(() => registerHooks(hooks as HooksOptions), TypeError);
        assert.throws(() => registerHooks(hooks as HooksOptions), message);
      });
    }
  },
});

Deno.test({
  name: "hook outputs are typed per event",
  permissions: "none",
  fn() {
    const allow: HookOutput<"PreToolUse"> = {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" },
    };
    const decide: HookOutput<"PermissionRequest"> = {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no", interrupt: true },
      },
    };
    const untagged: HookOutput<"Stop"> = { hookSpecificOutput: { anything: 1 } };
    const typo: HookOutput<"PreToolUse"> = {
      // @ts-expect-error: not a decision PreToolUse takes
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "alow" },
    };
    const undecided: HookOutput<"PermissionRequest"> = {
      // @ts-expect-error: PermissionRequest's output needs a decision
      hookSpecificOutput: { hookEventName: "PermissionRequest" },
    };
    // @ts-expect-error: SessionEnd takes no specific output
    const none: HookOutput<"SessionEnd"> = { hookSpecificOutput: { hookEventName: "SessionEnd" } };
    assert.ok([allow, decide, untagged, typo, undecided, none].every((o) => o.hookSpecificOutput));
  },
});

Deno.test("hook functions get the inputs Claude Code 2.1.332 sent, typed per event", async () => {
  const recorded = recordedCallbacks();
  const seen = new Map<string, Record<string, unknown>>();
  const hooks: Record<string, unknown> = {};
  for (const event of HOOK_EVENTS) {
    hooks[event] = [{
      onFailure: event === "PreToolUse" ? "block" : undefined,
      run: (input: HookInputs[HookEvent]) => {
        seen.set(input.hook_event_name, input);
      },
    }];
  }
  const cli = new ScriptedCli({ echo: true });
  await using session = await DuplexSession.start({
    transport: cli.transport,
    hooks: hooks as HooksOptions,
  });
  const turn = session.send("hi");
  const init = cli.received.find((f) => f.type === "control_request") as {
    request_id: string;
    request: { hooks: Record<string, { hookCallbackIds: string[]; onFailure?: string }[]> };
  };
  assert.equal(init.request.hooks.PreToolUse?.[0]?.onFailure, "block");
  assert.equal(init.request.hooks.Stop?.[0]?.onFailure, undefined);
  for (const frame of recorded) {
    const input = frame.request.input as { hook_event_name: HookEvent };
    const id = init.request.hooks[input.hook_event_name]?.[0]?.hookCallbackIds[0];
    assert.ok(id, input.hook_event_name);
    cli.emit({ ...frame, request: { ...frame.request, callback_id: id } });
  }
  await turn;
  await waitFor(() => seen.size === recorded.length);
  const pre = seen.get("PreToolUse") as HookInputs["PreToolUse"] | undefined;
  assert.equal(pre?.tool_name, "Bash");
  assert.equal(typeof pre?.tool_input.command, "string");
  const failure = seen.get("PostToolUseFailure") as HookInputs["PostToolUseFailure"];
  assert.match(failure.error, /Exit code 3|File does not exist/);
  const batch = seen.get("PostToolBatch") as HookInputs["PostToolBatch"];
  assert.equal(batch.tool_calls[0]?.tool_use_id, pre?.tool_use_id);
  const stop = seen.get("SubagentStop") as HookInputs["SubagentStop"];
  assert.ok(stop.agent_transcript_path.endsWith(".jsonl"));
  const compact = seen.get("PreCompact") as HookInputs["PreCompact"];
  assert.equal(compact.trigger, "manual");
  assert.equal(compact.custom_instructions, null);
  const start = seen.get("SessionStart") as HookInputs["SessionStart"];
  assert.equal(start.source, "compact");
  const display = seen.get("MessageDisplay") as HookInputs["MessageDisplay"];
  assert.equal(typeof display.final, "boolean");
});

async function waitFor(done: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("Cannot see the hooks run: timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
