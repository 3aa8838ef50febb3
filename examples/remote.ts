// deno-lint-ignore-file no-console -- examples print what they do
// A relay (normally `deno task relay` on a host that can run claude) and a client that
// reaches it over a WebSocket with the Web-standard remote transport, as an edge worker would.
import { DuplexSession } from "@duplex/claude";
import { remote } from "@duplex/claude/remote";
import { serveRelay } from "@duplex/claude/relay";

const token = crypto.randomUUID();
await using relay = serveRelay({
  tokens: [token],
  workspace: Deno.cwd(), // sessions run here (or in a sub-folder a client names)
  policy: { models: ["sonnet", "haiku"], permissionModes: ["default", "plan"] },
});

// The worker's side needs only `remote`: no process, no Deno API.
await using session = await DuplexSession.start({
  transport: remote({ url: relay.url, token, spawn: { model: "sonnet" } }),
  onPermission: (req) => ({ behavior: "deny", message: `No ${req.toolName} from the edge` }),
});
const turn = await session.send("Say hi from the edge.");
console.log(turn.result.text);
