/**
 * The frame types of `src/protocol/` against the official SDK's, field by
 * field: every field of every member of the SDK's `SDKMessage` union (read
 * from `sdk.d.ts` by the drift watch's reader) is a field of our frame of the
 * same `type` / `subtype`, or is in {@linkcode LEFT_OUT} with the reason. A
 * field a new SDK adds is a failing test here, not a silent `unknown`.
 *
 * It runs against the SDK the tests load (`sdkPrefix()`: the pinned one in
 * `.cache/bench-sdk`, or `CLAUDE_SDK_PREFIX`, for example
 * `CLAUDE_SDK_PREFIX=/tmp/sdk333`). Without it the test is skipped loudly;
 * with `CI=true` it fails. The comparison itself is also checked on fixed
 * inputs, so it is known to fail on a new field.
 *
 * @module
 */

import assert from "node:assert/strict";
import { unavailableTest } from "../_unavailable.ts";
import { installedVersion, sdkPrefix } from "../bench/install_sdk.ts";
import { type Catalogue, sdkCatalogue } from "../../.ci/_latest_catalogue.ts";
import { frameFieldGaps } from "../../.ci/_latest_diff.ts";
import { readLibrary, readSdk } from "../../.ci/_latest_sources.ts";

/**
 * SDK frame fields deliberately not typed here (`frame.field`), each with the
 * reason. Empty today: every field of 0.3.333 is typed.
 */
const LEFT_OUT: ReadonlyMap<string, string> = new Map<string, string>([]);

function catalogue(fields: Record<string, string[]>): Catalogue {
  return {
    frames: new Map(),
    controlSubtypes: [],
    hookEvents: [],
    options: [],
    defaults: new Map(),
    fields: new Map(Object.entries(fields)),
    unresolved: [],
  };
}

Deno.test("frameFieldGaps: a field, a frame and a stale exception each fail", () => {
  const sdk = catalogue({
    "assistant": ["type", "message", "timestamp"],
    "result/success": ["type", "subtype", "deferred_tool_use"],
    "system/new_thing": ["type", "subtype"],
    "control/interrupt": ["subtype", "cancel_queued"],
  });
  const known = catalogue({ assistant: ["type", "message"], result: ["type", "subtype"] });
  assert.deepEqual(frameFieldGaps({ sdk, known }), [
    { section: "fields", name: "assistant.timestamp", note: "typed by the SDK, not here" },
    {
      section: "fields",
      name: "result/success.deferred_tool_use",
      note: "typed by the SDK, not here",
    },
    { section: "fields", name: "system/new_thing", note: "frame not typed here" },
  ]);
  const leftOut = new Map([
    ["assistant.timestamp", "on purpose"],
    ["assistant.message", "stale: we have it"],
  ]);
  assert.deepEqual(frameFieldGaps({ sdk, known }, leftOut).map((item) => item.name), [
    "result/success.deferred_tool_use",
    "system/new_thing",
    "assistant.message",
  ]);
  const full = catalogue({
    assistant: ["type", "message", "timestamp"],
    "result/success": ["type", "subtype", "deferred_tool_use"],
    "system/new_thing": ["type", "subtype"],
  });
  assert.deepEqual(frameFieldGaps({ sdk, known: full }), []);
});

const NAME = "every field of every SDK frame type is typed here";
const prefix = sdkPrefix();
const version = await installedVersion(prefix);

if (version === undefined) {
  unavailableTest(
    NAME,
    `no official SDK is installed in ${prefix}: run deno run -P=install tests/bench/install_sdk.ts`,
  );
} else {
  Deno.test(`${NAME} (SDK ${version})`, () => {
    const sdk = sdkCatalogue(readSdk(prefix).dts);
    assert.deepEqual(sdk.unresolved, []);
    const frames = [...sdk.fields.keys()].filter((key) => !key.startsWith("control/"));
    assert.ok(frames.length >= 40, `only ${frames.length} frame types read from the SDK`);
    assert.ok(frames.includes("result/success") && frames.includes("system/init"));
    assert.deepEqual(frameFieldGaps({ sdk, known: readLibrary() }, LEFT_OUT), []);
  });
}
