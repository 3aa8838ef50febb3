/*
 * Feature detection does not swallow what the library does not know: on a
 * CLI its transport started (the checks active), a frame of a new type still
 * arrives as `unknown`, a new system subtype as the system frame it is, the
 * CLI's request of a new subtype is answered (`unsupported_request`, or by
 * `onControlRequest`), and our request of a new subtype goes out as asked.
 */
import assert from "node:assert/strict";
import { DuplexSession, isDuplexError, type SessionEvent } from "../../mod.ts";
import { CLI_WINDOW } from "../../src/compat/cli_versions.ts";
import { controlError } from "../../src/testing/frames.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";
import type { TransportFactory } from "../../src/transport/transport.ts";
import { launchedBy } from "./_helpers.ts";

function launched(cli: ScriptedCli): TransportFactory {
  return launchedBy(cli, { permissionMode: "default", version: CLI_WINDOW.newest });
}

Deno.test("new frame types, system subtypes and control subtypes still arrive, unknown to the library", async () => {
  const cli = new ScriptedCli({ echo: true })
    .on("control_request:brand_new_request", (frame) => [
      controlError(
        String(frame.request_id),
        "Unsupported control request subtype: brand_new_request",
      ),
    ]);
  await using session = await DuplexSession.start({ transport: launched(cli) });
  const seen: SessionEvent[] = [];
  const sub = session.subscribe();
  const reading = (async () => {
    for await (const event of sub) seen.push(event);
  })();
  cli.emit(
    { type: "brand_new_frame", payload: 1 },
    { type: "system", subtype: "brand_new_subtype", session_id: "s" },
    { type: "control_request", request_id: "cli_1", request: { subtype: "brand_new_from_cli" } },
  );
  const answer = await cli.nextWrite((f) => f.type === "control_response");
  assert.deepEqual(answer.response, {
    subtype: "error",
    request_id: "cli_1",
    error: "Unsupported control request subtype: brand_new_from_cli",
    error_code: "unsupported_request",
  });
  await assert.rejects(
    session.request("brand_new_request", { x: 1 }),
    (error: unknown) => isDuplexError(error, "control_failed"),
  );
  assert.equal((await session.send("still fine")).result.text, "Echo: still fine");
  await session.close();
  await reading;
  const unknown = seen.find((e) => e.type === "unknown");
  assert.ok(unknown?.type === "unknown" && unknown.frameType === "brand_new_frame");
  assert.ok(seen.some((e) => e.type === "system" && e.subtype === "brand_new_subtype"));
});
