/**
 * Feature detection on real CLIs of other versions (installed under
 * `.cache/claude-cli-versions/<v>/` by `.ci/install_claude.ts --version=<v>`;
 * a version not installed is IGNORED locally, and fails under `CI=true`):
 *
 * - the floor's CLI (2.1.289) lacks blocking hooks (2.1.317): a session with
 *   a hook asking `onFailure: "block"` is refused at start, naming the
 *   feature and both versions, before any turn;
 * - a CLI below the floor (2.1.268) is refused at start, naming the floor.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, isDuplexError } from "../../mod.ts";
import { CLI_FEATURES } from "../../src/compat/cli_features.ts";
import { CLI_WINDOW } from "../../src/compat/cli_versions.ts";
import { unavailableStep } from "../_unavailable.ts";
import { installedCli } from "../compat/_helpers.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

const BELOW_FLOOR = "2.1.268";

e2eTest(
  "older CLIs: a feature the version lacks, or a version below the floor, is refused at start",
  async (t) => {
    const floor = installedCli(CLI_WINDOW.floor);
    if (floor === undefined) {
      await unavailableStep(
        t,
        `claude ${CLI_WINDOW.floor}`,
        `run .ci/install_claude.ts --version=${CLI_WINDOW.floor}`,
      );
    } else {
      await t.step(
        `claude ${CLI_WINDOW.floor}: blocking hooks need ${CLI_FEATURES.blockingHooks.since}`,
        async () => {
          await withSandbox(async ({ env, work }) => {
            await assert.rejects(
              DuplexSession.start({
                transport: sandboxedCli(floor, { work, env }),
                hooks: { PreToolUse: [{ matcher: "Bash", run: () => ({}), onFailure: "block" }] },
              }),
              (error: unknown) => {
                assert.ok(isDuplexError(error, "unsupported"), String(error));
                assert.ok(
                  error.message.includes(`claude ${CLI_FEATURES.blockingHooks.since} or newer`),
                  error.message,
                );
                assert.ok(
                  error.message.includes(`this claude is ${CLI_WINDOW.floor}`),
                  error.message,
                );
                return true;
              },
            );
          });
        },
      );
    }
    const old = installedCli(BELOW_FLOOR);
    if (old === undefined) {
      await unavailableStep(
        t,
        `claude ${BELOW_FLOOR}`,
        `run .ci/install_claude.ts --version=${BELOW_FLOOR}`,
      );
    } else {
      await t.step(`claude ${BELOW_FLOOR}: below the floor`, async () => {
        await withSandbox(async ({ env, work }) => {
          await assert.rejects(
            DuplexSession.start({ transport: sandboxedCli(old, { work, env }) }),
            (error: unknown) => {
              assert.ok(isDuplexError(error, "unsupported"), String(error));
              assert.ok(
                error.message.includes(`claude ${BELOW_FLOOR} is older than ${CLI_WINDOW.floor}`),
                error.message,
              );
              return true;
            },
          );
        });
      });
    }
  },
);
