// This module is browser compatible.
/**
 * Drives a `claude` that a relay (`@duplex/claude/relay`) runs on another
 * host, over one WebSocket, from any runtime with the Web `WebSocket`: Deno
 * Deploy-style workers that cannot spawn processes included.
 *
 * {@linkcode remote} returns a transport factory for `DuplexSession.start`.
 * The transport authenticates with a bearer token (sent as a WebSocket
 * subprotocol, since the Web `WebSocket` cannot set headers), asks the relay
 * to spawn `claude` within the relay's policy, and moves the CLI's stdout
 * bytes and your input lines with sequence numbers. When the connection
 * drops, it reconnects and resumes the same process: output is replayed from
 * the last chunk it saw and unacknowledged input is sent again, so nothing is
 * lost or duplicated (pending permission requests included) while the relay
 * keeps the session (its grace period). Heartbeats detect a dead relay.
 * When the session goes on in a new CLI (another relay resumed it from the
 * store after its relay died, or it was woken from a hibernation), a turn
 * the CLI before took and never answered ends with an error result
 * (`terminalReason` {@linkcode LOST_TERMINAL_REASON}) instead of waiting.
 * The relay's `ready` names the CLI's pid only when its policy exposes it
 * (`policy.exposePid`); the transport's description names it then.
 *
 * A browser or worker should not hold the relay's long-lived secret: the
 * application server mints it a short-lived scoped token with
 * `mintRelayToken` of `@duplex/claude/token` (WebCrypto only, so it runs on
 * the edge too) and the client passes that as `token`. A fixed token is
 * presented again by every reconnection, so the session can resume only
 * while it is valid; a token function (`token: () => fetchToken()`) is
 * called for the first connection and again for each reconnection attempt,
 * so a long session reconnects with a fresh token after the old one expired.
 *
 * @example Drive a claude that a relay runs elsewhere
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { remote } from "@duplex/claude/remote";
 *
 * await using session = await DuplexSession.start({
 *   transport: remote({
 *     url: "wss://relay.example.com/v1",
 *     token: Deno.env.get("RELAY_TOKEN") ?? "",
 *     spawn: { model: "sonnet", permissionMode: "default" },
 *   }),
 *   onPermission: (request) => ({ behavior: "deny", message: `no ${request.toolName} here` }),
 * });
 * const turn = await session.send("Say hi.");
 * console.log(turn.result.text);
 * ```
 *
 * @example A fresh token for every connection
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { remote } from "@duplex/claude/remote";
 *
 * await using session = await DuplexSession.start({
 *   transport: remote({
 *     url: "wss://relay.example.com/v1",
 *     // Your server mints a short-lived token (mintRelayToken) for each call.
 *     token: async ({ signal }) => (await fetch("/relay-token", { signal })).text(),
 *   }),
 * });
 * ```
 *
 * @example Options are checked when the factory is made, before any connection
 * ```ts
 * import { remote } from "@duplex/claude/remote";
 * import assert from "node:assert/strict";
 *
 * const factory = remote({ url: ["wss://a.example/v1", "wss://b.example/v1"], token: "t" });
 * assert.equal(typeof factory, "function");
 * assert.throws(() => remote({ url: "https://a.example/v1", token: "t" }), TypeError);
 * ```
 *
 * @module
 */

export { remote } from "./remote.ts";
export {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_RECONNECT_ATTEMPTS,
  DEFAULT_RECONNECT_INITIAL_DELAY_MS,
  DEFAULT_RECONNECT_MAX_DELAY_MS,
  type RemoteOptions,
  type TokenContext,
  type TokenFunction,
  type WebSocketConstructor,
} from "./remote_options.ts";
export type { SpawnRequest } from "../../src/wire/wire.ts";
/** The `terminalReason` of a turn whose CLI went (its relay died) without answering it. */
export { LOST_TERMINAL_REASON } from "../../src/wire/wire.ts";
// Deprecated: the tokens' own entry is `@duplex/claude/token`.
export {
  MAX_RELAY_TOKEN_TTL_SECONDS,
  mintRelayToken,
  type MintRelayTokenOptions,
  type RelayTokenPolicy,
} from "../../src/token/legacy.ts";
