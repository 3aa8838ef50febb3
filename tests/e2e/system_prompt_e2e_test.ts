/**
 * System prompts in the official SDK's shapes, with the real `claude`
 * 2.1.332: what reaches the model's `system` field.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DuplexSession, type DuplexSessionOptions } from "../../mod.ts";
import { e2eTest, sandboxedCli, withSandbox } from "./_harness.ts";

function systemText(body: unknown): string {
  const system = (body as { system?: unknown }).system;
  if (typeof system === "string") return system;
  return Array.isArray(system) ? system.map((part) => part?.text ?? "").join("\n") : "";
}

e2eTest(
  "systemPrompt: custom replaces, the preset keeps Claude Code's prompt and extends it",
  async (t, cli) => {
    const run = (systemPrompt: NonNullable<DuplexSessionOptions["systemPrompt"]>) =>
      withSandbox(async ({ api, work, env }) => {
        await using session = await DuplexSession.start({
          transport: sandboxedCli(cli, { work, env }),
          systemPrompt,
        });
        await session.send("hi", { timeoutMs: 30_000 });
        return { system: systemText(api.messageRequests.at(-1)?.body) };
      });
    await t.step("custom", async () => {
      const { system } = await run({ type: "custom", prompt: "You are a release bot." });
      assert.match(system, /You are a release bot\./);
      assert.doesNotMatch(system, /Claude Code/);
    });
    await t.step("preset + append", async () => {
      const { system } = await run({
        type: "preset",
        preset: "claude_code",
        append: "Reply in French.",
      });
      assert.match(system, /Claude/);
      assert.match(system, /Reply in French\./);
      assert.match(system, /# Session-specific guidance/, "the dynamic sections are there");
      assert.match(system, /# Memory/);
    });
    await t.step("preset without its dynamic sections", async () => {
      const { system } = await run({
        type: "preset",
        preset: "claude_code",
        append: "Reply in French.",
        excludeDynamicSections: true,
      });
      assert.match(system, /Claude/);
      assert.match(system, /Reply in French\./);
      // Observed on 2.1.332: the session- and machine-specific sections (skills guidance, the
      // memory folder's path) leave the system prompt, which then caches across machines.
      assert.doesNotMatch(system, /# Session-specific guidance/);
      assert.doesNotMatch(system, /# Memory/);
    });
  },
);
