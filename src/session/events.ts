// This module is browser compatible.
/**
 * What a session delivers to its subscribers: the CLI's frames as parsed,
 * plus events of the session itself.
 *
 * @module
 */

import type { DuplexError, TransportExit } from "../errors.ts";
import type { PermissionRequest } from "../permissions/permission.ts";
import type { ConversationFrame, UnknownFrame } from "../protocol/messages.ts";

/** The CLI asks whether a tool may run. Answer with `respondToPermission` or the handler. */
export interface PermissionRequestEvent {
  type: "permission_request";
  request: PermissionRequest;
}

/** A permission request was settled (answered, or withdrawn). */
export interface PermissionResolvedEvent {
  type: "permission_resolved";
  requestId: string;
  toolName: string;
  /** `"cancelled"`: withdrawn by the CLI or dropped because the session ended. */
  behavior: "allow" | "deny" | "cancelled";
  /** Who settled it. */
  source: "handler" | "respond" | "timeout" | "cli" | "session";
}

/** One line the CLI wrote on stderr. */
export interface StderrEvent {
  type: "stderr";
  line: string;
}

/** This subscriber was too slow and lost `count` events here. */
export interface LaggedEvent {
  type: "lagged";
  count: number;
}

/** The session ended; no events follow. */
export interface ExitEvent {
  type: "exit";
  status: ExitStatus;
}

/** Something odd the session skipped or tolerated, reported instead of dropped silently. */
export interface DiagnosticEvent {
  type: "diagnostic";
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
    | "cli_unresponsive";
  message: string;
  bytes?: number;
  excerpt?: string;
}

/** Anything a subscriber receives. Switch on `type`. */
export type SessionEvent =
  | ConversationFrame
  | UnknownFrame
  | PermissionRequestEvent
  | PermissionResolvedEvent
  | StderrEvent
  | LaggedEvent
  | ExitEvent
  | DiagnosticEvent;

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
