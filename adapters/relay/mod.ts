/**
 * A relay server for `@duplex/claude`: it runs `claude` for clients that
 * cannot spawn processes (edge workers), over one WebSocket per session
 * connection (`@duplex/claude/remote` is the client).
 *
 * The relay authenticates each connection with a bearer token, decides what
 * a client may spawn (its policy: models, permission modes, turn limit,
 * working folder inside the workspace), spawns one `claude` per session
 * with the subprocess adapter, and forwards between the socket and the
 * process. A dropped connection can resume within `graceMs`: the relay
 * keeps the unacknowledged output (bounded by `bufferBytes`) and replays it,
 * and applies each input line once.
 *
 * Run it with `deno task relay`, or from code:
 *
 * @example Serve a relay
 * ```ts ignore
 * import { serveRelay } from "@duplex/claude/relay";
 *
 * const relay = serveRelay({
 *   tokens: [Deno.env.get("RELAY_TOKEN")!],
 *   workspace: "/srv/projects",
 *   policy: { models: ["sonnet"], maxTurns: 20 },
 * });
 * console.log(`Relay on ${relay.url}`);
 * Deno.addSignalListener("SIGINT", () => relay.close());
 * await relay.closed;
 * ```
 *
 * @module
 */

export {
  DEFAULT_BUFFER_BYTES,
  DEFAULT_GRACE_MS,
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_HELLO_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  type RelayOptions,
  type RelayPolicy,
  type RelayServer,
  serveRelay,
} from "./relay_server.ts";
export { DEFAULT_PERMISSION_MODES } from "./relay_policy.ts";
