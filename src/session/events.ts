// This module is browser compatible.
/**
 * What a session delivers to its subscribers: the CLI's frames as parsed,
 * plus events of the session itself.
 *
 * @module
 */

import type { MirrorEvent } from "../store/mirror_target.ts";
import type { DuplexError, TransportExit } from "../errors.ts";
import type { PermissionRequest } from "../permissions/permission.ts";
import type { ConversationFrame, UnknownFrame } from "../protocol/messages.ts";

/** The CLI asks whether a tool may run. Answer with `respondToPermission` or the handler. */
export interface PermissionRequestEvent {
  /** Always `"permission_request"`. */
  type: "permission_request";
  /** The request, with its id, tool name and input. */
  request: PermissionRequest;
}

/** A permission request was settled (answered, or withdrawn). */
export interface PermissionResolvedEvent {
  /** Always `"permission_resolved"`. */
  type: "permission_resolved";
  /** The id of the settled request (its `PermissionRequest.requestId`). */
  requestId: string;
  /** The tool the request was about. */
  toolName: string;
  /** `"cancelled"`: withdrawn by the CLI or dropped because the session ended. */
  behavior: "allow" | "deny" | "cancelled";
  /** Who settled it. */
  source: "handler" | "respond" | "timeout" | "cli" | "session";
}

/**
 * A turn sent with the queue waits behind `position` others (the CLI queued
 * its line). Only turns sent with `queue` report it.
 */
export interface TurnQueuedEvent {
  /** Always `"turn_queued"`. */
  type: "turn_queued";
  /** The user line's uuid (`turn.uuid`). */
  uuid: string;
  /** How many turns run or wait before it (1: it runs next). */
  position: number;
}

/** A turn sent with the queue started running. Only turns sent with `queue` report it. */
export interface TurnStartedEvent {
  /** Always `"turn_started"`. */
  type: "turn_started";
  /** The user line's uuid (`turn.uuid`). */
  uuid: string;
}

/** One line the CLI wrote on stderr. */
export interface StderrEvent {
  /** Always `"stderr"`. */
  type: "stderr";
  /** The line's text. */
  line: string;
}

/** This subscriber was too slow and lost `count` events here. */
export interface LaggedEvent {
  /** Always `"lagged"`. */
  type: "lagged";
  /** How many events this subscriber missed. */
  count: number;
}

/** The session ended; no events follow. */
export interface ExitEvent {
  /** Always `"exit"`. */
  type: "exit";
  /** How the session ended. */
  status: ExitStatus;
}

/** Something odd the session skipped or tolerated, reported instead of dropped silently. */
export interface DiagnosticEvent {
  /** Always `"diagnostic"`. */
  type: "diagnostic";
  /**
   * What happened: a stdout line skipped or repaired (`noise` … `invalid_utf8`), or a
   * session-level event (`feature_degraded`: the CLI's version lacks a feature the session
   * then does without, said once per feature).
   */
  kind:
    | "noise"
    | "invalid_json"
    | "not_an_object"
    | "line_too_long"
    | "invalid_utf8"
    | "stray_control_response"
    | "stray_result"
    | "permission_handler_error"
    | "stream_error"
    | "turn_interrupted"
    | "turn_abandoned"
    | "cli_unresponsive"
    | "mcp_server_failed"
    | "feature_degraded";
  /** A human-readable sentence. */
  message: string;
  /** The offending line's size in bytes (line-level kinds only). */
  bytes?: number;
  /** The start of the offending line, at most 200 characters (line-level kinds only). */
  excerpt?: string;
}

/** Anything a subscriber receives. Switch on `type`. */
export type SessionEvent =
  | ConversationFrame
  | UnknownFrame
  | PermissionRequestEvent
  | PermissionResolvedEvent
  | TurnQueuedEvent
  | TurnStartedEvent
  | StderrEvent
  | LaggedEvent
  | ExitEvent
  | DiagnosticEvent
  | MirrorEvent;

/**
 * Whether the session runs, and if not, how it ended. Persisted: after the
 * end it still tells a clean end from a failure.
 */
export type ExitStatus =
  | { state: "running" }
  | {
    state: "completed";
    /** The exit code, when the peer was a process. */
    code: number | null;
    signal: string | null;
    exit: TransportExit;
  }
  | {
    state: "failed";
    code: number | null;
    signal: string | null;
    /** The error pending operations were rejected with. */
    error: DuplexError;
    exit: TransportExit;
  };

/**
 * Where a session is in its life (derived from one lifecycle state, like
 * `alive` and `exitStatus`).
 *
 * - `ready`: open and usable.
 * - `closing`: `close()` was called (or the session failed); waiting for the peer to end.
 * - `closed`: ended cleanly, or by request.
 * - `failed`: ended with an error the caller did not ask for (non-zero exit,
 *   signal, lost connection, a session that could no longer read its peer).
 */
export type SessionState = "ready" | "closing" | "closed" | "failed";
