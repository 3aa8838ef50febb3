// deno-lint-ignore-file no-console -- examples print what they do
/**
 * A Deno Deploy-style handler: `Deno.serve`, one session per request, the
 * assistant's text streamed to the browser as server-sent events as it
 * arrives (an `EventSource` on `/turn?prompt=…`). The `claude` runs behind a
 * relay on a host that can spawn processes; this program needs only the
 * network and its two variables:
 *
 * ```sh
 * DUPLEX_RELAY_URL=ws://127.0.0.1:8787/v1 DUPLEX_RELAY_TOKEN=… deno run \
 *   --allow-net=127.0.0.1 --allow-env=DUPLEX_RELAY_URL,DUPLEX_RELAY_TOKEN,PORT \
 *   examples/edge/deno_deploy.ts
 * curl -N 'http://127.0.0.1:8000/turn?prompt=Say%20hi'
 * ```
 *
 * A browser that leaves (closes the `EventSource`) aborts `request.signal`,
 * which interrupts the turn in the CLI; the session is closed after its turn.
 * Tool requests are denied: this handler has nobody to ask.
 *
 * @module
 */

import { DuplexSession } from "@duplex/claude";
import { remote } from "@duplex/claude/remote";
import { promptOf, SSE_HEADERS, streamTurn } from "./stream_turn.ts";

const url = Deno.env.get("DUPLEX_RELAY_URL");
const token = Deno.env.get("DUPLEX_RELAY_TOKEN");
if (!url || !token) throw new Error("Set DUPLEX_RELAY_URL and DUPLEX_RELAY_TOKEN");

Deno.serve({
  hostname: "127.0.0.1", // Deploy ignores the address; locally, stay on loopback
  port: Number(Deno.env.get("PORT") ?? 8000),
  onListen: ({ hostname, port }) => console.log(`Listening on http://${hostname}:${port}/`),
}, async (request) => {
  if (new URL(request.url).pathname !== "/turn") {
    return new Response("Not found\n", { status: 404 });
  }
  const prompt = await promptOf(request);
  if (prompt === undefined) return new Response("No prompt\n", { status: 400 });
  let session: DuplexSession;
  try {
    session = await DuplexSession.start({
      transport: remote({ url, token, spawn: { includePartialMessages: true } }),
      onPermission: (req) => ({ behavior: "deny", message: `No ${req.toolName} from the edge` }),
    });
  } catch (error) {
    return Response.json({ error: String(error) }, { status: 502 });
  }
  const turn = streamTurn(session, prompt, request.signal);
  turn.done.then(() => session.close()).catch(() => {}); // the session ends with its turn
  return new Response(turn.body, { headers: SSE_HEADERS });
});
