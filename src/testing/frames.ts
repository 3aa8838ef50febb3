// This module is browser compatible.
/**
 * Builders of realistic CLI frames, shaped like those Claude Code 2.1.332
 * writes (see the recorded transcripts), for scripting a fake CLI: one
 * catalogue, imported together, over three parts.
 *
 * | File                | What it builds                                              |
 * | ------------------- | ----------------------------------------------------------- |
 * | `turn_frames.ts`    | `system/init`, `assistant`, tool results, `result`, `command_lifecycle` |
 * | `stream_frames.ts`  | the `stream_event` frames of a streamed reply               |
 * | `control_frames.ts` | `can_use_tool`, control responses, `control_cancel_request` |
 * | `_frame_defaults.ts`| the shared defaults, fresh ids and timestamps               |
 *
 * Every builder returns a fresh plain object; fields the protocol types do not
 * name (as in the real frames) are present too. Frame `uuid`s are random;
 * every other default is fixed, so frames are predictable.
 *
 * @module
 */

export { DEFAULT_SESSION_ID } from "./_frame_defaults.ts";
export {
  type AssistantFrameOptions,
  assistantTextFrame,
  assistantToolUseFrame,
  commandLifecycleFrame,
  initFrame,
  type InitFrameOptions,
  resultFrame,
  type ResultFrameOptions,
  type ToolResultFrameOptions,
  type ToolUseFrameOptions,
  userToolResultFrame,
} from "./turn_frames.ts";
export { type StreamFramesOptions, streamTextDeltaFrames } from "./stream_frames.ts";
export {
  canUseToolRequest,
  type CanUseToolRequestOptions,
  controlCancel,
  controlError,
  controlSuccess,
} from "./control_frames.ts";
