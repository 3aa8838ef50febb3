/**
 * A permission request answered well after a minute still lets the tool run:
 * the official SDK's users report permission streams closing after ~60 s;
 * with this library and CLI 2.1.332 a deferred request waits for its answer.
 */
import assert from "node:assert/strict";
import { DuplexSession } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

const LATE_MS = 75_000;

e2eTest("a deferred permission answered 75 s later: the tool runs", async (_t, cli) => {
  await withSandbox(async ({ env, work, api }) => {
    await using session = await DuplexSession.start({
      transport: sandboxedCli(cli, { work, env }),
      onPermission: () => ({ behavior: "defer" }),
    });
    const sub = session.subscribe();
    const turn = session.send("[[tool:bash:touch late.txt && echo late-ran]]", {
      timeoutMs: LATE_MS + 30_000,
    });
    for await (const event of sub) {
      if (event.type !== "permission_request") continue;
      await new Promise((resolve) => setTimeout(resolve, LATE_MS));
      assert.equal(session.pendingPermissions.length, 1, "still pending after 75 s");
      assert.equal(
        await session.respondToPermission(event.request.requestId, { behavior: "allow" }),
        true,
      );
      break;
    }
    const done = await turn;
    assert.equal(done.result.isError, false);
    assert.equal(done.result.text, "Tool said: late-ran");
    await Deno.stat(`${work}/late.txt`); // the tool ran
    assert.ok(api.requests.some((r) => JSON.stringify(r.body).includes("late-ran")));
  });
});
