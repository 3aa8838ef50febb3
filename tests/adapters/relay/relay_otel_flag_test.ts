/**
 * `deno task relay --otel`: the relay program (started without `OTEL_DENO`)
 * runs itself again under Deno's built-in OpenTelemetry, and its spans and
 * metrics reach an OTLP/HTTP collector this test serves on 127.0.0.1; a
 * SIGTERM to the program is passed on and it exits 0. Without the flag
 * nothing is exported; an unknown argument is refused.
 */

import assert from "node:assert/strict";
import { cliScript, COUNTED_CLI, makeTestDir, TestClient } from "./_client.ts";
import { bearerProtocol, SUBPROTOCOL } from "../../../src/wire/wire.ts";
import { startProgram } from "./_relay_program.ts";

const TOKEN = "otel-flag-token-0123456789";

interface Collected {
  readonly spans: { name: string; attributes?: { key: string }[] }[];
  readonly metrics: string[];
  readonly port: number;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A tiny OTLP/HTTP (JSON) collector: traces and metrics, by name. */
function collector(): Collected {
  const spans: Collected["spans"] = [];
  const metrics: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json().catch(() => ({}));
    const path = new URL(req.url).pathname;
    if (path === "/v1/traces") {
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
    } else if (path === "/v1/metrics") {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scope of resource.scopeMetrics ?? []) {
          for (const metric of scope.metrics ?? []) metrics.push(metric.name);
        }
      }
    }
    return Response.json({});
  });
  return {
    spans,
    metrics,
    port: server.addr.port,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** One session through the relay: hello, a turn, close. */
async function oneSession(url: string): Promise<void> {
  const client = new TestClient(url, [SUBPROTOCOL, bearerProtocol(TOKEN)]);
  await using _ = client;
  await client.opened;
  client.send({ t: "hello", v: 1, spawn: {} });
  await client.next("ready", 15_000);
  client.send({
    t: "in",
    seq: 1,
    line: JSON.stringify({ type: "user", message: { content: "hi" } }),
  });
  await client.until("the result", () => client.lines().some((line) => line.type === "result"));
  client.send({ t: "close" });
  const exit = await client.next("exit");
  client.send({ t: "ack", seq: exit.seq });
  await client.closeCode();
}

function envFor(workspace: string, cli: string, port: number): Record<string, string> {
  return {
    DUPLEX_RELAY_TOKENS: TOKEN,
    DUPLEX_RELAY_PORT: "0",
    DUPLEX_RELAY_WORKSPACE: workspace,
    DUPLEX_RELAY_TENANCY: "shared",
    CLAUDE_CLI: cli,
    RELAY_SPAWN_LOG: `${workspace}.spawns`,
    DUPLEX_RELAY_CLI_ENV: "RELAY_SPAWN_LOG",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "duplex-relay-test",
    PATH: Deno.env.get("PATH") ?? "",
  };
}

Deno.test("deno task relay --otel exports the relay's spans and metrics over OTLP", async () => {
  await using otlp = collector();
  const workspace = await makeTestDir();
  const cli = await cliScript(workspace, COUNTED_CLI);
  try {
    await using relay = await startProgram(envFor(workspace, cli, otlp.port), undefined, [
      "--otel",
    ]);
    assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1$/, "it listens");
    await oneSession(relay.url);
    relay.child.kill("SIGTERM"); // passed on to the relay run again under OTEL_DENO
    const { code, stderr } = await relay.output();
    assert.equal(code, 0, stderr);
    const names = otlp.spans.map((span) => span.name);
    assert.ok(names.includes("claude.relay.connection"), `spans: ${names}`);
    assert.ok(names.includes("claude.relay.session"), `spans: ${names}`);
    assert.ok(
      otlp.metrics.some((name) => name.startsWith("claude.relay.")),
      `metrics: ${otlp.metrics}`,
    );
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(`${workspace}.cli.sh`).catch(() => {});
    await Deno.remove(`${workspace}.spawns`).catch(() => {});
  }
});

Deno.test("deno task relay without --otel exports nothing; an unknown argument is refused", async () => {
  await using otlp = collector();
  const workspace = await makeTestDir();
  const cli = await cliScript(workspace, COUNTED_CLI);
  try {
    {
      await using relay = await startProgram(envFor(workspace, cli, otlp.port));
      await oneSession(relay.url);
      relay.child.kill("SIGTERM");
      assert.equal((await relay.output()).code, 0);
      assert.deepEqual(otlp.spans, []);
    }
    await using bad = await startProgram(envFor(workspace, cli, otlp.port), undefined, [
      "--telemetry",
    ]);
    const { code, stderr } = await bad.output();
    assert.equal(code, 2);
    assert.match(stderr, /unknown argument --telemetry; the one flag is --otel/);
  } finally {
    await Deno.remove(workspace, { recursive: true });
    await Deno.remove(`${workspace}.cli.sh`).catch(() => {});
    await Deno.remove(`${workspace}.spawns`).catch(() => {});
  }
});
