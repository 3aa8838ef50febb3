/**
 * Node >= 22 (from npm; the machine's own Node 20 has no global WebSocket):
 * a bundled client completes a turn of the real CLI through a relay. What
 * `deno bundle` emits keeps `using` declarations, which Node 22's V8 cannot
 * parse; compiled down with esbuild (`--target=node22`) it runs.
 */
import assert from "node:assert/strict";
import { bundle, lower, runClient, runtimeTest, tempDir, withRelay } from "./_runtimes.ts";

runtimeTest(
  "Node 22: a bundled client, compiled down for its engine, completes a turn",
  ["node", "esbuild"],
  async (t, cli, bin) => {
    await withRelay(cli, async (fixture) => {
      await using dir = await tempDir("duplex-node-");
      const raw = `${dir.path}/client.mjs`;
      const code = await bundle("tests/e2e/runtimes/fixtures/portable_client.ts", raw);

      await t.step("Node 22 cannot parse the bundle as deno bundle emits it", async () => {
        assert.match(code, /^\s*using \w+ = /m, "deno bundle keeps `using` declarations");
        const run = await runClient(bin.node!, raw, fixture, "never runs");
        assert.notEqual(run.status.code, 0);
        assert.match(run.output, /SyntaxError/);
      });

      await t.step("compiled down with esbuild --target=node22, it completes a turn", async () => {
        const lowered = await lower(bin.esbuild!, raw, `${dir.path}/client.node22.mjs`, "node22");
        assert.doesNotMatch(lowered, /^\s*(await )?using \w+ = /m);
        const run = await runClient(
          bin.node!,
          `${dir.path}/client.node22.mjs`,
          fixture,
          "Hi, Node",
        );
        assert.equal(run.status.code, 0, run.output);
        assert.match(String(run.report?.userAgent), /^Node\.js\/22\b/);
        assert.equal(run.report?.text, "Echo: Hi, Node");
        assert.match(String(run.report?.sessionId), /^[0-9a-f-]{36}$/);
      });
    });
  },
);
