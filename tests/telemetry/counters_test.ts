/*
 * The session's counters and their metrics count the same events: turns by
 * outcome, errors by kind, permissions by decision, lagged events and stderr
 * lines, each in `session.stats` and in its metric alike. With a tracer that
 * records nothing, tracing stops at the session span and the counters count.
 */
import assert from "node:assert/strict";
import * as otel from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import {
  allow,
  DuplexSession,
  isDuplexError,
  type OtelTracer,
  type PermissionDecision,
} from "../../mod.ts";
import {
  canUseToolRequest,
  controlCancel,
  controlSuccess,
  resultFrame,
} from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";

const DECISIONS: Record<string, PermissionDecision> = {
  Read: { behavior: "allow" },
  Write: { behavior: "deny", message: "no" },
};

Deno.test("session.stats and the metrics count the same events", async () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const cli = new ScriptedCli({ echo: false });
  const session = await DuplexSession.start({
    transport: cli.transport,
    telemetry: { meter: provider.getMeter("test") },
    onPermission: (request) => DECISIONS[request.toolName] ?? { behavior: "defer" },
  });
  const slow = session.subscribe({ capacity: 1 }); // never read: it drops events
  const turn = async (subtype: string, signal?: AbortSignal) => {
    const sent = session.send(subtype, signal ? { signal } : {});
    const user = await cli.nextWrite("user");
    return { sent, uuid: String(user.uuid) };
  };

  const ok = await turn("success");
  cli.emit(resultFrame({ text: "fine", userMessageUuid: ok.uuid }));
  await ok.sent;
  const failed = await turn("error_during_execution");
  cli.emit(resultFrame({ subtype: "error_during_execution", userMessageUuid: failed.uuid }));
  assert.equal((await failed.sent).result.isError, true);
  const controller = new AbortController();
  const aborted = await turn("aborted", controller.signal);
  controller.abort(new Error("stop"));
  const interrupt = await cli.nextWrite("control_request:interrupt");
  cli.emit(
    controlSuccess(String(interrupt.request_id), { still_queued: [] }),
    resultFrame({ subtype: "error_during_execution", userMessageUuid: aborted.uuid }),
  );
  await assert.rejects(aborted.sent, /stop/);
  await assert.rejects(
    session.request("get_usage", {}, { timeoutMs: 20 }),
    (e) => isDuplexError(e, "timeout"),
  );
  cli.emit(
    canUseToolRequest({ requestId: "p1", toolName: "Read", input: {} }),
    canUseToolRequest({ requestId: "p2", toolName: "Write", input: {} }),
    canUseToolRequest({ requestId: "p3", toolName: "Bash", input: {} }),
  );
  await cli.nextWrite((f) => f.type === "control_response" && JSON.stringify(f).includes('"p2"'));
  cli.emit(controlCancel("p3"));
  cli.emitStderr("one");
  cli.emitStderr("two");
  await new Promise((resolve) => setTimeout(resolve, 20));
  await session.close();
  const stats = session.stats;
  await reader.forceFlush();
  await provider.shutdown();

  const points = new Map(
    exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .map((m) => [m.descriptor.name, m.dataPoints]),
  );
  const byLabel = (name: string, label: string): Record<string, unknown> =>
    Object.fromEntries(
      (points.get(name) ?? []).map((p) => [String(p.attributes[label]), p.value]),
    );
  const total = (name: string): unknown => points.get(name)?.[0]?.value;

  assert.deepEqual(stats.turns, { ok: 1, error: 1, aborted: 1 });
  assert.deepEqual(byLabel("claude.turns", "claude.turn.outcome"), stats.turns);
  assert.deepEqual(stats.errors, { other: 1, timeout: 1 });
  assert.deepEqual(byLabel("claude.errors", "error.type"), stats.errors);
  assert.deepEqual(stats.permissions, { allow: 1, deny: 1, cancelled: 1 });
  assert.deepEqual(
    byLabel("claude.permission.requests", "claude.permission.decision"),
    stats.permissions,
  );
  assert.equal(stats.stderrLines, 2);
  assert.equal(total("claude.stderr.lines"), stats.stderrLines);
  assert.ok(stats.laggedEvents > 0, "the unread subscription dropped events");
  assert.equal(total("claude.events.lagged"), stats.laggedEvents);
  assert.equal(stats.pendingControlRequests, 0);
  await slow[Symbol.asyncDispose]();
});

Deno.test("a tracer that records nothing: only the session span is started; the counters count", async () => {
  const noop = otel.trace.getTracer("no-sdk"); // no provider registered here: spans record nothing
  const started: string[] = [];
  const tracer: OtelTracer = {
    startSpan(name, options, context) {
      started.push(name);
      return noop.startSpan(name, options, context as otel.Context | undefined);
    },
  };
  const cli = new ScriptedCli({ echo: false });
  const session = await DuplexSession.start({
    transport: cli.transport,
    telemetry: { api: otel, tracer },
    onPermission: () => allow(),
  });
  const sent = session.send("write it");
  const user = await cli.nextWrite("user");
  cli.emit(canUseToolRequest({ requestId: "p1", toolName: "Write", input: {} }));
  await cli.nextWrite((f) => f.type === "control_response");
  await assert.rejects(session.request("get_usage", {}, { timeoutMs: 20 }));
  cli.emit(resultFrame({ text: "done", userMessageUuid: String(user.uuid) }));
  await sent;
  await session.close();
  assert.deepEqual(started, ["claude.session"], "no turn, permission or control span started");
  assert.deepEqual(session.stats.turns, { ok: 1, error: 0, aborted: 0 });
  assert.deepEqual(session.stats.permissions, { allow: 1, deny: 0, cancelled: 0 });
  assert.deepEqual(session.stats.errors, { timeout: 1 });
});
