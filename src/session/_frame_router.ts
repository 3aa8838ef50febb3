// This module is browser compatible.
/* Where each frame the CLI writes goes: the control protocol's to its parts, the rest to subscribers. */

import { classifyFrame, isSystemInit } from "../protocol/guards.ts";
import type { CliCheck } from "./_cli_check.ts";
import { redeliveredRequests } from "./_inbound_registry.ts";
import type { ControlChannel } from "./_control_channel.ts";
import type { ControlRouter } from "./_control_router.ts";
import type { TranscriptMirror } from "./_mirror.ts";
import type { SessionTelemetry } from "./_session_telemetry.ts";
import type { TurnTracker } from "./_turn_tracker.ts";
import type { SessionEvent } from "./events.ts";

/** The parts a frame can go to. */
export interface FrameParts {
  /** Serves the CLI's requests (and their withdrawals). */
  readonly requests: ControlRouter;
  /** Settles the answers to our requests. */
  readonly control: ControlChannel;
  /** Takes results and lines' lifecycles. */
  readonly turns: TurnTracker;
  /** Takes `transcript_mirror` frames (they are then not published), when the transport mirrors. */
  readonly mirror: TranscriptMirror | undefined;
  /** Notes the session's identity from `system/init`. */
  readonly telemetry: SessionTelemetry;
  /** Checks the first `system/init` against what the transport asked of the CLI, when it says. */
  readonly cli: CliCheck | undefined;
  /** `system/init`: the session id. */
  identified(sessionId: string): void;
  /** `system/commands_changed`: the CLI's new list of slash commands. */
  commandsChanged(commands: unknown[]): void;
  /** Delivers an event to subscribers. */
  publish(event: SessionEvent): void;
  /** A result answered this user line (the transport's `answered`, once per line), when asked. */
  readonly answered?: (uuid: string) => void;
}

/**
 * Routes one parsed line.
 *
 * @param raw The JSON object the decoder read.
 * @param parts Where frames go.
 */
export function routeFrame(raw: Record<string, unknown>, parts: FrameParts): void {
  const frame = classifyFrame(raw);
  switch (frame.type) {
    case "control_request":
      parts.requests.handle(frame.request_id, frame.request);
      return;
    case "control_response": {
      // An initialize's reply lists the CLI's requests still waiting: served as if they came now.
      const redelivered = parts.control.subtypeOf(frame.response.request_id) === "initialize"
        ? redeliveredRequests(frame.response)
        : [];
      if (!parts.control.settle(frame)) {
        parts.publish({
          type: "diagnostic",
          kind: "stray_control_response",
          message:
            `Ignored a control_response for ${frame.response.request_id}: no request of ours waits for it`,
        });
      }
      for (const { requestId, request } of redelivered) parts.requests.handle(requestId, request);
      return;
    }
    case "control_cancel_request":
      parts.requests.cancel(frame.request_id);
      return;
    case "keep_alive":
      return;
    case "system":
      if (isSystemInit(frame)) {
        parts.identified(frame.session_id);
        parts.telemetry.identified(frame);
        parts.cli?.systemInit(frame);
      } else if (frame.subtype === "commands_changed" && Array.isArray(frame.commands)) {
        parts.commandsChanged(frame.commands);
      }
      break;
    case "result": {
      parts.publish(frame);
      parts.mirror?.flushAll();
      parts.turns.onResult(frame);
      const uuids: unknown[] = Array.isArray(frame.user_message_uuids)
        ? frame.user_message_uuids
        : [frame.user_message_uuid];
      for (const uuid of uuids) if (typeof uuid === "string") parts.answered?.(uuid);
      return;
    }
    case "transcript_mirror":
      if (parts.mirror) {
        parts.mirror.take(frame);
        return;
      }
      break;
    case "command_lifecycle":
      parts.publish(frame);
      parts.turns.onLifecycle(frame);
      return;
    case "unknown":
      if (frame.frameType === "control_request" && typeof frame.frame.request_id === "string") {
        parts.requests.refuse(frame.frame.request_id); // unreadable, yet answered
      }
      break;
  }
  parts.publish(frame);
}
