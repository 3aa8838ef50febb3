// deno-lint-ignore-file no-console -- examples print what they do
import { DuplexSession, mcpServer, tool } from "@duplex/claude";
import { subprocess } from "@duplex/claude/subprocess";

const clock = mcpServer({
  name: "clock",
  tools: [
    tool("now", "The current time (ISO 8601)", { type: "object" }, () => new Date().toISOString()),
  ],
});

await using session = await DuplexSession.start({
  transport: subprocess({ cwd: Deno.cwd() }),
  appendSystemPrompt: "Answer in one short sentence.",
  agents: { reviewer: { description: "Reviews diffs", prompt: "You review code." } },
  mcpServers: [clock], // its tools run in this process: mcp__clock__now
  onPermission: (req) =>
    req.toolName === "mcp__clock__now"
      ? { behavior: "allow" }
      : { behavior: "deny", message: "No" },
  hooks: {
    PreToolUse: [{
      matcher: "Bash",
      run: (input) =>
        String(input.tool_input.command).includes("--force")
          ? {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: "No force pushes",
            },
          }
          : {}, // carry on
    }],
    UserPromptSubmit: [{
      run: () => ({
        hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "Be kind." },
      }),
    }],
  },
});
const info = await session.initialized; // commands, models, account, CLI version, pid…
console.log(`claude ${info?.version}, ${info?.models.length} models`);
await session.setPermissionMode("acceptEdits");
await session.setModel("sonnet");
console.log((await session.send("What time is it?")).result.text);
console.log(await session.mcpServerStatus(), (await session.getContextUsage()).totalTokens);
await session.request("reload_plugins"); // any subtype; typed for those the CLI documents
