// This module is browser compatible.
/**
 * `remote()`: the transport factory of `@duplex/claude/remote`.
 *
 * @module
 */

import type {
  Transport,
  TransportFactory,
  TransportOpenContext,
} from "../../src/transport/transport.ts";
import { RemoteTransport } from "./_remote_transport.ts";
import { checkOptions, type RemoteOptions } from "./remote_options.ts";

/**
 * A transport factory that connects to a relay and asks it to run `claude`.
 * The session calls it; it resolves once the relay has spawned the CLI, or
 * rejects with a `DuplexError`: `unauthorized` (bad token, or a token
 * function that threw), `not_permitted` (an origin the relay does not allow, an option its policy refused, or a
 * connection the runtime does not permit: in Deno, `--allow-net=<host>`);
 * the relay refuses a token or an origin with HTTP 401 / 403 before the
 * upgrade, which a WebSocket cannot read, so a connection that fails before
 * it opens is followed by one `GET` of the same URL over HTTP(S), the token
 * in an `Authorization` header, to read why (a browser page needs nothing
 * more: the relay allows that request from any origin); `timeout`, `closed`
 * (no relay there: the runtime's words, close code and reason),
 * `process_exited` (the CLI could not start), `protocol` (not a relay of
 * this version), `not_found` (`spawn.resume` names a conversation the relay
 * does not know, or not for this token's owner), `invalid_argument` (a token
 * function returned no string), `closed` with a `busy` refusal as its cause
 * (every relay still busy after the `reconnect` attempts: a busy relay, or
 * HTTP 429 / 503 before the upgrade, passes the start to the next relay and
 * is tried again after its `Retry-After`).
 * Neither `unauthorized` nor `not_permitted` is retried, on another relay or by reconnecting. Aborting
 * the session's start signal rejects with its reason, unchanged. The
 * session's trace context (`DuplexSession.start({ telemetry })`) travels in
 * the handshake, so the relay's spans and the CLI join the session's trace.
 *
 * @example Drive a claude that a relay runs elsewhere
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { remote } from "@duplex/claude/remote";
 *
 * await using session = await DuplexSession.start({
 *   transport: remote({ url: "wss://relay.example.com/v1", token: "…", spawn: { model: "sonnet" } }),
 * });
 * const turn = await session.send("Say hi.");
 * console.log(turn.result.text);
 * ```
 *
 * @param options Where the relay is, the token, what to spawn.
 * @returns A factory for `DuplexSession.start({ transport })`.
 * @throws {TypeError} If `url` or `token` (a string or a function) is missing or `url` is not a ws:/wss: URL.
 * @throws {RangeError} For a `…Ms` option out of range (1 to 2^31-1, or Infinity).
 */
export function remote(options: RemoteOptions): TransportFactory {
  const settings = checkOptions(options);
  return function openRemote(context?: TransportOpenContext): Promise<Transport> {
    return RemoteTransport.open(settings, context);
  };
}
