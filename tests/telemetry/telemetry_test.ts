/*
 * Telemetry with the real OpenTelemetry SDK, in memory: span names, nesting,
 * attributes and status for a good turn, a failed turn, a deferred permission,
 * an interrupt, a hook and an in-process MCP tool call; metrics; the plain
 * callback form; stats; the trace context handed to the transport.
 */
import assert from "node:assert/strict";
import * as otel from "@opentelemetry/api";
import {
  allow,
  DuplexSession,
  type DuplexSessionOptions,
  mcpServer,
  type SpanRecord,
  type TelemetryOptions,
  tool,
  type TransportOpenContext,
} from "../../mod.ts";
import { canUseToolRequest, controlSuccess, resultFrame } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import { assertChildOf, Otel } from "./_otel.ts";

/** A transport factory over `cli` that keeps the context each open was given. */
function seeing(cli: ScriptedCli): {
  transport: DuplexSessionOptions["transport"];
  seen: TransportOpenContext[];
} {
  const seen: TransportOpenContext[] = [];
  return {
    seen,
    transport: (context) => {
      seen.push(context);
      return cli.transport(context);
    },
  };
}

/** Polls `condition` every 5 ms until it holds (2 s at most). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Cannot see ${what} within 2 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function start(
  cli: ScriptedCli,
  telemetry: TelemetryOptions,
  more: Omit<DuplexSessionOptions, "transport"> = {},
): Promise<DuplexSession> {
  return await DuplexSession.start({ transport: cli.transport, telemetry, ...more });
}

Deno.test("a good turn: invoke_agent under claude.session, with model, tokens and cost", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: true });
  const session = await start(cli, t.telemetry);
  const turn = await session.send("hi");
  await session.send("again");
  await session.close();
  const [root] = t.named("claude.session");
  const turns = t.named("invoke_agent claude");
  assert.equal(turns.length, 2);
  assertChildOf(turns[0], root, "turns are children of the session");
  const a = turns[0]?.attributes ?? {};
  assert.equal(a["gen_ai.operation.name"], "invoke_agent");
  assert.equal(a["gen_ai.provider.name"], "anthropic");
  assert.equal(a["claude.turn.uuid"], turn.uuid);
  assert.equal(a["gen_ai.usage.input_tokens"], turn.result.tokens.input);
  assert.equal(a["gen_ai.usage.output_tokens"], turn.result.tokens.output);
  assert.equal(a["claude.turn.cost_usd"], turn.result.costUsd);
  assert.equal(a["claude.turn.is_error"], false);
  assert.equal(turns[0]?.status.code, otel.SpanStatusCode.OK);
  assert.equal(root?.attributes["gen_ai.conversation.id"], session.sessionId);
  assert.equal(root?.attributes["claude.transport"], "scripted");
  assert.equal(root?.status.code, otel.SpanStatusCode.OK);
});

Deno.test("a failed turn (the CLI killed mid-turn) and the session both end in error", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: false });
  const session = await start(cli, t.telemetry);
  const turn = session.send("doomed");
  await cli.nextWrite("user");
  cli.exit({ signal: "SIGKILL" });
  await assert.rejects(turn);
  await session.waitForExit();
  const [span] = t.named("invoke_agent claude");
  assert.equal(span?.status.code, otel.SpanStatusCode.ERROR);
  assert.match(span?.status.message ?? "", /CLI ended \(signal SIGKILL\)/);
  assert.ok(span?.events.some((e) => e.name === "exception"));
  const [root] = t.named("claude.session");
  assert.equal(root?.status.code, otel.SpanStatusCode.ERROR);
  assert.equal(root?.attributes["claude.exit.signal"], "SIGKILL");
  assert.deepEqual(session.stats.turns, { ok: 0, error: 1, aborted: 0 });
  assert.equal(session.stats.errors.process_exited, 1);
});

Deno.test("a deferred permission answered later: a claude.permission span under its turn", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: false });
  const session = await start(cli, t.telemetry, { onPermission: () => ({ behavior: "defer" }) });
  const turn = session.send("write it");
  const user = await cli.nextWrite("user");
  cli.emit(canUseToolRequest({ requestId: "p1", toolName: "Write", input: { file_path: "/x" } }));
  await until(() => session.pendingPermissions.length === 1, "the deferred request");
  await session.respondToPermission("p1", allow());
  cli.emit(resultFrame({ text: "done", userMessageUuid: String(user.uuid) }));
  await turn;
  await session.close();
  const [wait] = t.named("claude.permission Write");
  const [turnSpan] = t.named("invoke_agent claude");
  assertChildOf(wait, turnSpan, "the wait is a child of its turn");
  assert.equal(wait?.attributes["gen_ai.tool.name"], "Write");
  assert.equal(wait?.attributes["claude.permission.decision"], "allow");
  assert.equal(wait?.attributes["claude.permission.source"], "respond");
  assert.equal(wait?.attributes["claude.permission.deferred"], true);
  assert.ok(wait?.events.some((e) => e.name === "deferred"));
  assert.deepEqual(session.stats.permissions, { allow: 1, deny: 0, cancelled: 0 });
});

Deno.test("an interrupt: the turn's span records it and ends in error; the control request has its span", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: false });
  const session = await start(cli, t.telemetry);
  const controller = new AbortController();
  const turn = session.send("long", { signal: controller.signal });
  const user = await cli.nextWrite("user");
  controller.abort(new Error("user pressed stop"));
  const interrupt = await cli.nextWrite("control_request:interrupt");
  cli.emit(controlSuccess(String(interrupt.request_id), { still_queued: [] }), {
    ...resultFrame({ subtype: "error_during_execution" }),
    user_message_uuid: user.uuid,
  });
  await assert.rejects(turn);
  await session.close();
  const [span] = t.named("invoke_agent claude");
  assert.equal(span?.status.code, otel.SpanStatusCode.ERROR);
  const event = span?.events.find((e) => e.name === "interrupt");
  assert.equal(event?.attributes?.["claude.interrupt.reason"], "user pressed stop");
  const [control] = t.named("claude.control interrupt");
  const [root] = t.named("claude.session");
  assertChildOf(control, root);
  assert.equal(control?.status.code, otel.SpanStatusCode.OK);
  assert.deepEqual(session.stats.turns, { ok: 0, error: 0, aborted: 1 });
});

Deno.test("a hook callback and an MCP tool call: children of their turn", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: false });
  const server = mcpServer({
    name: "calc",
    tools: [
      tool("add", "Adds", { type: "object", properties: { a: { type: "number" } } }, () => "3"),
    ],
  });
  const session = await start(cli, t.telemetry, {
    hooks: { PreToolUse: [{ run: () => ({ continue: true }) }] },
    mcpServers: { calc: server },
  });
  const init = await cli.nextWrite("control_request:initialize");
  const callbackId = JSON.stringify(init).match(/"hookCallbackIds":\["([^"]+)"/)?.[1] ?? "";
  const turn = session.send("use the tool");
  const user = await cli.nextWrite("user");
  cli.emit({
    type: "control_request",
    request_id: "h1",
    request: {
      subtype: "hook_callback",
      callback_id: callbackId,
      input: { hook_event_name: "PreToolUse", tool_name: "mcp__calc__add", tool_input: {} },
    },
  }, {
    type: "control_request",
    request_id: "m1",
    request: {
      subtype: "mcp_message",
      server_name: "calc",
      message: {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "add", arguments: { a: 1 } },
      },
    },
  });
  await cli.nextWrite((f) => f.type === "control_response" && JSON.stringify(f).includes('"m1"'));
  await cli.nextWrite((f) => f.type === "control_response" && JSON.stringify(f).includes('"h1"'));
  cli.emit(resultFrame({ text: "3", userMessageUuid: String(user.uuid) }));
  await turn;
  await session.close();
  const [turnSpan] = t.named("invoke_agent claude");
  const [hook] = t.named("claude.hook PreToolUse");
  const [call] = t.named("execute_tool add");
  assertChildOf(hook, turnSpan);
  assertChildOf(call, turnSpan);
  assert.equal(call?.attributes["gen_ai.operation.name"], "execute_tool");
  assert.equal(call?.attributes["gen_ai.tool.name"], "add");
  assert.equal(call?.status.code, otel.SpanStatusCode.OK);
  assert.equal(hook?.status.code, otel.SpanStatusCode.OK);
});

Deno.test("metrics: turns, durations, tokens, pending control requests", async () => {
  await using o = new Otel();
  const cli = new ScriptedCli({ echo: true });
  const session = await start(cli, { meter: o.meter }, { initialize: true });
  await session.send("one");
  await session.send("two");
  await session.close();
  const metrics = await o.metrics();
  const turns = metrics.get("claude.turns")?.dataPoints ?? [];
  assert.equal(turns.find((p) => p.attributes["claude.turn.outcome"] === "ok")?.value, 2);
  const duration = metrics.get("gen_ai.client.operation.duration")?.dataPoints[0];
  assert.equal((duration?.value as { count: number }).count, 2);
  assert.equal(metrics.get("claude.control.pending")?.dataPoints[0]?.value, 0);
  assert.ok(metrics.has("gen_ai.client.token.usage"));
});

Deno.test("the plain callback form: records with parent links, no OpenTelemetry needed", async () => {
  const records: SpanRecord[] = [];
  const cli = new ScriptedCli({ echo: true });
  const session = await start(cli, { onSpan: (span) => records.push(span) });
  await session.send("hi");
  await session.close();
  const root = records.find((r) => r.name === "claude.session");
  const turn = records.find((r) => r.name === "invoke_agent claude");
  assert.ok(root && turn, "the session's and the turn's records");
  assert.equal(turn?.parentSpanId, root?.spanId);
  assert.equal(root?.parentSpanId, undefined);
  assert.equal(turn?.status.code, "ok");
  assert.ok((turn?.endTime ?? 0) >= (turn?.startTime ?? Infinity));
  assert.equal(records.at(-1)?.name, "claude.session", "the session span ends last");
});

Deno.test("the transport gets the session span's trace context (TRACEPARENT for the CLI)", async () => {
  await using t = new Otel();
  const cli = new ScriptedCli({ echo: true });
  const { transport, seen } = seeing(cli);
  const session = await DuplexSession.start({
    transport,
    telemetry: t.telemetry,
  });
  await session.close();
  const [root] = t.named("claude.session");
  const { traceId, spanId } = root?.spanContext() ?? { traceId: "", spanId: "" };
  assert.equal(seen.length, 1, "the transport opened once");
  assert.match(
    seen[0]?.traceContext?.traceparent ?? "",
    new RegExp(`^00-${traceId}-${spanId}-0[01]$`),
  );
});

Deno.test("without telemetry, no trace context and stats still count", async () => {
  const cli = new ScriptedCli({ echo: true });
  const { transport, seen } = seeing(cli);
  const session = await DuplexSession.start({
    transport,
  });
  await session.send("hi");
  cli.emitStderr("warn");
  await until(() => session.stats.stderrLines > 0, "the stderr line counted");
  assert.equal(seen.length, 1, "the transport opened once");
  assert.equal(seen[0]?.traceContext, undefined);
  assert.deepEqual(session.stats.turns, { ok: 1, error: 0, aborted: 0 });
  assert.equal(session.stats.stderrLines, 1);
  assert.equal(session.stats.pendingControlRequests, 0);
  await session.close();
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    DuplexSession.start({ transport: cli.transport, telemetry: { tracer: {} as any } }),
    TypeError,
  );
});

Deno.test("the OpenTelemetry API with no SDK: nothing traced, no trace context, turns unaffected", async () => {
  const cli = new ScriptedCli({ echo: true });
  const { transport, seen } = seeing(cli);
  const session = await DuplexSession.start({
    transport,
    telemetry: { api: otel }, // no provider registered in this process: a no-op tracer
  });
  assert.equal((await session.send("hi")).result.text, "Echo: hi");
  assert.equal(seen.length, 1, "the transport opened once");
  assert.equal(seen[0]?.traceContext, undefined, "no invalid traceparent is passed on");
  await session.close();
});
