/**
 * Every program in examples/ (the README's examples) runs to its end against
 * the real CLI, offline: the fake Messages API answers, CLAUDE_CLI names the
 * installed binary.
 */
import assert from "node:assert/strict";
import { e2eTest, withSandbox } from "./_harness.ts";

const root = new URL("../../", import.meta.url);
const config = new URL("deno.json", root).pathname;

const expectations: Record<string, RegExp> = {
  "one_turn.ts": /Echo: Summarise README\.md in one line\.[\s\S]*Echo: Now in five words\./,
  "streaming.ts": /Echo: Write a haiku about pipes\./,
  "permissions.ts": /Echo: Create notes\.md holding a two-line poem\./,
  "cancel.ts": /interrupt acknowledged[\s\S]*Echo: Say done\./,
  "hooks_and_controls.ts": /claude 2\.1\.332, \d+ models[\s\S]*Echo: What time is it\?/,
  "remote.ts": /Echo: Say hi from the edge\./,
};

e2eTest("examples/ run against the real CLI", async (t, cli) => {
  for (const [name, expected] of Object.entries(expectations)) {
    await t.step(name, async () => {
      await withSandbox(async ({ env, work }) => {
        const output = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--config", config, "-A", new URL(`examples/${name}`, root).pathname],
          cwd: work,
          env: { ...env, CLAUDE_CLI: cli, NO_COLOR: "1" },
          clearEnv: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        const stdout = new TextDecoder().decode(output.stdout);
        const stderr = new TextDecoder().decode(output.stderr);
        assert.equal(output.code, 0, `${name} exited ${output.code}\n${stdout}\n${stderr}`);
        assert.match(stdout, expected);
      });
    });
  }
});
