/**
 * The fleet soak's short version as a test (`deno task soak --short`, with
 * the stand-in CLI): three relay processes behind HAProxy, PostgreSQL, every
 * fault of the schedule once, and the checks: 0 turns lost, 0 duplicated
 * (nor run twice by a CLI), every store transcript equal to its CLI's and
 * holding every turn its client was given, nothing left (processes, listening ports, connected sockets). IGNORED
 * loudly without HAProxy or PostgreSQL, FAILED instead with `CI=true`.
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { haproxyStatus } from "../e2e/_failover_harness.ts";
import { postgresStatus } from "../stores/_postgres_server.ts";
import { runSoak } from "./_soak_run.ts";
import { SIZES, table } from "./soak.ts";

const NAME = "soak: a fleet under faults loses nothing, doubles nothing, leaves nothing";

function missing(): string | undefined {
  const haproxy = haproxyStatus();
  if (!haproxy.available) return haproxy.reason;
  const pg = postgresStatus();
  return pg.available ? undefined : pg.reason;
}

/* `deno task test` runs with the default permission set (no temp folders, no /tmp): this test
   belongs to the e2e run (`-P=e2e`), where it runs. */
const permitted =
  Deno.permissions.querySync({ name: "write", path: Deno.env.get("TMPDIR") ?? "/tmp" })
    .state === "granted";
const reason = missing();
if (!permitted) {
  Deno.test({ name: `${NAME}: IGNORED (run it with -P=e2e)`, ignore: true, fn() {} });
} else if (reason !== undefined) {
  unavailableTest(NAME, reason);
} else {
  Deno.test({ name: NAME, sanitizeResources: true, sanitizeOps: true }, async (t) => {
    // With SOAK_DEBUG=1, the soak's log goes to stderr (faults, HAProxy's view, failed turns).
    const log = Deno.env.get("SOAK_DEBUG")
      // deno-lint-ignore no-console -- a debugging aid, asked for by its variable
      ? (line: string) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`)
      : undefined;
    const report = await runSoak({ ...SIZES.short!, ...(log ? { log } : {}) });
    const shown = table(report).join("\n");
    await t.step("every turn delivered once or failed with a typed error", () => {
      assert.equal(report.lost, 0, shown);
      assert.equal(report.duplicated, 0, shown);
      assert.equal(report.doubledInCli, 0, shown);
      assert.equal(report.conversationsDone, report.options.conversations, shown);
      assert.deepEqual(report.abandoned, [], shown);
      assert.equal(
        report.delivered + report.errorResults + report.failedTyped,
        report.turnsSent,
        shown,
      );
      assert.ok(report.delivered >= report.turnsSent * 0.9, `most turns delivered:\n${shown}`);
    });
    await t.step(
      "every store transcript equals its CLI's, by uuid, in order, and holds every delivered turn",
      () => {
        assert.ok(report.transcriptsChecked >= report.options.conversations, shown);
        assert.deepEqual(report.transcriptsDiffering, [], shown);
        assert.equal(report.deliveredForgotten, 0, `every delivered turn in the store:\n${shown}`);
      },
    );
    await t.step("every fault was injected; a killed relay's conversations went on", () => {
      assert.equal(report.faults.length, 7, shown);
      const kill = report.faults.find((fault) => fault.name === "relay_sigkill");
      assert.ok(kill?.recoveredMs !== undefined, `a result after the kill:\n${shown}`);
      assert.deepEqual(report.relaysDied, [], "no relay ended but those the soak killed");
    });
    await t.step("nothing left: processes, ports, sockets", () => {
      assert.deepEqual(report.leftProcesses, [], shown);
      assert.deepEqual(report.leftPorts, [], shown);
      assert.deepEqual(report.leftFds, [], shown);
    });
  });
}
