/**
 * Bun (from npm): the client bundled by `deno bundle`, as emitted (Bun parses
 * `using` declarations), completes a turn of the real CLI through a relay
 * and exits by itself.
 */
import assert from "node:assert/strict";
import { bundle, runClient, runtimeTest, tempDir, withRelay } from "./_runtimes.ts";

runtimeTest(
  "Bun: a bundled client completes a turn",
  ["bun"],
  async (_t, cli, bin) => {
    await withRelay(cli, async (fixture) => {
      await using dir = await tempDir("duplex-bun-");
      const file = `${dir.path}/client.mjs`;
      await bundle("tests/e2e/runtimes/fixtures/portable_client.ts", file);
      const run = await runClient(bin.bun!, file, fixture, "Hi, Bun");
      assert.equal(run.status.code, 0, run.output);
      assert.match(String(run.report?.userAgent), /^Bun\/1\.4\.4$/);
      assert.equal(run.report?.text, "Echo: Hi, Bun");
      assert.match(String(run.report?.sessionId), /^[0-9a-f-]{36}$/);
    });
  },
);
