// This module is browser compatible.
/* Where each frame the CLI writes goes: the control protocol's to its parts, the rest to subscribers. */

import { classifyFrame, isSystemInit } from "../protocol/guards.ts";
import type { ControlRequestBody, ControlResponseFrame } from "../protocol/control.ts";
import type { CommandLifecycleFrame, ResultFrame, SystemInitFrame } from "../protocol/messages.ts";
import type { TranscriptMirrorFrame } from "../protocol/status_frames.ts";
import type { SessionEvent } from "./events.ts";

/** The parts a frame can go to. */
export interface FrameRoutes {
  /** A request of the CLI's (to the control router). */
  request(requestId: string, body: ControlRequestBody): void;
  /** An answer to a request of ours; false when nobody waits for it. */
  response(frame: ControlResponseFrame): boolean;
  /** The CLI withdrew one of its requests. */
  cancel(requestId: string): void;
  /** A request of the CLI's that cannot be read: answer it with an error. */
  refuse(requestId: string): void;
  /** `system/init`: the session id and model. */
  init(frame: SystemInitFrame): void;
  /** A turn's result (after it was published). */
  result(frame: ResultFrame): void;
  /** A line's lifecycle (after it was published). */
  lifecycle(frame: CommandLifecycleFrame): void;
  /** A `transcript_mirror` frame: true when a mirror took it (it is then not published). */
  mirror(frame: TranscriptMirrorFrame): boolean;
  /** Delivers an event to subscribers. */
  publish(event: SessionEvent): void;
}

/**
 * Routes one parsed line.
 *
 * @param raw The JSON object the decoder read.
 * @param routes Where frames go.
 */
export function routeFrame(raw: Record<string, unknown>, routes: FrameRoutes): void {
  const frame = classifyFrame(raw);
  switch (frame.type) {
    case "control_request":
      routes.request(frame.request_id, frame.request);
      return;
    case "control_response":
      if (!routes.response(frame)) {
        routes.publish({
          type: "diagnostic",
          kind: "stray_control_response",
          message:
            `Ignored a control_response for ${frame.response.request_id}: no request of ours waits for it`,
        });
      }
      return;
    case "control_cancel_request":
      routes.cancel(frame.request_id);
      return;
    case "keep_alive":
      return;
    case "system":
      if (isSystemInit(frame)) routes.init(frame);
      break;
    case "result":
      routes.publish(frame);
      routes.result(frame);
      return;
    case "transcript_mirror":
      if (routes.mirror(frame)) return;
      break;
    case "command_lifecycle":
      routes.publish(frame);
      routes.lifecycle(frame);
      return;
    case "unknown":
      if (frame.frameType === "control_request" && typeof frame.frame.request_id === "string") {
        routes.refuse(frame.frame.request_id); // unreadable, yet answered
      }
      break;
  }
  routes.publish(frame);
}
