/**
 * A relay server for `@duplex/claude`: it runs `claude` for clients that
 * cannot spawn processes (edge workers), over one WebSocket per session
 * connection (`@duplex/claude/remote` is the client).
 *
 * The relay admits each connection by its `Origin` (`allowedOrigins`) and
 * its bearer token: a long-lived static token (`tokens`, for servers), or a
 * short-lived scoped token, an HS256 JWT the application server mints per
 * user with `mintRelayToken` of `@duplex/claude/token` (`secrets`, two at
 * once for rotation), whose policy narrows the relay's. Every session is bound to the
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
 * Run it with `deno task relay`, or from code. Scoped tokens are minted
 * and verified by `@duplex/claude/token` (this entry still exports those
 * names through 0.3, deprecated).
 *
 * @example Serve a relay, ask its health, be refused without a token
 * ```ts
 * import { serveRelay } from "@duplex/claude/relay";
 * import assert from "node:assert/strict";
 *
 * await using relay = serveRelay({
 *   tokens: ["a-long-random-static-token-for-servers"],
 *   workspace: ".",
 *   policy: { models: ["sonnet"], maxTurns: 20 },
 * });
 * assert.match(relay.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1$/);
 * const http = relay.url.replace("ws:", "http:");
 * const health = await fetch(http.replace("/v1", "/health"));
 * assert.deepEqual(await health.json(), { ok: true, sessions: 0, hibernated: 0 });
 * const refused = await fetch(http, { headers: { authorization: "Bearer wrong" } });
 * assert.equal(refused.status, 401);
 * assert.equal((await refused.json()).kind, "unauthorized");
 * ```
 *
 * ## Words
 *
 * As the relay uses them (the file that does each in brackets):
 *
 * - **resume**: a client's hello names a session token and the last output
 *   sequence it has (`resume: { session, after }`); the relay attaches the
 *   connection to that session and replays the output after `after` from
 *   the session's buffer. The process may still run (a drop within the
 *   grace), or the resume needs a *wake*. Another owner's session is
 *   answered as an unknown one (`_connection.ts`).
 * - **resend**: after a reconnect the client sends again each input line
 *   not yet acknowledged, with its old sequence number; the relay
 *   acknowledges a line it already took and does not write it again
 *   (`_relay_session.ts`). Resumed from the store, a line the record counts
 *   as written, or a user line whose uuid the stored transcript holds, is
 *   acknowledged and not written again (`_relay_store.ts`).
 * - **hibernate**: the grace of a disconnected, still running session
 *   ends with hibernation on: its process is closed and what a resume needs
 *   is kept in memory (owner, the CLI's session id, the sequence numbers, up
 *   to 64 KiB of unacknowledged output), bounded in all and per owner
 *   (`_hibernation.ts`).
 * - **wake**: a resume that needs a new process, `claude --resume` of the
 *   conversation, its spawn request checked again against the resuming
 *   credential's policy: of a session hibernated here, or of one whose
 *   record another relay (or this one, before a restart) left in the shared
 *   store (`_relay.ts`, `_wake_options.ts`, `_store_wake.ts`).
 * - **restore**: what a woken session continues from the one it replaces:
 *   its token, its output and input numbering and its kept output (`Restore`
 *   in `_relay_session_types.ts`), so that its client resumes as after a drop.
 * - **forget**: a session's end on the relay: its process closed, its
 *   buffer dropped, its record closed, hibernated or left as it was
 *   (`_relay_session.ts`).
 * - Not to be confused: **`spawn.resume`** starts a *new* relay session
 *   that continues an earlier CLI conversation by the CLI's session id, for
 *   its owner only (`_conversations.ts`), not a resume of a relay session.
 *
 * ## Parts
 *
 * | File | What it owns |
 * | --- | --- |
 * | `mod.ts` | This entry: what the relay exports. |
 * | `relay_server.ts` | `serveRelay()` and the `RelayServer` it returns. |
 * | `relay_options.ts` | `RelayOptions` and its defaults. |
 * | `main.ts` | `deno task relay`: a relay configured by environment variables. |
 * | `_relay_config.ts` | The check of the options, and the settings it gives. |
 * | `_relay.ts` | The relay: the HTTP server, its sessions by token, starts, wakes, shutdown. |
 * | `_session_room.ts` | The bounds on sessions and starts, in all and per owner. |
 * | `_admission.ts` | The HTTP answers: `/health`, refusals before the upgrade, CORS. |
 * | `_health.ts` | Who may read `/health`: anyone, or a bearer token (`health`). |
 * | `_access.ts` | Origin and bearer-token checks, resolved to a credential (owner, policy). |
 * | `_policy.ts` | The spawn policy: a token's narrowing, a spawn request made into CLI options. |
 * | `_tenancy.ts` | Each owner's folders (`per-owner`) or the shared workspace. |
 * | `_cli_env.ts` | The CLIs' environment: an allow-list of the relay's, never its secrets. |
 * | `_connection.ts` | One WebSocket: the hello, the client's messages, the heartbeat, refusals. |
 * | `_connection_host.ts` | What a connection needs from the relay (the relay implements it). |
 * | `_frame_bounds.ts` | Bounds on a client's frames, and how a refused connection is closed. |
 * | `_relay_session.ts` | One relayed session: the CLI, its numbering, its one phase, flow control. |
 * | `_relay_session_types.ts` | The session's phase, settings, peer, `Restore`, `Wake`, `Start`. |
 * | `_output_buffer.ts` | The bounded replay buffer of unacknowledged output. |
 * | `_hibernation.ts` | Hibernated sessions, bounded in all and per owner. |
 * | `_owner_lru.ts` | The bounded per-owner map under hibernation and conversation owners. |
 * | `_conversations.ts` | Who owns each CLI conversation (`spawn.resume` opens only one's own). |
 * | `_pending_claims.ts` | Owner claims the store did not take: kept, bounded, retried with backoff. |
 * | `_wake_options.ts` | The options of a wake, checked against the resuming credential. |
 * | `_store_wake.ts` | A wake from the shared store: the record loaded, its owner checked, the transcript checked. |
 * | `_relay_store.ts` | A session's use of the store: the mirror, the record, resent lines. |
 * | `_relay_record.ts` | Session records in the store: their form, appends and loads. |
 * | `_stdout_tap.ts` | The CLI's stdout split for the mirror, other bytes forwarded unchanged. |
 * | `_mirror_drain.ts` | When the mirror's appends have landed (a `result` waits for its turn). |
 * | `_relay_telemetry.ts` | The relay's spans and metrics, in one file. |
 *
 * The wire format both ends speak is in `src/wire/`, the tokens and the
 * policy vocabulary in `src/token/` (`@duplex/claude/token`).
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
  type RelayHealthOptions,
  type RelayOptions,
  type RelayPolicy,
  type RelayServer,
  serveRelay,
  type Tenancy,
} from "./relay_server.ts";
export { DEFAULT_PERMISSION_MODES } from "../../src/token/relay_policy.ts";
// Deprecated: the tokens' own entry is `@duplex/claude/token`.
export {
  DEFAULT_MAX_RELAY_TOKEN_LIFETIME_SECONDS,
  MAX_RELAY_TOKEN_TTL_SECONDS,
  mintRelayToken,
  type MintRelayTokenOptions,
  RELAY_TOKEN_CLOCK_SKEW_SECONDS,
  type RelayTokenCheck,
  type RelayTokenPolicy,
  type VerifiedRelayToken,
  verifyRelayToken,
  type VerifyRelayTokenOptions,
} from "../../src/token/legacy.ts";
