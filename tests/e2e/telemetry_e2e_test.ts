/**
 * Telemetry end to end with a real exporter: a program drives the real
 * `claude` 2.1.332 under Deno's built-in OpenTelemetry (`OTEL_DENO=true`,
 * OTLP over HTTP/JSON) to a receiver this test serves on 127.0.0.1; the
 * session's and turns' spans arrive with their attributes and parent links,
 * under the program's own span.
 *
 * @module
 */

import assert from "node:assert/strict";
import { e2eTest, withSandbox } from "./_harness.ts";

const PROGRAM = new URL("./_otel_program.ts", import.meta.url).pathname;

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number | string };
}

function attribute(span: OtlpSpan | undefined, key: string): unknown {
  const value = span?.attributes?.find((a) => a.key === key)?.value ?? {};
  return Object.values(value)[0];
}

e2eTest(
  "telemetry: spans exported by Deno's OpenTelemetry, nested under the caller's",
  async (_t, cli) => {
    await withSandbox(async ({ work, env }) => {
      const spans: OtlpSpan[] = [];
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        async (req) => {
          const body = await req.json();
          if (new URL(req.url).pathname === "/v1/traces") {
            for (const resource of body.resourceSpans ?? []) {
              for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
            }
          }
          return Response.json({});
        },
      );
      try {
        const output = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", PROGRAM, cli, work, JSON.stringify(env)],
          env: {
            OTEL_DENO: "true",
            OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${server.addr.port}`,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
            OTEL_SERVICE_NAME: "duplex-e2e",
          },
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(output.success, new TextDecoder().decode(output.stderr));
        const turns = new TextDecoder().decode(output.stdout).trim().split("\n").map((l) =>
          JSON.parse(l)
        );
        const byName = (name: string) => spans.filter((s) => s.name === name);
        const [program] = byName("program");
        const [session] = byName("claude.session");
        const turnSpans = byName("invoke_agent claude");
        assert.ok(program && session, `spans arrived: ${spans.map((s) => s.name)}`);
        assert.equal(session.parentSpanId, program.spanId, "the session joins the caller's trace");
        assert.equal(session.traceId, program.traceId);
        assert.equal(turnSpans.length, 2);
        for (const [i, span] of turnSpans.entries()) {
          assert.equal(span.parentSpanId, session.spanId);
          assert.equal(attribute(span, "claude.turn.uuid"), turns[i]?.uuid);
          assert.equal(Number(attribute(span, "gen_ai.usage.input_tokens")), turns[i]?.input);
          assert.equal(attribute(span, "gen_ai.provider.name"), "anthropic");
        }
        assert.match(String(attribute(session, "claude.cli.version")), /^2\.1\.332/);
        assert.equal(typeof attribute(session, "gen_ai.conversation.id"), "string");
        const controls = spans.filter((s) => s.name.startsWith("claude.control "));
        assert.ok(
          controls.some((s) => s.name === "claude.control mcp_status"),
          "the request's span",
        );
        assert.ok(controls.every((s) => s.parentSpanId === session.spanId));
      } finally {
        await server.shutdown();
      }
    });
  },
);
