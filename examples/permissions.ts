// deno-lint-ignore-file no-console -- examples print what they do
import { DuplexSession, type PermissionRequest } from "@duplex/claude";
import { subprocess } from "@duplex/claude/subprocess";

await using session = await DuplexSession.start({
  transport: subprocess({ cwd: Deno.cwd() }),
  onPermission(req) {
    if (req.toolName === "Read") return { behavior: "allow" };
    if (req.toolName === "Bash" && String(req.input.command).startsWith("rm ")) {
      return { behavior: "deny", message: "No deletions", interrupt: true };
    }
    return { behavior: "defer" }; // ask a person; req.signal aborts if the CLI withdraws it
  },
});

// A person (here: a timer) answers later, from anywhere in the program.
async function askSomeone(request: PermissionRequest): Promise<boolean> {
  console.log(`May ${request.toolName} run with ${JSON.stringify(request.input)}?`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return request.toolName === "Write";
}

const answering = (async () => {
  for await (const event of session.subscribe()) {
    if (event.type !== "permission_request") continue;
    const ok = await askSomeone(event.request);
    await session.respondToPermission(
      event.request.requestId,
      ok ? { behavior: "allow" } : { behavior: "deny", message: "A person said no" },
    );
  }
})();
const turn = await session.send("Create notes.md holding a two-line poem.");
console.log(turn.result.text);
await session.close();
await answering; // the subscription ends with the session
