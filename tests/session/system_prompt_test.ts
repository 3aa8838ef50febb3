import assert from "node:assert/strict";
import { DuplexSession, type DuplexSessionOptions } from "../../mod.ts";
import { ScriptedCli } from "../../src/testing/scripted_cli.ts";

async function initializeOf(
  systemPrompt: NonNullable<DuplexSessionOptions["systemPrompt"]>,
  more: Partial<DuplexSessionOptions> = {},
): Promise<Record<string, unknown>> {
  const cli = new ScriptedCli({ echo: true });
  await using _ = await DuplexSession.start({ ...more, transport: cli.transport, systemPrompt });
  const init = await cli.nextWrite("control_request:initialize");
  const { subtype: _subtype, ...fields } = init.request as Record<string, unknown>;
  return fields;
}

Deno.test("systemPrompt in each of the SDK's shapes becomes the CLI's initialize fields", async (t) => {
  const table: [
    string,
    NonNullable<DuplexSessionOptions["systemPrompt"]>,
    Record<string, unknown>,
  ][] = [
    ["a string", "Be brief.", { systemPrompt: ["Be brief."] }],
    ["parts", ["A", "B"], { systemPrompt: ["A", "B"] }],
    ["custom", { type: "custom", prompt: "Bot.", snapshot: false }, {
      systemPrompt: ["Bot."],
      systemPromptSnapshot: false,
    }],
    ["the preset, extended", {
      type: "preset",
      preset: "claude_code",
      append: "Answer in French.",
      excludeDynamicSections: true,
    }, { appendSystemPrompt: "Answer in French.", excludeDynamicSections: true }],
    ["the preset alone", { type: "preset", preset: "claude_code" }, {}],
  ];
  for (const [name, prompt, expected] of table) {
    await t.step(name, async () => {
      const fields = await initializeOf(
        prompt,
        name === "the preset alone" ? { initialize: true } : {},
      );
      assert.deepEqual(fields, expected);
    });
  }
});

Deno.test("a bad systemPrompt is a TypeError before anything opens", async (t) => {
  const bad: [string, unknown, Partial<DuplexSessionOptions>][] = [
    ["a number", 7, {}],
    ["an unknown type", { type: "house" }, {}],
    ["another preset", { type: "preset", preset: "other" }, {}],
    ["append not a string", { type: "preset", preset: "claude_code", append: 1 }, {}],
    ["snapshot not a boolean", { type: "custom", prompt: "x", snapshot: "yes" }, {}],
    ["two appends", { type: "preset", preset: "claude_code", append: "a" }, {
      appendSystemPrompt: "b",
    }],
  ];
  for (const [name, systemPrompt, more] of bad) {
    await t.step(name, async () => {
      const cli = new ScriptedCli({ echo: true });
      await assert.rejects(
        DuplexSession.start({
          transport: cli.transport,
          // deno-lint-ignore no-explicit-any
          systemPrompt: systemPrompt as any,
          ...more,
        }),
        TypeError,
      );
      assert.equal(cli.opened, 0);
    });
  }
});
