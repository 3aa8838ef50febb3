/**
 * Our store pieces against the official SDK 0.3.332's own (installed by
 * `deno run -P=install tests/bench/install_sdk.ts` into `.cache/bench-sdk`):
 * the conformance suite on the SDK's `InMemorySessionStore` (it passes all
 * but the three SHOULDs it does not keep, and fails those), `projectKeyOf`
 * against the SDK's derivation (a path over 200 characters included), and
 * `importSessionToStore` against the SDK's on the real CLI's transcripts
 * (the same batches, entries, subkeys, and conversation read back).
 *
 * The SDK's module needs `--allow-sys=homedir` to load, which the project's
 * test permissions do not grant, so the checks run in a child `deno test`
 * (`_sdk_parity_child.ts`) with exactly what they need. Without the SDK
 * the test is skipped loudly; with `CI=true` it fails.
 *
 * @module
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { sdkEntry } from "../bench/install_sdk.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** The pinned SDK, or the one `CLAUDE_SDK_PREFIX` names (the drift watch's newest). */
const SDK = sdkEntry();
const CHILD = new URL("./_sdk_parity_child.ts", import.meta.url).pathname;

function installed(): boolean {
  try {
    return Deno.statSync(SDK).isFile;
  } catch {
    return false;
  }
}

const NAME = "store pieces equal the official SDK's (conformance, projectKeyOf, import)";

if (!installed()) {
  unavailableTest(
    NAME,
    `the official SDK is not installed (${SDK}): run deno run -P=install tests/bench/install_sdk.ts`,
  );
} else {
  Deno.test(NAME, async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "--quiet",
        "--no-check",
        `--allow-read=${ROOT}`,
        `--allow-write=${ROOT}/.cache`,
        "--allow-env",
        "--allow-sys=homedir",
        CHILD,
      ],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const { code, stdout, stderr } = await child.output().finally(() => clearTimeout(timer));
    const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 0, output);
    assert.match(output, /ok \| 4 passed \(\d+ steps\) \| 0 failed/, output);
  });
}
