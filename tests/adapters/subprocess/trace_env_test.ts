import assert from "node:assert/strict";
import { subprocess } from "../../../adapters/subprocess/mod.ts";

/* A stand-in CLI that prints the two variables as one JSON line, then exits. */
const PRINT = `printf '{"tp":"%s","ts":"%s"}\\n' "$TRACEPARENT" "$TRACESTATE"`;

async function printed(traceContext?: { traceparent: string; tracestate?: string }) {
  const open = subprocess({
    pathToClaudeCodeExecutable: "sh",
    executableArgs: ["-c", PRINT],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  const transport = await open({
    signal: new AbortController().signal,
    ...(traceContext ? { traceContext } : {}),
  });
  const text = new TextDecoder().decode(
    (await Array.fromAsync(transport.readable)).reduce((a, b) => new Uint8Array([...a, ...b])),
  );
  await transport.close();
  return JSON.parse(text.trim());
}

Deno.test("subprocess() gives the CLI the session's trace context as TRACEPARENT / TRACESTATE", async () => {
  const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  assert.deepEqual(await printed({ traceparent, tracestate: "vendor=1" }), {
    tp: traceparent,
    ts: "vendor=1",
  });
  assert.deepEqual(await printed({ traceparent }), { tp: traceparent, ts: "" });
  assert.deepEqual(await printed(), { tp: "", ts: "" }, "nothing without telemetry");
});
