// This module is browser compatible.
/**
 * The wire protocol between `@duplex/claude/remote` (the client, in an edge
 * worker) and `@duplex/claude/relay` (the server that runs `claude`), over one
 * WebSocket per session connection. Version 1.
 *
 * - Authentication: the bearer token travels as a WebSocket subprotocol,
 *   `duplex-claude.bearer.<base64url(token)>`, next to {@linkcode SUBPROTOCOL}
 *   (the Web `WebSocket` constructor cannot set headers); an
 *   `Authorization: Bearer <token>` header is accepted too. The token is a
 *   static one the relay was started with, or a scoped HS256 JWT minted by
 *   `mintRelayToken` (`@duplex/claude/token`, `src/token/relay_token.ts`). Every session is bound to the
 *   credential that created it (the static token, or the JWT's subject).
 * - Bounds: a text frame of more than the relay's `maxFrameBytes` is refused
 *   before it is parsed, and input beyond `maxPendingInputBytes` waiting for
 *   the CLI too (kind `too_large`, close code 1009); honest clients wait for
 *   input acknowledgements and never meet the second bound.
 * - Control messages are text frames holding one JSON object each
 *   ({@linkcode ClientMessage}, {@linkcode RelayMessage}); a client frame may
 *   also hold a batch, a JSON array of messages handled in order. The client
 *   writes at most one frame per burst (its acknowledgements ride with its
 *   input): a Web `WebSocket` cannot disable Nagle's algorithm, and a second
 *   small write before the relay answers the first stalls for the relay's
 *   delayed TCP ACK (40 ms on Linux).
 * - The CLI's stdout travels as binary frames: an 8-byte big-endian sequence
 *   number, then the bytes exactly as the CLI wrote them (cut anywhere: the
 *   session's decoder frames, bounds and checks them as it does for a local
 *   process). Stdout chunks, stderr lines and the exit share one output
 *   sequence, starting at 1.
 * - Input lines carry their own sequence, starting at 1. The relay applies
 *   each once, in order, and acknowledges them; the client acknowledges
 *   output. After a dropped connection the client reconnects with
 *   `resume: { session, after }` and re-sends unacknowledged input; the relay
 *   replays output after `after`. Nothing is lost or duplicated while the
 *   relay still holds what the client has not acknowledged.
 * - Tracing: a hello may carry the client's W3C trace context
 *   (`trace: { traceparent, tracestate? }`, Trace Context Level 1). The relay
 *   checks its format and drops a malformed one (the hello is still taken);
 *   a valid one becomes the parent of the relay's spans and reaches the CLI.
 * - Each end reads the other's text frames with the typed parsers of
 *   `wire_parse.ts` (`parseClientFrame`, `parseRelayMessage`), which check
 *   every field: neither end trusts the shape of a message it did not check.
 *
 * @module
 */

import { base64url, fromBase64url } from "../codec/base64url.ts";
import type { TransportExit } from "../errors.ts";

/** The WebSocket subprotocol of this protocol version. */
export const SUBPROTOCOL = "duplex-claude.v1";

/** Prefix of the subprotocol that carries the bearer token (base64url after it). */
export const BEARER_PREFIX = "duplex-claude.bearer.";

/** Bytes of the sequence number in front of each binary (stdout) frame. */
export const SEQ_BYTES = 8;

/**
 * What a client may ask the relay to spawn. The relay's policy decides which
 * of these a client may choose and from which values; nothing else (no raw
 * arguments, MCP configs or permission bypasses) can be asked for.
 */
export interface SpawnRequest {
  /** Model alias or name, for example `"sonnet"`. */
  model?: string;
  /** Permission mode (the relay refuses `bypassPermissions` unless its policy allows it). */
  permissionMode?: string;
  /** `stream_event` frames for partial messages. */
  includePartialMessages?: boolean;
  /** Stop after this many agentic turns per prompt. */
  maxTurns?: number;
  /** A sub-folder of the relay's workspace root to run in. */
  cwd?: string;
  /** Resume an earlier CLI conversation by its session id. */
  resume?: string;
}

/** Messages from the client (text frames). */
export type ClientMessage =
  | {
    /** First message of every connection. */
    t: "hello";
    v: 1;
    /** For a new session: what to spawn. */
    spawn?: SpawnRequest;
    /**
     * To continue a session after a dropped connection: its token, the last
     * output the client has, the highest input the relay acknowledged to it
     * (`applied`), and the user line the last result it read answers
     * (`answered`, that line's `uuid`). A relay resuming from the store
     * refuses `busy` while the store's record holds less input, or its
     * transcript lacks that line: the relay that ran the session may still be
     * writing them, and a history without a turn the client was given would
     * silently lose it.
     */
    resume?: { session: string; after: number; applied?: number; answered?: string };
    /**
     * The client's W3C trace context (its session span): the relay's spans
     * for this connection and session join that trace, and so does the CLI
     * (`TRACEPARENT` / `TRACESTATE`). A malformed one is dropped unread.
     */
    trace?: { traceparent: string; tracestate?: string };
  }
  | { t: "in"; seq: number; line: string }
  | { t: "ack"; seq: number }
  | { t: "eof" }
  | { t: "close" }
  | { t: "ping"; at: number }
  | { t: "pong"; at: number };

/** Kinds of a relay's refusal, as a list (what `parseRelayMessage` accepts). */
export const RELAY_ERROR_KINDS = [
  "unauthorized",
  "not_permitted",
  "protocol",
  "unknown_session",
  "resume_gap",
  "spawn_failed",
  "busy",
  "too_large",
] as const;

/** Kinds of a relay's refusal. */
export type RelayErrorKind = typeof RELAY_ERROR_KINDS[number];

/** Messages from the relay (text frames; stdout travels in binary frames). */
export type RelayMessage =
  | {
    /** Answer to `hello`: the session token to resume with, and the last input applied. */
    t: "ready";
    session: string;
    resumed: boolean;
    inSeq: number;
    /**
     * The CLI's process id, only when the relay's policy says so
     * (`policy.exposePid`, off by default: a pid tells a client about the host).
     */
    pid?: number;
    /**
     * How long the relay keeps a disconnected session, in milliseconds;
     * `null` when it keeps it without a time limit (`graceMs: Infinity`).
     */
    graceMs: number | null;
    /**
     * Set when the session runs in a new CLI (resumed from the store, or
     * woken from a hibernation): the CLI before took the input up to `inSeq`,
     * and none of what it wrote after output `outSeq` reaches the client. A
     * turn of those lines without a result by then never gets one: the
     * client ends it with an error result (`lostTurnsLine`). So does a turn
     * of a line named in `uuids` (a resume from the store: user lines the CLI
     * before took after the client's last result, which the relay may have
     * recorded as taken too late to be counted in `inSeq`).
     */
    gone?: { inSeq: number; outSeq: number; uuids?: string[] };
  }
  | { t: "err"; seq: number; line: string }
  | { t: "exit"; seq: number; exit: TransportExit }
  | { t: "ack"; seq: number }
  | { t: "error"; kind: RelayErrorKind; message: string }
  | { t: "ping"; at: number }
  | { t: "pong"; at: number };

/** The relay's answer to `hello`. */
export type ReadyMessage = Extract<RelayMessage, { t: "ready" }>;

/**
 * A refusal by the relay, with its wire kind: what the relay sends as an
 * `error` message before closing, and what the client receives as one.
 */
export class Refusal extends Error {
  /** The wire error kind. */
  readonly kind: RelayErrorKind;
  /**
   * For `busy`: how long the relay (or a proxy in front of it) asked to wait
   * before trying again (its `Retry-After`), when it said.
   */
  readonly retryAfterMs?: number;

  /**
   * @param kind The wire error kind.
   * @param message What was refused and why.
   * @param retryAfterMs For `busy`, the wait the refusing side asked for.
   */
  constructor(kind: RelayErrorKind, message: string, retryAfterMs?: number) {
    super(message);
    this.name = "Refusal";
    this.kind = kind;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/** WebSocket close codes the relay (and, where marked, the client) uses. */
export const CLOSE = {
  /** Normal end (the session ended). */
  normal: 1000,
  /** The peer broke the protocol. */
  protocol: 1002,
  /** Policy refusal (bad token, origin or option not allowed). */
  policy: 1008,
  /** A frame, or the input waiting for the CLI, over the relay's bounds. */
  tooBig: 1009,
  /** The relay shuts down. */
  goingAway: 1001,
  /** A newer connection took the session over. */
  replaced: 4000,
  /** The session is unknown or its output needed for the resume is gone. */
  cannotResume: 4004,
  /** (Client) The relay was silent for two heartbeats. */
  noHeartbeat: 4001,
  /**
   * (Client) The relay broke the protocol. A Web `WebSocket` may close only
   * with 1000 or 3000-4999, so the client cannot use 1002.
   */
  relayBrokeProtocol: 4002,
} as const;

/**
 * Encodes a token as the bearer subprotocol.
 *
 * @param token The bearer token.
 * @returns `duplex-claude.bearer.<base64url>`.
 */
export function bearerProtocol(token: string): string {
  return BEARER_PREFIX + base64url(new TextEncoder().encode(token));
}

/**
 * Reads the token out of a bearer subprotocol.
 *
 * @param protocol One offered subprotocol.
 * @returns The token, or undefined if this is not a bearer subprotocol or not valid base64url.
 */
export function tokenFromProtocol(protocol: string): string | undefined {
  if (!protocol.startsWith(BEARER_PREFIX)) return undefined;
  const bytes = fromBase64url(protocol.slice(BEARER_PREFIX.length));
  if (bytes === undefined) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Frames stdout bytes with their sequence number.
 *
 * @param seq The output sequence number.
 * @param bytes The bytes.
 * @returns A new buffer: 8-byte big-endian `seq`, then `bytes`.
 */
export function encodeOutput(seq: number, bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const frame = new Uint8Array(SEQ_BYTES + bytes.length);
  const view = new DataView(frame.buffer);
  view.setUint32(0, Math.floor(seq / 2 ** 32));
  view.setUint32(4, seq >>> 0);
  frame.set(bytes, SEQ_BYTES);
  return frame;
}

/**
 * Splits a binary frame into its sequence number and bytes.
 *
 * @param frame A binary frame from the relay.
 * @returns The sequence number and a view of the bytes, or undefined when the frame is too short.
 */
export function decodeOutput(frame: Uint8Array): { seq: number; bytes: Uint8Array } | undefined {
  if (frame.length < SEQ_BYTES) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, SEQ_BYTES);
  const seq = view.getUint32(0) * 2 ** 32 + view.getUint32(4);
  return { seq, bytes: frame.subarray(SEQ_BYTES) };
}

/**
 * Compares two strings in time that depends only on their lengths.
 *
 * @param a One string (the expected secret).
 * @param b The other (what was offered).
 * @returns True if they are equal.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  const length = Math.max(x.length, y.length);
  for (let i = 0; i < length; i++) {
    diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0);
  }
  return diff === 0;
}

/** The `terminal_reason` of the result {@linkcode lostTurnsLine} makes. */
export const LOST_TERMINAL_REASON = "lost_with_cli";

/**
 * The result that ends turns whose CLI is gone without answering them (its
 * relay died, or it was closed in a hibernation, mid-turn): what a client
 * puts in the stdout stream it reads, after what that CLI wrote, so that the
 * session settles those turns in order, with an error result, instead of
 * waiting for a result no CLI will write. A line of its own (a newline ends
 * a line the CLI left half-written).
 *
 * @param uuids The user lines' uuids, in order.
 * @returns The bytes: a newline, the result's JSON, a newline.
 */
export function lostTurnsLine(uuids: readonly string[]): string {
  const result = {
    type: "result",
    subtype: "error_during_execution",
    "is_error": true,
    "duration_ms": 0,
    "duration_api_ms": 0,
    "num_turns": 0,
    // No session_id: the client does not know the CLI's (the turn's `sessionId` is undefined).
    "terminal_reason": LOST_TERMINAL_REASON,
    errors: [
      "The CLI that took this turn is gone (its relay ended it) without its result; " +
      "the conversation goes on in a new CLI: send the turn again",
    ],
    "user_message_uuid": uuids.at(-1),
    "user_message_uuids": [...uuids],
  };
  return `\n${JSON.stringify(result)}\n`;
}
