/**
 * The CLI versions CI tests, in one place: the support window's floor, two
 * releases between, and the pinned newest (`.ci/install_claude.ts`). The
 * floor is `CLI_WINDOW.floor` of `src/compat/cli_versions.ts` (below it
 * `DuplexSession.start` refuses); `tests/e2e/cli_window_test.ts` checks that
 * the two agree. Why these versions: `docs/development.md` ("The CLI
 * window").
 *
 * `.ci/test_window.ts` runs {@linkcode CORE_E2E_FILES} against each older
 * version; the full e2e suite runs on the newest.
 *
 * @module
 */

import { CLAUDE_VERSION } from "./install_claude.ts";

/**
 * The versions CI runs, oldest first: the floor, two between, the pinned
 * newest.
 */
export const WINDOW_VERSIONS: readonly string[] = Object.freeze([
  "2.1.289", // the floor: every release of the last 60 days (2026-10-03); default mode auto
  "2.1.300", // the example, among the last with the auto default (2.1.285 .. 2.1.301)
  "2.1.317", // the first with hook_on_failure_supported (blocking hooks)
  CLAUDE_VERSION,
]);

/** The oldest version the library supports (and CI tests). */
export const WINDOW_FLOOR: string = WINDOW_VERSIONS[0] as string;

/** The versions the core runs on besides the pinned newest. */
export const OLDER_VERSIONS: readonly string[] = Object.freeze(
  WINDOW_VERSIONS.filter((version) => version !== CLAUDE_VERSION),
);

/**
 * Versions outside the window that tests run on purpose: 2.1.268, below the
 * floor, which `tests/e2e/compat_features_e2e_test.ts` must see refused.
 */
export const TEST_ONLY_VERSIONS: readonly string[] = Object.freeze(["2.1.268"]);

/**
 * The real-CLI end-to-end core, run on every version of the window: turns,
 * streaming, permissions (allow, deny, defer), interrupt, hooks, MCP (in
 * process and external), queued prompts, resume, the pool's spares, store
 * mirroring, the permission mode asked for. Paths from the project root.
 */
export const CORE_E2E_FILES: readonly string[] = Object.freeze([
  "tests/e2e/raw_cli_test.ts", // the wire itself: turns, can_use_tool with updatedInput
  "tests/e2e/session_e2e_test.ts", // turns, streaming, allow/deny/defer, abort, API error
  "tests/e2e/control_e2e_test.ts", // initialize options, hooks, in-process MCP, controls
  "tests/e2e/hooks_e2e_test.ts", // every reachable hook event, onFailure: "block"
  "tests/e2e/mcp_external_e2e_test.ts", // mcp_set_servers
  "tests/e2e/queue_e2e_test.ts", // queued prompts, cancel_async_message, cancelQueued
  "tests/e2e/pool_e2e_test.ts", // warm and parked spares, claim_session
  "tests/e2e/pool_resume_e2e_test.ts", // hibernate and resume
  "tests/e2e/store_mirror_e2e_test.ts", // --session-mirror, resume from a store
  "tests/e2e/compat_permission_mode_e2e_test.ts", // the mode asked for is the mode run
]);
