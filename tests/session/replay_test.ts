/**
 * The session against recorded real CLI 2.1.332 sessions: the replay checks
 * every line the session writes against what the recorded host wrote, and
 * these tests check what the session makes of the CLI's output.
 */
import assert from "node:assert/strict";
import {
  allow,
  deny,
  DuplexSession,
  type DuplexSessionOptions,
  type SessionEvent,
  type Subscription,
} from "../../mod.ts";
import { loadTranscript, replay, type ReplayOptions } from "../../src/testing/mod.ts";
import { eventsUntil } from "./_helpers.ts";

async function withReplay(
  name: string,
  script: (session: DuplexSession, sub: Subscription<SessionEvent>) => Promise<void>,
  options: Omit<DuplexSessionOptions, "transport"> = {},
  replayOptions: ReplayOptions = {},
): Promise<void> {
  const entries = await loadTranscript(
    new URL(`../fixtures/transcripts/${name}.ndjson`, import.meta.url),
  );
  const cli = replay(entries, replayOptions);
  const session = await DuplexSession.start({ transport: cli.transport, ...options });
  const sub = session.subscribe({ capacity: 10_000 });
  try {
    await script(session, sub);
  } finally {
    await session.close();
    sub.unsubscribe();
  }
  await cli.done;
  assert.deepEqual(cli.mismatches, [], `the session wrote what the recorded host wrote (${name})`);
  assert.equal(session.exitStatus.state, "completed");
}

function texts(events: readonly SessionEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === "assistant"
      ? e.message.content.flatMap((b) => b.type === "text" ? [b.text] : [])
      : []
  );
}

Deno.test("replay 01: two turns on one process", async () => {
  await withReplay("01-duplex-two-turns", async (session) => {
    const first = await session.send("first turn");
    assert.equal(first.result.text, "Echo: first turn");
    assert.equal(session.sessionId, "20ca83b3-e26d-448f-9550-559a29e8ac31");
    const lifecycle = first.events.filter((e) => e.type === "command_lifecycle");
    assert.deepEqual(lifecycle.map((e) => e.type === "command_lifecycle" && e.state), [
      "queued",
      "started",
    ]);
    assert.ok(
      lifecycle.every((e) => e.type === "command_lifecycle" && e.command_uuid === first.uuid),
      "recorded uuids map onto ours",
    );
    const second = await session.send("second turn");
    assert.equal(second.result.text, "Echo: second turn");
    assert.equal(second.result.totalCostUsd, 0.000616);
    assert.equal(second.result.costUsd, 0.000308);
    assert.deepEqual(texts(second.events), ["Echo: second turn"]);
  });
});

Deno.test("replay 03: allow, then allow with a rewritten input", async () => {
  let calls = 0;
  await withReplay("03-can-use-tool-allow", async (session) => {
    const first = await session.send("please run [[tool:bash]]");
    assert.equal(first.result.isError, false);
    const request = first.events.find((e) => e.type === "permission_request");
    assert.ok(request?.type === "permission_request");
    assert.equal(request.request.toolName, "Bash");
    assert.equal(request.request.blockedPath, "/home/user/project/tool-marker.txt");
    assert.equal(request.request.suggestions.length, 3);
    const toolResult = first.events.find((e) => e.type === "user");
    assert.match(JSON.stringify(toolResult), /hello-from-tool/);
    const second = await session.send("again please [[tool:bash]]");
    assert.match(JSON.stringify(second.events), /rewritten-by-host/);
  }, {
    onPermission: () =>
      ++calls === 1
        ? allow()
        : allow({ command: "echo rewritten-by-host", description: "rewritten" }),
  });
  assert.equal(calls, 2);
});

Deno.test("replay 04: deny, deny with interrupt, then a normal turn", async () => {
  let calls = 0;
  await withReplay("04-can-use-tool-deny", async (session) => {
    const denied = await session.send("please run [[tool:bash]]");
    assert.equal(denied.result.isError, false);
    assert.equal(denied.result.permissionDenials.length, 1);
    assert.equal(denied.result.permissionDenials[0]?.tool_name, "Bash");
    const interrupted = await session.send("again please [[tool:bash]]");
    assert.equal(interrupted.result.isError, true);
    assert.equal(interrupted.result.subtype, "error_during_execution");
    assert.equal(interrupted.result.terminalReason, "aborted_tools");
    const alive = await session.send("still alive?");
    assert.equal(alive.result.isError, false);
  }, {
    onPermission: () =>
      ++calls === 1
        ? deny("Denied by the test host")
        : deny("Denied and interrupted by the test host", { interrupt: true }),
  });
});

Deno.test("replay 05: an AbortSignal interrupts a streaming turn", async () => {
  await withReplay("05-interrupt-mid-stream", async (session, sub) => {
    const controller = new AbortController();
    const turn = session.send("please [[stall]]", { signal: controller.signal });
    await eventsUntil(sub, (e) => e.type === "stream_event");
    const reason = new Error("stop streaming");
    controller.abort(reason);
    await assert.rejects(turn, (e) => e === reason);
    const rest = await eventsUntil(sub, (e) => e.type === "result");
    const result = rest.at(-1);
    assert.ok(result?.type === "result" && result.subtype === "error_during_execution");
    assert.equal(result.terminal_reason, "aborted_streaming");
    assert.ok(
      rest.some((e) => e.type === "assistant" && e.aborted === true),
      "the partial message is flagged",
    );
    const after = await session.send("after interrupt");
    assert.equal(after.result.isError, false);
  });
});

Deno.test("replay 06: partial messages arrive as stream_event frames", async () => {
  await withReplay("06-partial-messages", async (session) => {
    const turn = await session.send("stream this [[slow]]", { collectEvents: "all" });
    const deltas = turn.events.flatMap((e) =>
      e.type === "stream_event" && e.event.type === "content_block_delta"
        ? [(e.event.delta as { text?: string }).text ?? ""]
        : []
    );
    assert.ok(deltas.length > 3);
    assert.equal(deltas.join(""), turn.result.text);
    const tool = await session.send("now a tool with partials [[tool:bash-ro]]", {
      collectEvents: "all",
    });
    assert.ok(
      tool.events.some((e) =>
        e.type === "stream_event" && JSON.stringify(e.event).includes("input_json_delta")
      ),
    );
  });
});

Deno.test("replay 07: interrupt while a permission is pending", async () => {
  let signal: AbortSignal | undefined;
  await withReplay("07-interrupt-while-permission-pending", async (session, sub) => {
    const turn = session.send("please run [[tool:bash]]");
    await eventsUntil(sub, (e) => e.type === "permission_request");
    const receipt = await session.interrupt();
    assert.equal(receipt.turnWasRunning, true);
    assert.deepEqual(receipt.stillQueued, []);
    const done = await turn;
    assert.equal(done.result.terminalReason, "aborted_tools");
    assert.equal(signal?.aborted, true, "the CLI's cancel aborted the handler's signal");
    assert.ok(
      done.events.some((e) =>
        e.type === "permission_resolved" && e.behavior === "cancelled" && e.source === "cli"
      ),
    );
    assert.equal(
      await session.respondToPermission("d8ee5c6b-3ded-48ea-a97d-a2d8ecb852be", allow()),
      false,
    );
    assert.equal((await session.send("after interrupt")).result.isError, false);
  }, {
    onPermission: (request) => {
      signal = request.signal;
      return { behavior: "defer" };
    },
  });
});

Deno.test("replay 09: runtime control requests through request()", async () => {
  await withReplay("09-misc-control-requests", async (session) => {
    const init = await session.request("initialize");
    assert.ok(Array.isArray(init.commands));
    assert.deepEqual(await session.request("set_permission_mode", { mode: "acceptEdits" }), {
      mode: "acceptEdits",
    });
    assert.deepEqual(await session.request("set_model", { model: "sonnet" }), {
      model: "claude-sonnet-5-5",
    });
    assert.deepEqual(
      await session.request("set_max_thinking_tokens", { max_thinking_tokens: 2048 }),
      {},
    );
    assert.deepEqual(await session.request("mcp_status"), { mcpServers: [] });
    const usage = await session.request("get_context_usage", { detail: "summary" });
    assert.ok(Array.isArray(usage.categories));
    const settings = await session.request("get_settings");
    assert.ok("effective" in settings);
    await assert.rejects(
      session.request("definitely_not_a_subtype"),
      /Unsupported control request/,
    );
    const write = await session.send("which model? [[tool:write]]");
    assert.equal(
      write.events.some((e) => e.type === "permission_request"),
      false,
      "acceptEdits: no ask",
    );
    await session.request("set_model", { model: null });
    await session.request("set_permission_mode", { mode: "default" });
    assert.equal((await session.send("back to default model")).result.isError, false);
  });
});

Deno.test("replay 10, 20, 21: auto-allowed, auto-denied, and no -p", async (t) => {
  await t.step("10: read tools need no permission", async () => {
    await withReplay("10-read-tool-auto-allowed", async (session) => {
      const read = await session.send("read it [[tool:read]]");
      const bash = await session.send("read-only bash [[tool:bash-ro]]");
      for (const turn of [read, bash]) {
        assert.equal(turn.events.some((e) => e.type === "permission_request"), false);
        assert.equal(turn.result.isError, false);
      }
    });
  });
  await t.step("20: without --permission-prompt-tool asks are auto-denied", async () => {
    await withReplay("20-no-permission-prompt-tool-auto-deny", async (session) => {
      const turn = await session.send("run [[tool:bash]]");
      assert.equal(turn.result.permissionDenials.length, 1);
      assert.ok(turn.events.some((e) => e.type === "system" && e.subtype === "permission_denied"));
    });
  });
  await t.step("21: duplex without -p, denied by a handler", async () => {
    await withReplay("21-duplex-without-dash-p", async (session) => {
      const turn = await session.send("run [[tool:bash]]");
      assert.equal(turn.result.isError, false);
    }, { onPermission: () => deny("no") });
  });
});

Deno.test("replay 12: replayed user messages are events, not turns", async () => {
  await withReplay("12-replay-user-messages", async (session) => {
    const turn = await session.send("echo me back", {
      uuid: "33333333-3333-4333-8333-333333333333",
    });
    const replayed = turn.events.filter((e) => e.type === "user" && e.isReplay === true);
    assert.equal(replayed.length, 1);
    assert.equal(turn.result.isError, false);
  });
});

Deno.test("replay 17: the older CLI 2.1.197 speaks the same protocol", async () => {
  await withReplay("17-duplex-claude-code-2.1.197", async (session) => {
    await session.request("initialize");
    assert.equal((await session.send("first turn")).result.isError, false);
    const tool = await session.send("please run [[tool:bash]]");
    assert.equal(tool.result.isError, false);
  }, { onPermission: () => allow() });
});

Deno.test("replay reports a session that writes something else", async () => {
  const entries = await loadTranscript(
    new URL("../fixtures/transcripts/01-duplex-two-turns.ndjson", import.meta.url),
  );
  const cli = replay(entries, { waitTimeoutMs: 500 });
  const session = await DuplexSession.start({ transport: cli.transport });
  await assert.rejects(session.send("not what was recorded"), /process_exited|mismatch/);
  await session.close();
  await cli.done;
  assert.equal(cli.mismatches.length, 1);
  assert.match(cli.mismatches[0]!, /first turn/);
});
