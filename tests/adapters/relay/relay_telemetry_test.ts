/**
 * The relay's telemetry with the real OpenTelemetry SDK in memory: the
 * connection and session spans in the client's trace, what the CLI is given,
 * refusals by kind, resumes, flow-control stalls, the metrics; the callback
 * form; telemetry off; bad options.
 */

import assert from "node:assert/strict";
import { serveRelay } from "../../../adapters/relay/mod.ts";
import type { SpanRecord } from "../../../src/telemetry/telemetry_options.ts";
import { makeTestDir, refusalOf, TestClient, TOKEN, userLine } from "./_client.ts";
import { refusedUpgrade } from "./_upgrade.ts";
import { everything, Otel, otel, parentOf, type ReadableSpan, tracedRelay } from "./_traced.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN = "b7ad6b7169203331";
const CLIENT_TRACE = { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`, tracestate: "rojo=00f067" };

/** Opens a connection and sends a hello; resolves with the client and the relay's ready. */
async function hello(
  url: string,
  message: Record<string, unknown>,
  pauseMs = 0,
): Promise<{ client: TestClient; ready: Record<string, unknown> }> {
  const client = new TestClient(url);
  await client.opened;
  if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  client.send({ t: "hello", v: 1, ...message });
  return { client, ready: await client.next("ready") };
}

/** Asks the relay to close the session, acknowledges its exit, and waits for the close. */
async function finish(client: TestClient): Promise<void> {
  client.send({ t: "close" });
  const exit = await client.next("exit");
  client.send({ t: "ack", seq: exit.seq });
  await client.closeCode();
}

function traceparentOf(span: ReadableSpan | undefined): RegExp {
  const context = span?.spanContext();
  return new RegExp(`^00-${context?.traceId}-${context?.spanId}-01$`);
}

Deno.test("relay telemetry: spans in the client's trace, and what the CLI gets", async (t) => {
  await t.step("a connection and a session, children of the hello's trace context", async () => {
    await using o = new Otel();
    await using setup = await tracedRelay({ telemetry: o.telemetry });
    const { client, ready } = await hello(setup.relay.url, {
      spawn: { model: "sonnet", permissionMode: "plan" },
      trace: CLIENT_TRACE,
    }, 200); // the connection span starts at the hello, dated back to the open
    client.send({ t: "in", seq: 1, line: userLine("hi") });
    await client.until("the result", () => client.lines().some((l) => l.type === "result"));
    await finish(client);
    const [session] = await o.ended("claude.relay.session");
    const [connection] = await o.ended("claude.relay.connection");
    for (const span of [session, connection]) {
      assert.equal(span?.spanContext().traceId, TRACE_ID, `${span?.name} is in the client's trace`);
      assert.equal(parentOf(span), CLIENT_SPAN, `${span?.name} is a child of the client's span`);
    }
    assert.deepEqual(
      {
        model: session?.attributes["gen_ai.request.model"],
        mode: session?.attributes["claude.permission.mode"],
        pid: session?.attributes["process.pid"],
        owner: session?.attributes["claude.relay.owner.kind"],
        requested: session?.attributes["claude.exit.requested"],
      },
      { model: "sonnet", mode: "plan", pid: ready.pid, owner: "token", requested: true },
    );
    assert.equal(session?.status.code, otel.SpanStatusCode.OK);
    assert.equal(connection?.kind, otel.SpanKind.SERVER);
    assert.equal(connection?.attributes["claude.relay.connection.outcome"], "ready");
    assert.equal(connection?.attributes["claude.relay.resumed"], false);
    assert.equal(connection?.attributes["claude.relay.close.code"], 1000);
    assert.equal(connection?.attributes["network.peer.address"], "127.0.0.1");
    const ms = (span?: ReadableSpan) =>
      (span?.startTime[0] ?? 0) * 1e3 + (span?.startTime[1] ?? 0) / 1e6;
    const early = ms(session) - ms(connection);
    assert.ok(early >= 190 && early < 5000, `the connection began ${early} ms before the session`);
    const id = session?.attributes["claude.relay.session.id"];
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.equal(connection?.attributes["claude.relay.session.id"], id, "the spans correlate");
    // The CLI is started in the session span's trace, with the client's tracestate.
    assert.equal(setup.launches.length, 1);
    assert.match(setup.launches[0]?.traceContext?.traceparent ?? "", traceparentOf(session));
    assert.equal(setup.launches[0]?.traceContext?.tracestate, CLIENT_TRACE.tracestate);
    const text = everything(o.spans());
    assert.ok(!text.includes(TOKEN), "never the bearer token");
    assert.ok(!text.includes(String(ready.session)), "never the session's resume token");
  });

  await t.step(
    "a malformed trace context is ignored: the relay's spans start a trace",
    async () => {
      await using o = new Otel();
      await using setup = await tracedRelay({ telemetry: o.telemetry });
      for (
        const trace of [
          { traceparent: `00-${"0".repeat(32)}-${CLIENT_SPAN}-01` }, // all-zero trace id
          { traceparent: CLIENT_TRACE.traceparent.toUpperCase() },
          { traceparent: `ff-${TRACE_ID}-${CLIENT_SPAN}-01` },
          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", // not an object
        ]
      ) {
        const { client } = await hello(setup.relay.url, { spawn: {}, trace });
        await finish(client);
      }
      const sessions = await o.ended("claude.relay.session", 4);
      for (const [i, span] of sessions.entries()) {
        assert.equal(parentOf(span), undefined, `hello ${i}: a root span`);
        assert.notEqual(span.spanContext().traceId, TRACE_ID);
        assert.match(setup.launches[i]?.traceContext?.traceparent ?? "", traceparentOf(span));
      }
    },
  );

  await t.step("a resume: a second connection span, resume and disconnect events", async () => {
    await using o = new Otel();
    await using setup = await tracedRelay({ telemetry: o.telemetry });
    const { client: first, ready } = await hello(setup.relay.url, { trace: CLIENT_TRACE });
    first.send({ t: "in", seq: 1, line: userLine("one") });
    await first.until("result one", () => first.lines().length === 1);
    await first.close(); // dropped: the session waits for a resume
    const resume = { session: ready.session, after: first.lastSeq() };
    const { client: second, ready: again } = await hello(setup.relay.url, {
      resume,
      trace: CLIENT_TRACE,
    });
    assert.equal(again.resumed, true);
    await finish(second);
    const connections = await o.ended("claude.relay.connection", 2);
    assert.deepEqual(connections.map((span) => span.attributes["claude.relay.resumed"]), [
      false,
      true,
    ]);
    assert.ok(connections.every((span) => parentOf(span) === CLIENT_SPAN));
    const [session] = await o.ended("claude.relay.session");
    const events = session?.events.map((event) => event.name);
    assert.deepEqual(events, ["disconnected", "resume"]);
    const resumeEvent = session?.events.find((event) => event.name === "resume");
    assert.equal(resumeEvent?.attributes?.["claude.relay.resume.after"], resume.after);
    assert.equal(await o.counter("claude.relay.resumes"), 1);
    assert.equal(
      await o.counter("claude.relay.connections", "claude.relay.connection.outcome", "ready"),
      2,
    );
  });

  await t.step("a hibernation and its wake: counted once each", async () => {
    await using o = new Otel();
    await using setup = await tracedRelay({ telemetry: o.telemetry, graceMs: 100 });
    const { client: first, ready } = await hello(setup.relay.url, {});
    first.send({ t: "in", seq: 1, line: userLine("one") });
    await first.until("result one", () => first.lines().length === 1);
    const after = first.lastSeq();
    await first.close(); // away past the grace: hibernated
    const deadline = Date.now() + 5000;
    while (setup.relay.hibernatedCount === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(await o.counter("claude.relay.hibernations"), 1);
    assert.equal(await o.counter("claude.relay.wakes"), 0);
    const { client: second, ready: again } = await hello(setup.relay.url, {
      resume: { session: ready.session, after },
    });
    assert.equal(again.resumed, true);
    assert.equal(await o.counter("claude.relay.wakes"), 1);
    await finish(second);
    assert.equal(await o.counter("claude.relay.hibernations"), 1, "a closed session is not");
  });

  await t.step("the callback form: the session record's parent is the client's span", async () => {
    const records: SpanRecord[] = [];
    await using setup = await tracedRelay({ telemetry: { onSpan: (span) => records.push(span) } });
    const { client } = await hello(setup.relay.url, { trace: CLIENT_TRACE });
    await finish(client);
    const deadline = Date.now() + 5000;
    while (records.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const session = records.find((record) => record.name === "claude.relay.session");
    const connection = records.find((record) => record.name === "claude.relay.connection");
    assert.equal(session?.parentSpanId, CLIENT_SPAN);
    assert.equal(connection?.parentSpanId, CLIENT_SPAN);
    assert.ok(
      (connection?.startTime ?? Infinity) <= (session?.startTime ?? 0),
      "dated from the open",
    );
    assert.equal(
      setup.launches[0]?.traceContext?.traceparent,
      `00-${TRACE_ID}-${session?.spanId}-01`,
      "the CLI continues the client's trace from the session span",
    );
  });

  await t.step(
    "telemetry off, or the API with no SDK: the CLI still gets the client's trace",
    async () => {
      for (const telemetry of [undefined, { api: otel }]) {
        await using setup = await tracedRelay(telemetry ? { telemetry } : {});
        const { client } = await hello(setup.relay.url, { trace: CLIENT_TRACE });
        await finish(client);
        assert.equal(setup.launches[0]?.traceContext?.traceparent, CLIENT_TRACE.traceparent);
        const { client: plain } = await hello(setup.relay.url, {});
        await finish(plain);
        assert.equal(setup.launches[1]?.traceContext, undefined, "no trace, nothing invented");
      }
    },
  );
});

Deno.test("relay telemetry: refusals by kind, flow-control stalls, live sessions", async (t) => {
  await t.step("refusals: counted by kind, the connection span in error", async () => {
    await using o = new Otel();
    await using setup = await tracedRelay({
      telemetry: o.telemetry,
      policy: { models: ["sonnet"] },
      maxPendingConnections: 1,
    });
    const { url } = setup.relay;
    assert.equal((await refusedUpgrade(url, { token: "wrong-token" })).kind, "unauthorized");
    const refused = await refusalOf(url, {
      send: (client) =>
        client.send({ t: "hello", v: 1, spawn: { model: "opus" }, trace: CLIENT_TRACE }),
    });
    assert.equal(refused.kind, "not_permitted");
    // One connection in its handshake fills maxPendingConnections: the next upgrade is a 503.
    const waiting = new TestClient(url);
    await waiting.opened;
    const turnedAway = new TestClient(url);
    await assert.rejects(turnedAway.opened);
    await turnedAway.closed;
    await waiting.close();
    const connections = await o.ended("claude.relay.connection", 3);
    const byKind = new Map(connections.map((span) => [
      span.attributes["claude.relay.refusal.kind"] ?? "none",
      span,
    ]));
    const unauthorized = byKind.get("unauthorized");
    assert.equal(unauthorized?.status.code, otel.SpanStatusCode.ERROR);
    assert.equal(unauthorized?.attributes["claude.relay.connection.outcome"], "refused");
    // Refused before the upgrade: an HTTP status, no WebSocket to close.
    assert.equal(unauthorized?.attributes["http.response.status_code"], 401);
    assert.equal(parentOf(unauthorized), undefined, "no hello: a root span");
    assert.equal(parentOf(byKind.get("not_permitted")), CLIENT_SPAN, "after the hello: its trace");
    assert.equal(byKind.get("none")?.attributes["claude.relay.connection.outcome"], "closed");
    assert.equal(o.named("claude.relay.session").length, 0, "nothing was spawned");
    const kind = "claude.relay.refusal.kind";
    assert.equal(await o.counter("claude.relay.refusals", kind, "unauthorized"), 1);
    assert.equal(await o.counter("claude.relay.refusals", kind, "not_permitted"), 1);
    assert.equal(await o.counter("claude.relay.refusals", kind, "busy"), 1);
  });

  await t.step("a spawn that fails, and a CLI that fails: the session span in error", async () => {
    await using o = new Otel();
    {
      await using bad = await tracedRelay({
        telemetry: o.telemetry,
        cli: { binary: "/nonexistent/claude-relay-test" },
      });
      assert.equal((await refusalOf(bad.relay.url)).kind, "spawn_failed");
    }
    const [failed] = await o.ended("claude.relay.session");
    assert.equal(failed?.status.code, otel.SpanStatusCode.ERROR);
    assert.match(failed?.status.message ?? "", /claude-relay-test/);
    assert.equal(
      await o.counter("claude.relay.refusals", "claude.relay.refusal.kind", "spawn_failed"),
      1,
    );
    await using setup = await tracedRelay({ telemetry: o.telemetry }, {
      FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
      FAKE_CLAUDE_EXIT_CODE: "3",
    });
    const { client } = await hello(setup.relay.url, {});
    const exit = await client.next("exit");
    client.send({ t: "ack", seq: exit.seq });
    await client.closeCode();
    const [, exited] = await o.ended("claude.relay.session", 2);
    assert.equal(exited?.attributes["process.exit.code"], 3);
    assert.equal(exited?.attributes["claude.exit.requested"], false);
    assert.equal(exited?.status.code, otel.SpanStatusCode.ERROR);
    assert.equal(exited?.status.message, "claude ended (exit code 3)");
  });

  await t.step(
    "a flow-control stall: an event with its duration, counted and measured",
    async () => {
      await using o = new Otel();
      // 3 MB of stdout through a 256 KiB window: the relay stops reading until the client acks.
      await using setup = await tracedRelay({ telemetry: o.telemetry, bufferBytes: 262_144 }, {
        FAKE_CLAUDE_FINAL_STDOUT_BYTES: "3000000",
        FAKE_CLAUDE_EXIT_IMMEDIATELY: "1",
      });
      const { client } = await hello(setup.relay.url, {});
      await client.until("a window of output", () => client.stdout().length >= 131_072);
      await new Promise((resolve) => setTimeout(resolve, 300)); // stalled meanwhile
      let acked = 0;
      await client.until("the exit", () => {
        const last = client.lastSeq();
        if (last > acked) client.send({ t: "ack", seq: acked = last });
        return client.texts("exit").length === 1;
      }, 20_000);
      const [session] = await o.ended("claude.relay.session");
      const stalls = session?.events.filter((event) => event.name === "flow_stall") ?? [];
      assert.ok(stalls.length >= 1, "at least one stall");
      const first = Number(stalls[0]?.attributes?.["claude.relay.stall.duration"]);
      assert.ok(
        first >= 0.25 && first < 10,
        `the first stall lasted ${first} s (no ack for 300 ms)`,
      );
      assert.ok(
        Number(stalls[0]?.attributes?.["claude.relay.stall.unacknowledged_bytes"]) >= 131_072,
      );
      assert.equal(await o.counter("claude.relay.flow_stalls"), stalls.length);
      const histogram = (await o.metrics()).get("claude.relay.stall.duration");
      assert.equal(histogram?.descriptor.unit, "s");
      assert.equal((histogram?.dataPoints[0]?.value as { count: number }).count, stalls.length);
      await client.close();
    },
  );

  await t.step("claude.relay.sessions counts the sessions held now", async () => {
    await using o = new Otel();
    await using setup = await tracedRelay({ telemetry: o.telemetry });
    const { client: a } = await hello(setup.relay.url, {});
    const { client: b } = await hello(setup.relay.url, {});
    assert.equal(await o.counter("claude.relay.sessions"), 2);
    await finish(a);
    await o.ended("claude.relay.session");
    const deadline = Date.now() + 5000;
    while (setup.relay.sessionCount > 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(await o.counter("claude.relay.sessions"), 1);
    await finish(b);
    await setup.relay.close();
    assert.equal(await o.counter("claude.relay.sessions"), 0);
  });
});

Deno.test("serveRelay checks its telemetry option", async () => {
  const workspace = await makeTestDir();
  try {
    for (
      const [telemetry, words] of [
        [5, /telemetry must be an object/],
        [{ tracer: {} }, /telemetry\.tracer must be a Tracer/],
        [{ meter: { createCounter: 1 } }, /telemetry\.meter must be a Meter/],
        [{ api: { trace: 1 } }, /telemetry\.api must be the @opentelemetry\/api module/],
        [{ onSpan: "log" }, /telemetry\.onSpan must be a function/],
      ] as const
    ) {
      assert.throws(
        // deno-lint-ignore no-explicit-any
        () => serveRelay({ tokens: [TOKEN], workspace, telemetry: telemetry as any }),
        (error: unknown) => error instanceof TypeError && words.test(error.message),
      );
    }
  } finally {
    await Deno.remove(workspace, { recursive: true });
  }
});
