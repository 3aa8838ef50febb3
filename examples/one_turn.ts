// deno-lint-ignore-file no-console -- examples print what they do
import { DuplexSession } from "@duplex/claude";
import { subprocess } from "@duplex/claude/subprocess";

await using session = await DuplexSession.start({
  transport: subprocess({ cwd: Deno.cwd(), model: "sonnet" }),
  onPermission: (req) =>
    req.toolName === "Read"
      ? { behavior: "allow" }
      : { behavior: "deny", message: "Read-only here" },
});

const turn = await session.send("Summarise README.md in one line.");
console.log(turn.result.text, `($${turn.result.costUsd.toFixed(4)})`);
const again = await session.send("Now in five words."); // same process, same conversation
console.log(again.result.text, session.sessionId, session.pid);
