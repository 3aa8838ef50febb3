/**
 * The drift watch's type-level comparison on the real SDK: the reader finds
 * in the pinned SDK's `sdk.d.ts` (0.3.332, installed by `deno run -P=install
 * tests/bench/install_sdk.ts`) every name this library claims parity with,
 * and this library knows every frame type, subtype, hook event,
 * `query()` option and control subtype it declares (`request_user_dialog`
 * is served by `onUserDialog`). Frame fields are compared exactly in
 * `frame_fields_test.ts`.
 *
 * With `CLAUDE_SDK_PREFIX` set (`.ci/test_latest.ts` sets it to the newest
 * SDK), the SDK installed there is compared instead, against the pinned one:
 * then a failure lists what the newest SDK added. Without the SDK the test
 * is skipped loudly; with `CI=true` it fails.
 *
 * @module
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { installedVersion, SDK_PREFIX, SDK_VERSION, sdkPrefix } from "../bench/install_sdk.ts";
import { sdkCatalogue } from "../../.ci/_latest_catalogue.ts";
import { diffCatalogues } from "../../.ci/_latest_diff.ts";
import { readLibrary, readSdk, ROOT } from "../../.ci/_latest_sources.ts";

const NAME = "the SDK's frames, subtypes, controls, hook events and options are known here";
const PINNED = `${ROOT}/${SDK_PREFIX}`;
const pinnedVersion = await installedVersion(PINNED);
const newest = sdkPrefix();
const newestVersion = await installedVersion(newest);

if (pinnedVersion !== SDK_VERSION || newestVersion === undefined) {
  unavailableTest(
    NAME,
    `the official SDK ${SDK_VERSION} is not installed in ${PINNED}` +
      (newest === PINNED ? "" : ` or none is in ${newest}`) +
      `: run deno run -P=install tests/bench/install_sdk.ts`,
  );
} else {
  Deno.test(NAME, () => {
    const pinned = sdkCatalogue(readSdk(PINNED).dts);
    assert.equal(pinned.hookEvents.length, 34);
    assert.equal(pinned.controlSubtypes.length, 41);
    assert.equal(pinned.options.length, 70);
    assert.equal(pinned.frames.get("system")?.length, 29);
    assert.deepEqual(pinned.unresolved, []);
    const items = diffCatalogues(
      { newest: sdkCatalogue(readSdk(newest).dts), pinned, known: readLibrary() },
      { pinned: SDK_VERSION, newest: newestVersion },
    ).filter((item) => item.section !== "fields" && !item.note.startsWith("default"));
    assert.deepEqual(items, []);
  });
}
