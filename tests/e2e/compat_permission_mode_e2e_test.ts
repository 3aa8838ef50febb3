/**
 * What runs without asking never depends on the CLI's own default: 2.1.300's
 * default permission mode is `auto`, where `Bash(touch …)` ran without a
 * `can_use_tool` request reaching the host's handler. `subprocess()` always
 * passes `--permission-mode` (`default` here), so on the pinned CLI (or
 * `CLAUDE_E2E_BIN`) and on 2.1.300 a handler's deny is honoured, and the
 * CLI's `system/init` reports the mode asked for.
 *
 * 2.1.300 is the one `.ci/install_claude.ts --version=2.1.300` installs under
 * `.cache/claude-cli-versions/2.1.300/`; without it that step is IGNORED
 * locally (and fails under `CI=true`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { deny, DuplexSession, type SessionEvent } from "../../mod.ts";
import { unavailableStep } from "../_unavailable.ts";
import { installedCli } from "../compat/_helpers.ts";
import { e2eTest, exists, sandboxedCli, withSandbox } from "./_harness.ts";

const TURN = { timeoutMs: 30_000 } as const;
/** The version whose default mode (`auto`) let tools run unasked. */
const AUTO_BY_DEFAULT = "2.1.300";

e2eTest(
  "a handler's deny is honoured: the CLI runs in the permission mode asked for",
  async (t, cli) => {
    const binaries: ReadonlyArray<readonly [string, string | undefined]> = [
      ["the CLI under test", cli],
      [`claude ${AUTO_BY_DEFAULT} (its own default mode is auto)`, installedCli(AUTO_BY_DEFAULT)],
    ];
    for (const [name, binary] of binaries) {
      if (binary === undefined) {
        await unavailableStep(
          t,
          name,
          `run .ci/install_claude.ts --version=${AUTO_BY_DEFAULT} to install it`,
        );
        continue;
      }
      await t.step(name, async () => {
        await withSandbox(async ({ env, work, api }) => {
          const asked: string[] = [];
          await using session = await DuplexSession.start({
            transport: sandboxedCli(binary, { work, env }),
            onPermission: (request) => {
              asked.push(request.toolName);
              return deny("Denied by the e2e host");
            },
          });
          const modes: unknown[] = [];
          const sub = session.subscribe();
          const watching = (async () => {
            for await (const event of sub as AsyncIterable<SessionEvent>) {
              if (event.type === "system" && event.subtype === "init") {
                modes.push((event as { permissionMode?: unknown }).permissionMode);
              }
            }
          })();
          const turn = await session.send(
            "[[tool:bash:touch denied.txt && echo denied-ran]]",
            TURN,
          );
          assert.equal(turn.result.text, "Tool failed: Denied by the e2e host");
          assert.deepEqual(asked, ["Bash"], "the handler was asked");
          assert.equal(await exists(`${work}/denied.txt`), false, "the denied tool ran");
          assert.ok(
            api.requests.some((r) =>
              r.toolResults.some((x) => x.content === "Denied by the e2e host")
            ),
            "the deny reached the model",
          );
          await session.close();
          await watching;
          assert.deepEqual(modes.slice(0, 1), ["default"]);
        });
      });
    }
  },
);
