import assert from "node:assert/strict";
import { classifyFrame, isSystemFrame, type SystemSubtype } from "../../src/protocol/mod.ts";
import { FLAT_FIELDS, SYSTEM_FIELDS } from "../../src/protocol/_frame_checks.ts";
import { SAMPLES } from "./_samples.ts";

const SDK_UNION_MEMBERS = 40; // SDKMessage in sdk.d.ts 0.3.332; plus SDKActiveGoalMessage = 41

/** A value of another kind than `value`'s (never null, so `string|null` fields fail too). */
function wrongKind(value: unknown): unknown {
  if (typeof value === "string") return 7;
  return value === null ? true : "seven";
}

function recorded(name: string): Record<string, unknown>[] {
  const text = Deno.readTextFileSync(new URL(`./fixtures/${name}`, import.meta.url));
  return text.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
}

Deno.test({
  name: "classifyFrame() knows every member of the SDK's message union",
  permissions: "none",
  fn() {
    const sdkTypes = new Set(SAMPLES.map((s) => s.sdkType));
    // 40 SDKMessage members (SDKResultMessage in its two shapes) + SDKActiveGoalMessage
    // + the transcript_mirror frame.
    assert.equal(sdkTypes.size, SDK_UNION_MEMBERS + 1 + 2);
    for (const { sdkType, frame } of SAMPLES) {
      const classified = classifyFrame(frame);
      assert.notEqual(classified.type, "unknown", sdkType);
      assert.equal(classified, frame, `${sdkType}: the same object, not a copy`);
    }
  },
});

Deno.test({
  name: "classifyFrame() has a sample for every known system subtype and flat frame type",
  permissions: "none",
  fn() {
    const subtypes = new Set(
      SAMPLES.filter((s) => s.frame.type === "system").map((s) => s.frame.subtype),
    );
    assert.deepEqual([...subtypes].sort(), Object.keys(SYSTEM_FIELDS).sort());
    const types = new Set(SAMPLES.map((s) => s.frame.type));
    for (const type of Object.keys(FLAT_FIELDS).filter((t) => t !== "command_lifecycle")) {
      assert.ok(types.has(type), type);
    }
  },
});

Deno.test({
  name: "isSystemFrame() narrows each system sample to its own subtype only",
  permissions: "none",
  fn() {
    for (const { sdkType, frame } of SAMPLES.filter((s) => s.frame.type === "system")) {
      const subtype = frame.subtype as SystemSubtype;
      const classified = classifyFrame(frame);
      assert.ok(isSystemFrame(classified, subtype), sdkType);
      const other: SystemSubtype = subtype === "status" ? "init" : "status";
      assert.ok(!isSystemFrame(classified, other), `${sdkType} is not ${other}`);
    }
  },
});

Deno.test({
  name: "classifyFrame() makes a known frame without a required field an unknown frame",
  permissions: "none",
  async fn(t) {
    for (const { sdkType, frame } of SAMPLES) {
      const spec: Record<string, string> | undefined = frame.type === "system"
        ? SYSTEM_FIELDS[frame.subtype as SystemSubtype]
        : (FLAT_FIELDS as Record<string, Record<string, string>>)[String(frame.type)];
      if (spec === undefined) continue; // assistant, user, result, stream_event: their own guards
      await t.step(sdkType, () => {
        for (const field of Object.keys(spec)) {
          const missing = { ...frame };
          delete missing[field];
          const lost = classifyFrame(missing);
          assert.equal(lost.type, "unknown", `${sdkType} without ${field}`);
          assert.equal(lost.type === "unknown" && lost.frame, missing, "the frame is kept");
          const mistyped = classifyFrame({ ...frame, [field]: wrongKind(frame[field]) });
          assert.equal(mistyped.type, "unknown", `${sdkType} with a mistyped ${field}`);
        }
      });
    }
  },
});

Deno.test({
  name: "classifyFrame() keeps frames it does not know, typed as unknown or system",
  permissions: "none",
  fn() {
    const hologram = classifyFrame({ type: "hologram", beam: 1 });
    assert.equal(hologram.type, "unknown");
    assert.equal(hologram.type === "unknown" && hologram.frameType, "hologram");
    const untyped = classifyFrame({ subtype: "x" });
    assert.equal(untyped.type === "unknown" && untyped.frameType, "");
    const later = { type: "system", subtype: "post_turn_summary", summary: "s" };
    const classified = classifyFrame(later);
    assert.equal(classified.type, "system");
    assert.equal(classified, later);
    assert.ok(!isSystemFrame(classified, "task_started"));
    assert.equal(classifyFrame({ type: "system" }).type, "unknown", "no subtype");
    // A null `value` is the documented "goal cleared", not a missing field.
    assert.equal(classifyFrame({ type: "active_goal", value: null }).type, "active_goal");
  },
});

Deno.test({
  name: "classifyFrame() accepts every frame Claude Code 2.1.332 wrote offline",
  permissions: { read: [new URL("./fixtures/", import.meta.url)] },
  fn() {
    const frames = recorded("frames-2.1.332.ndjson");
    assert.ok(frames.length >= 18);
    for (const frame of frames) {
      const classified = classifyFrame(frame);
      const label = `${frame.type}/${frame.subtype ?? ""}`;
      assert.notEqual(classified.type, "unknown", label);
      if (frame.type === "system") {
        assert.ok(isSystemFrame(classified, frame.subtype as SystemSubtype), label);
      }
    }
    const kinds = new Set(frames.map((f) => `${f.type}/${f.subtype ?? ""}`));
    for (
      const kind of [
        "system/task_started",
        "system/task_updated",
        "system/task_notification",
        "system/background_tasks_changed",
        "system/hook_started",
        "system/hook_response",
        "system/informational",
        "system/compact_boundary",
      ]
    ) assert.ok(kinds.has(kind), `recorded ${kind}`);
  },
});
