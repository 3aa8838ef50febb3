// deno-lint-ignore-file no-console
/*
 * A program run under Deno's built-in OpenTelemetry by telemetry_e2e_test.ts:
 * two turns and a control request with the real CLI, telemetry given as the
 * `@opentelemetry/api` module, inside a span of the program's own.
 * Arguments: the CLI's path, the working folder, and the CLI's environment
 * as JSON.
 */
import * as otel from "@opentelemetry/api";
import { DuplexSession } from "../../mod.ts";
import { subprocess } from "../../adapters/subprocess/mod.ts";

const [binary, cwd, envJson] = Deno.args as [string, string, string];
const tracer = otel.trace.getTracer("e2e-program");
await tracer.startActiveSpan("program", async (program) => {
  await using session = await DuplexSession.start({
    transport: subprocess({ binary, cwd, env: JSON.parse(envJson), clearEnv: true }),
    telemetry: { api: otel },
  });
  for (const prompt of ["hello", "again"]) {
    const turn = await session.send(prompt, { timeoutMs: 30_000 });
    console.log(JSON.stringify({ uuid: turn.uuid, input: turn.result.tokens.input }));
  }
  await session.mcpServerStatus(); // a control request of ours, for its span
  await session.close();
  program.end();
});
