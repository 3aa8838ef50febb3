/*
 * The fields of the official SDK's user message that `send` takes as options
 * (origin, timestamp, pasted content, inline pastes, isSynthetic): each on
 * the user line under the SDK's wire name, and a bad value refused before
 * anything is written. The real CLI's handling is in
 * tests/e2e/options_initialize_e2e_test.ts.
 */
import assert from "node:assert/strict";
import type { SendOptions } from "../../mod.ts";
import { scripted } from "./_helpers.ts";

Deno.test("send: origin, timestamp, pastes and isSynthetic travel on the user line", async (t) => {
  const { cli, session } = await scripted({ echo: true });
  await using _ = session;
  const lineOf = async (options: SendOptions) => {
    const turn = session.send("hello", options);
    const line = await cli.nextWrite((f) => f.type === "user");
    await turn;
    return line;
  };
  await t.step("every field, under its wire name", async () => {
    const line = await lineOf({
      origin: { kind: "human" },
      timestamp: "2026-12-02T08:00:00.000Z",
      pastedContent: ["a paste", [{ type: "text", text: "a block paste" }]],
      inlinePastes: ["hello"],
      isSynthetic: true,
    });
    assert.deepEqual(line.origin, { kind: "human" });
    assert.equal(line.timestamp, "2026-12-02T08:00:00.000Z");
    assert.deepEqual(line.pasted_content, [
      "a paste",
      [{ type: "text", text: "a block paste" }],
    ]);
    assert.deepEqual(line.inline_pastes, ["hello"]);
    assert.equal(line.isSynthetic, true);
  });
  await t.step("a Date is sent as its ISO string; other origins pass as given", async () => {
    const line = await lineOf({
      timestamp: new Date(Date.UTC(2026, 11, 2, 8)),
      origin: { kind: "peer", from: "session-a", name: "A" },
    });
    assert.equal(line.timestamp, "2026-12-02T08:00:00.000Z");
    assert.deepEqual(line.origin, { kind: "peer", from: "session-a", name: "A" });
  });
  await t.step("nothing extra when the options are absent", async () => {
    const line = await lineOf({ isSynthetic: false });
    for (const key of ["origin", "timestamp", "pasted_content", "inline_pastes", "isSynthetic"]) {
      assert.equal(key in line, false, key);
    }
  });
});

Deno.test("send: a bad origin, timestamp or paste is a TypeError and writes nothing", async (t) => {
  const { cli, session } = await scripted({ echo: true });
  await using _ = session;
  const bad: [string, unknown, RegExp][] = [
    ["origin", "human", /origin must be an object/],
    ["origin", {}, /non-empty string kind/],
    ["origin", { kind: "" }, /non-empty string kind/],
    ["origin", { kind: "channel" }, /of kind channel needs a string server/],
    ["origin", { kind: "peer", from: 1 }, /of kind peer needs a string from/],
    ["timestamp", "yesterday", /timestamp must be an ISO 8601 string/],
    ["timestamp", 1764662400000, /timestamp must be/],
    ["timestamp", new Date(Number.NaN), /timestamp must be/],
    ["pastedContent", "text", /pastedContent must be an array/],
    ["pastedContent", [1], /pastedContent\[0\] must be a string or an array/],
    ["pastedContent", [[{ text: "no type" }]], /pastedContent\[0\] must hold objects/],
    ["pastedContent", Array(1001).fill("x"), /holds 1001 entries and blocks/],
    ["inlinePastes", "x", /inlinePastes must be an array of strings/],
    ["inlinePastes", [1], /inlinePastes must be an array of strings/],
    ["isSynthetic", "yes", /isSynthetic must be a boolean/],
  ];
  for (const [key, value, message] of bad) {
    await t.step(`${key}: ${JSON.stringify(value)?.slice(0, 40)}`, async () => {
      await assert.rejects(
        session.send("x", { [key]: value } as SendOptions),
        (error: Error) => error instanceof TypeError && message.test(error.message),
      );
    });
  }
  assert.equal(cli.received.filter((f) => f.type === "user").length, 0);
  assert.equal(session.busy, false);
  await session.send("still usable", { pastedContent: Array(1000).fill("x") });
});
