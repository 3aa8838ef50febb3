/**
 * A relay server for `@duplex/claude`: it runs `claude` for clients that
 * cannot spawn processes (edge workers), over one WebSocket per session
 * connection (`@duplex/claude/remote` is the client).
 *
 * The relay admits each connection by its `Origin` (`allowedOrigins`) and
 * its bearer token: a long-lived static token (`tokens`, for servers), or a
 * short-lived scoped token, an HS256 JWT the application server mints per
 * user with {@linkcode mintRelayToken} (`secrets`, two at once for
 * rotation), whose policy narrows the relay's. Every session is bound to the
 * credential that started it (the static token, or the JWT's subject): no
 * one else can resume it. The relay decides what a client may spawn (its
 * policy: models, permission modes, turn limit, working folder inside the
 * workspace), spawns one `claude` per session with the subprocess adapter,
 * and forwards between the socket and the process, within bounds: frame size
 * (`maxFrameBytes`), input waiting for the CLI (`maxPendingInputBytes`),
 * connections in their handshake (`maxPendingConnections`). A dropped
 * connection can resume within `graceMs`: the relay keeps the
 * unacknowledged output (bounded by `bufferBytes`) and replays it, and
 * applies each input line once.
 *
 * Many hosts: give every relay the same `sessionStore` (a
 * `PostgresSessionStore` from `@duplex/claude/postgres`, or a
 * `DirectorySessionStore` on one host) and put them behind a load balancer
 * that routes by a conversation key (or give `remote()` several URLs). The
 * CLIs mirror their transcripts there, each resumable session keeps a record
 * there (under {@linkcode RELAY_SESSIONS_PROJECT_KEY}, hashed: never a token),
 * and a relay asked to resume a session it does not hold resumes it from the
 * store, for the same credential only, with the history.
 *
 * Telemetry: pass `telemetry` (the same option as `DuplexSession.start`
 * takes: the `@opentelemetry/api` module, a tracer and meter, or `onSpan`)
 * for a `claude.relay.connection` span per WebSocket and a
 * `claude.relay.session` span per spawned CLI (spawn to exit; resumes,
 * dropped connections and flow-control stalls as events), and the metrics
 * `claude.relay.connections`, `.sessions` (live now), `.resumes`,
 * `.refusals` (by kind), `.flow_stalls`, `.stall.duration`, `.hibernations`
 * and `.wakes` (resumes in a new process). A client's
 * hello carries its session's W3C trace context (`remote()` sends it), so
 * the relay's spans are children of the client's session span and the CLI
 * is started with the relay session span's context: one trace covers
 * worker, relay and CLI. Off by default, and then free; tokens never appear.
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
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_MAX_HIBERNATED,
  DEFAULT_MAX_PENDING_CONNECTIONS,
  DEFAULT_MAX_PENDING_INPUT_BYTES,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_STORE_TIMEOUT_MS,
  RELAY_SESSIONS_PROJECT_KEY,
  type RelayOptions,
  type RelayPolicy,
  type RelayServer,
  serveRelay,
  type Tenancy,
} from "./relay_server.ts";
export { DEFAULT_PERMISSION_MODES } from "./relay_policy.ts";
export {
  MAX_RELAY_TOKEN_TTL_SECONDS,
  mintRelayToken,
  type MintRelayTokenOptions,
  type RelayTokenPolicy,
} from "../../src/wire/relay_token.ts";
export {
  DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  RELAY_TOKEN_CLOCK_SKEW_SECONDS,
  type RelayTokenCheck,
  type VerifiedRelayToken,
  verifyRelayToken,
  type VerifyRelayTokenOptions,
} from "../../src/wire/verify_relay_token.ts";
