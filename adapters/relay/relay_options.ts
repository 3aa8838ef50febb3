/**
 * The options of {@linkcode serveRelay} and their defaults.
 *
 * @module
 */

import type { MirrorEvent } from "../../src/store/mirror_target.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import type { TelemetryOptions } from "../../src/telemetry/telemetry_options.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import type { RelayPolicy } from "../../src/token/relay_policy.ts";
import type { Tenancy } from "./_tenancy.ts";

export type { Tenancy };

/** Default of {@linkcode RelayOptions.graceMs}. */
export const DEFAULT_GRACE_MS = 30_000;
/** Default of {@linkcode RelayOptions.bufferBytes}. */
export const DEFAULT_BUFFER_BYTES = 8 * 1024 * 1024;
/** Default of {@linkcode RelayOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 16;
/** Default of {@linkcode RelayOptions.maxHibernated}. */
export const DEFAULT_MAX_HIBERNATED = 1000;
/**
 * The share of `maxSessions` and `maxHibernated` one owner gets by default
 * ({@linkcode RelayOptions.maxSessionsPerOwner},
 * {@linkcode RelayOptions.maxHibernatedPerOwner}): a quarter.
 */
export const OWNER_SHARE = 4;
/** Default of {@linkcode RelayOptions.heartbeatMs}. */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Default of {@linkcode RelayOptions.helloTimeoutMs}. */
export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
/** Default of {@linkcode RelayOptions.maxFrameBytes}: 16 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Default of {@linkcode RelayOptions.maxPendingInputBytes}: 32 MiB. */
export const DEFAULT_MAX_PENDING_INPUT_BYTES = 32 * 1024 * 1024;
/** Default of {@linkcode RelayOptions.maxPendingConnections}. */
export const DEFAULT_MAX_PENDING_CONNECTIONS = 64;
/** Default of {@linkcode RelayOptions.storeTimeoutMs}. */
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;
/**
 * The project key under which the relay keeps its session records in
 * {@linkcode RelayOptions.sessionStore} (reserved: no `projectKey` may be it).
 */
export const RELAY_SESSIONS_PROJECT_KEY = "duplex-relay";

/**
 * Who may read the relay's `/health` ({@linkcode RelayOptions.health}).
 *
 * Open by default, as before: a load balancer's check needs no secret, and
 * what `/health` tells (whether the relay is up, how many sessions it holds
 * and keeps hibernated) names no owner, token or session. Require a token
 * where even those counts should stay private (a relay that faces the
 * internet with no proxy in front of it): then a request without one gets a
 * bare HTTP 401 (`www-authenticate: Bearer`), nothing about the relay in it.
 * A load balancer sends its token as a header, for example HAProxy's
 * `http-check send meth GET uri /health hdr Authorization "Bearer <token>"`
 * (`examples/relay/haproxy.cfg` does so with `DUPLEX_PROXY_HEALTH_TOKEN`).
 */
export interface RelayHealthOptions {
  /**
   * `"open"`: anyone may read `/health`; `"token"`: only a request whose
   * `Authorization: Bearer` header carries one of `tokens` or a token the
   * relay takes at `/v1` (a static token, or a scoped token it verifies).
   * Default: `"token"` when `tokens` are given, else `"open"`.
   */
  readonly access?: "open" | "token";
  /**
   * Tokens that may read `/health` and nothing else (compared in constant
   * time): give the load balancer one of these rather than a token that can
   * start a `claude`.
   */
  readonly tokens?: readonly string[];
}

/**
 * Options of {@linkcode serveRelay}. At least one of `tokens` and `secrets`
 * is required; both may be given.
 */
export interface RelayOptions {
  /**
   * Long-lived static bearer tokens clients may present, for server-to-server
   * use (compared in constant time). A session started with one can be
   * resumed only with the same token.
   */
  readonly tokens?: readonly string[];
  /**
   * The secrets of scoped tokens (`mintRelayToken`): one or two strings of at
   * least 32 bytes, the current one first and, while rotating, the previous
   * one. A client may then present an HS256 JWT signed with either; the relay
   * checks its signature, `exp`, `nbf` and `iat` (required; 30 s of clock
   * skew) and its lifetime (`maxTokenLifetimeSeconds`), narrows its
   * policy by the token's `policy` claim, and binds the session to its `sub`:
   * only a token of the same subject can resume it.
   */
  readonly secrets?: readonly string[];
  /**
   * The longest lifetime (`exp - iat`) of a scoped token the relay takes, in
   * whole seconds (1 or more). A token signed to live longer (by another JWT
   * library, or with a leaked secret: ten years, `exp: 1e300`) is refused
   * (`unauthorized`, the reason naming its lifetime and this bound).
   * Default: 86 430, the most `mintRelayToken` gives (a day) plus the clock
   * skew.
   */
  readonly maxTokenLifetimeSeconds?: number;
  /**
   * The browser origins allowed to connect, as `scheme://host[:port]`, for
   * example `["https://app.example.com"]`. A connection whose `Origin` header
   * is not listed is refused before the upgrade (`not_permitted`, HTTP 403,
   * the reason in the body, as a bad token is with 401); one without an
   * `Origin` header (a server-side client) is allowed. Default: every origin.
   */
  readonly allowedOrigins?: readonly string[];
  /** Who may read `/health`. Default: anyone ({@linkcode RelayHealthOptions}). */
  readonly health?: RelayHealthOptions;
  /** The address to listen on. Default: `"127.0.0.1"`. */
  readonly hostname?: string;
  /** The port to listen on; 0 picks a free one. Default: 0. */
  readonly port?: number;
  /**
   * The base options of every spawned `claude` (binary, environment, grace
   * periods, fixed flags). `cwd` is replaced by the session's folder in the
   * workspace (the owner's, see `tenancy`); the policy decides what clients
   * may add. With `isolation: "bubblewrap"` each CLI runs in a sandbox that
   * shows it its own `HOME`, configuration, temporary and working folders
   * only: with tenancy `"per-owner"`, its owner's, never another owner's nor
   * the relay's files. `hostSignal` (default `"close-and-exit"`) also decides
   * what a SIGINT, SIGTERM or SIGHUP to the program does to the relay:
   * unless `"ignore"`, the relay closes first (every client told 1001, its
   * sessions closed, their store records left as they are), for 5 s at most,
   * then the CLIs still open are ended as the mode says (`"close-and-exit"`
   * exits the program with 130 / 143 / 129).
   */
  readonly cli?: SubprocessOptions;
  /**
   * The root folder of the sessions: a client's `spawn.cwd` is resolved inside
   * it (and refused when it leads outside, symbolic links followed). It is
   * also the default working directory.
   */
  readonly workspace: string;
  /**
   * How the sessions of different owners (a credential's owner: a static
   * token, or a scoped token's subject) share the host:
   *
   * - `"per-owner"`: each owner gets a folder of its own in the workspace,
   *   `tenants/<id>/` (`id`: 32 hex digits of a SHA-256 of the owner, never
   *   the token), mode 0700: `home/` is its `HOME` and `home/.claude` its
   *   `CLAUDE_CONFIG_DIR` (its settings and transcripts, which `--resume`,
   *   hibernation and the store's resume use), `tmp/` its `TMPDIR` and
   *   `CLAUDE_CODE_TMPDIR` (and `cli.tempDir` unless given), `work/` its
   *   workspace root: `spawn.cwd` and a scoped token's `cwd` are resolved
   *   inside it. `cli.env` and `cli.extraEnv` may not set those four
   *   variables. (Without an `isolation` sandbox every CLI still runs as the
   *   relay's OS user: a tenant that approves its own `Bash` can reach what
   *   that user can.)
   * - `"shared"`: every session runs in the workspace, with the `HOME` and
   *   configuration folder of the relay's (or of `cli.env`).
   *
   * Either way a CLI gets none of the relay's environment but `PATH`, the
   * `ANTHROPIC_*` and `CLAUDE_*` variables (less `CLAUDE_CONFIG_DIR`,
   * `CLAUDE_CODE_TMPDIR`, `CLAUDE_CLI`, `CLAUDE_ENV_FILE`,
   * `CLAUDE_CODE_SSE_PORT`, `CLAUDECODE`, `CLAUDE_CODE_ENTRYPOINT`) and, with
   * `"shared"`, `HOME`: read once, when the relay starts; `cli.env` replaces
   * that list and `cli.extraEnv` goes over it.
   *
   * Default: `"per-owner"`.
   */
  readonly tenancy?: Tenancy;
  /** What clients may choose. */
  readonly policy?: RelayPolicy;
  /**
   * How long a disconnected session's process is kept for a resume, in ms
   * (0 to 2^31-1, or `Infinity`: until the relay closes). Default: 30 000.
   */
  readonly graceMs?: number;
  /**
   * The most bytes of unacknowledged output kept per session for a resume.
   * Also the flow-control window: with half of it unacknowledged the relay
   * stops reading the CLI's stdout until the client acknowledges (the CLI
   * then waits on its pipe, as it would for a slow local reader), so stdout
   * is never dropped, and neither the buffer nor a socket's send queue grows
   * past it, however slowly a client reads. Default: 8 MiB.
   */
  readonly bufferBytes?: number;
  /**
   * The most sessions at once (disconnected ones in their grace included,
   * and starts in progress). A further spawn, or a resume that needs a new
   * process, is refused (`busy`). Default: 16.
   */
  readonly maxSessions?: number;
  /**
   * The most sessions one owner (a static token, or a scoped token's
   * subject) may hold at once, counted as `maxSessions` counts; a further
   * one of that owner is refused (`busy`, naming this option) while other
   * owners still start theirs. Default: a quarter of `maxSessions` (at least
   * 1), so that one tenant cannot take every slot; all of `maxSessions`
   * when the relay takes one static token and no `secrets` (one owner).
   */
  readonly maxSessionsPerOwner?: number;
  /**
   * The most disconnected conversations kept hibernated once their grace
   * ended: their process is closed, and what a resume needs is kept (the
   * owner, the CLI's session id, the sequence numbers and up to 64 KiB of
   * output the client had not acknowledged). The same client (same
   * credential, same session token) resumes one later as it resumes any
   * session; the relay then starts `claude --resume` with the session's
   * spawn request checked again against the resuming credential's policy,
   * as for a resume from the store (what that policy does not allow,
   * the folder included, is refused `not_permitted`; `maxTurns` the request
   * did not name is that policy's), and the model sees the conversation.
   * Beyond the bound the oldest is dropped, the owner's own first (see
   * `maxHibernatedPerOwner`). A turn still running when the grace ends is
   * ended with the process. Needs session persistence (not
   * `cli.persistSession: false`); others end as before. `0` turns
   * hibernation off. Default: 1000.
   */
  readonly maxHibernated?: number;
  /**
   * The most hibernated sessions of one owner (a static token, or a scoped
   * token's subject). An owner that hibernates one more loses its own
   * oldest, and so does it when the relay holds `maxHibernated`; another
   * owner's hibernated session is never dropped for it. When the relay holds
   * `maxHibernated` and the owner none, its session is not kept (its process
   * ends at the grace; with a `sessionStore` it stays resumable from the
   * store). Default: a quarter of `maxHibernated` (at least 1); all of it
   * when the relay takes one static token and no `secrets` (one owner).
   */
  readonly maxHibernatedPerOwner?: number;
  /**
   * How often the relay pings each connection, in ms; a connection that
   * sends nothing for twice as long is dropped (its session waits for a
   * resume); 1 to 2^31-1, or `Infinity` for no heartbeat. Default: 15 000.
   */
  readonly heartbeatMs?: number;
  /**
   * How long a new connection has to send its hello, in ms (1 to 2^31-1, or
   * `Infinity` for no limit). Default: 10 000.
   */
  readonly helloTimeoutMs?: number;
  /**
   * The largest text frame taken from a client, in bytes (a batch of messages
   * is one frame), checked before it is parsed; a larger one closes the
   * connection with 1009 and a reason naming this option. Default: 16 MiB.
   */
  readonly maxFrameBytes?: number;
  /**
   * The most bytes of a session's input received but not yet written to the
   * CLI (counting the frames that arrive while the CLI starts). A client that
   * sends beyond it is refused (`too_large`, close 1009); the session stays
   * for a resume. Clients that wait for the relay's input acknowledgements, as
   * `remote()` does, never reach it. Keep it at least `maxFrameBytes`.
   * Default: 32 MiB.
   */
  readonly maxPendingInputBytes?: number;
  /**
   * The most connections at once that have not finished their handshake (the
   * upgrade, then the hello, until their session is ready; a connection
   * refused after its upgrade counts until its socket has closed, or for 2 s
   * after the relay's close frame when its client never answers it); a
   * further upgrade is answered with HTTP 503. Each such connection is also
   * bounded in time by `helloTimeoutMs`. Default: 64.
   */
  readonly maxPendingConnections?: number;
  /**
   * OpenTelemetry spans and metrics of the relay, as `DuplexSession.start`
   * takes them (the `@opentelemetry/api` module, a tracer and meter, or an
   * `onSpan` callback). Spans: `claude.relay.connection` (one per WebSocket:
   * peer address, resumed or not, outcome `ready` / `refused` with its kind /
   * `closed`, close code) and `claude.relay.session` (one per spawned CLI,
   * from spawn to exit: model, permission mode, pid, exit code or signal, the
   * owner's kind, never its token; resumes, dropped connections and
   * flow-control stalls as events), both children of the client's trace
   * context when its hello carries one; the CLI gets the session span's
   * context. Metrics: `claude.relay.connections`, `claude.relay.sessions`
   * (live now), `claude.relay.resumes`, `claude.relay.refusals` (by kind),
   * `claude.relay.flow_stalls`, `claude.relay.stall.duration` (seconds),
   * `claude.relay.hibernations`, `claude.relay.wakes`, `claude.relay.fenced`
   * (sessions ended because another relay sharing the store resumed their
   * conversation). Give `api` for the spans to join the client's trace (a bare tracer
   * cannot take a parent from another process). Without telemetry, the CLI
   * still gets the client's trace context. Default: none (and then it costs
   * nothing).
   */
  readonly telemetry?: TelemetryOptions;
  /** Aborting it closes the relay. */
  readonly signal?: AbortSignal;
  /**
   * A session store shared by every relay that serves the same clients (the
   * official SDK's `SessionStore` contract: PostgreSQL for several hosts,
   * a directory for one). With it:
   *
   * - Every CLI mirrors its transcript there (`--session-mirror`; the relay
   *   takes the `transcript_mirror` lines out of the output, so clients never
   *   see them, appends them in batches, flushes at each `result`, and catches
   *   a store that was down up from the local transcript, as
   *   `subprocess({ sessionStore })` does; `cli.mirror` tunes the batches). A
   *   `result` line reaches the client once the store holds that turn (or
   *   after `storeTimeoutMs`, or at once when an append fails), so a relay
   *   that dies after a turn leaves the turn in the store. Mirror events go
   *   to `onMirror`.
   * - Every resumable session has a record there, under the project key
   *   `duplex-relay` (`RELAY_SESSIONS_PROJECT_KEY`) and the base64url SHA-256
   *   of its session token as session id (never the token itself): the SHA-256
   *   of its owner, the CLI's session id, the spawn request, the folder it
   *   runs in and the last input line written to the CLI. It is appended at
   *   the start, before each input line is written (the line may reach the
   *   CLI from then on: a relay taking the conversation over waits for that
   *   write to settle, so no turn runs on two CLIs), after it was written and
   *   before its acknowledgement (so every acknowledged line is recorded),
   *   at hibernation and at the end.
   * - The owner of every conversation a relay names (the CLI's session id)
   *   is kept there too, under the same project key and the SHA-256 of
   *   `conversation:<CLI session id>`: `spawn.resume` of that id works on
   *   every relay sharing the store, for that owner only (see
   *   `RelayPolicy.allowResume`).
   * - A relay asked to resume a session it does not hold loads the record,
   *   answers another owner's exactly as an unknown session
   *   (`unknown_session`), checks the spawn request against the asking
   *   credential's policy again, and starts `claude --resume` from the stored
   *   transcript (refused `busy` while the record holds less input than
   *   the client was acknowledged). Input numbering continues from the record; output
   *   numbering from what the client has: that relay holds none of the old
   *   one's output, so output the old relay had produced and the client had
   *   not received is gone (a turn that was running when the old relay died
   *   gives no result). A re-sent input line the record counts as written is
   *   acknowledged and not written again, nor a re-sent user line whose uuid
   *   the stored transcript holds (no turn is doubled).
   *
   * Put the relays behind a load balancer that routes by a conversation key
   * (so that a conversation stays on one relay while that relay lives), or
   * give `remote()` several URLs. A relay that closes leaves its records
   * as they are: another relay resumes its conversations. Needs session
   * persistence (not `cli.persistSession: false`). Default: none (no
   * mirroring, no records; the output goes through untouched).
   */
  readonly sessionStore?: SessionStore;
  /**
   * The store's project key of the CLIs' transcripts. Relays whose
   * workspaces are at different paths need the same one (by default it is
   * the CLI's project folder name for the session's working folder, as in
   * `subprocess()`). Needs `sessionStore`; `duplex-relay` is reserved.
   */
  readonly projectKey?: string;
  /**
   * The bound, in ms, of loading a session record from the store, of each
   * append of one, of an input acknowledgement's wait for its record and of
   * a `result` line's wait for the mirror: with the store down or slow, the
   * acknowledgement or the result goes out after it (the line was written;
   * the relay keeps retrying the record, the mirror catches up). It also
   * bounds a fence check, asked again within it when a client comes back
   * (past it the client is refused `busy`, and tries again). Default: 5000.
   */
  readonly storeTimeoutMs?: number;
  /**
   * Called with each event of a CLI's transcript mirror: `failed` (the
   * store is behind), `caught_up`, `dropped`. They are also span events
   * (`mirror`) of `claude.relay.session` when telemetry is on.
   */
  readonly onMirror?: (event: MirrorEvent) => void;
}
