// This module is browser compatible.
/**
 * Test doubles of the `claude` CLI, for testing code built on
 * `@duplex/claude` without spawning anything:
 *
 * - {@linkcode ScriptedCli}: a fake CLI you script ("when the session writes
 *   X, emit Y"), with a built-in `echo` mode.
 * - {@linkcode record}: wraps any transport and writes the session as a
 *   transcript (redacted), for your own tests.
 * - {@linkcode replay}: plays a recorded session back and checks what the
 *   session writes against the recording, with a readable diff.
 * - Frame builders ({@linkcode initFrame}, {@linkcode resultFrame},
 *   {@linkcode canUseToolRequest}, …) shaped like the real CLI's frames.
 * - {@linkcode parseTranscript} / {@linkcode loadTranscript} for recordings.
 *
 * Everything here is Web-standard and runs in any runtime.
 *
 * @example Answer a permission request, scripted
 * ```ts
 * import {
 *   assistantTextFrame,
 *   canUseToolRequest,
 *   initFrame,
 *   resultFrame,
 *   ScriptedCli,
 * } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ exitOnEndInput: true });
 * cli.on("user", async (_frame, cli) => {
 *   cli.emit(initFrame(), canUseToolRequest({ requestId: "perm-1", toolName: "Bash", input: { command: "ls" } }));
 *   const answer = await cli.nextWrite("control_response");
 *   const allowed = (answer.response as { response: { behavior: string } }).response.behavior;
 *   return [assistantTextFrame(`Tool ${allowed}`), resultFrame({ text: `Tool ${allowed}` })];
 * });
 *
 * // Drive the transport as a session would: write lines, read NDJSON bytes.
 * const transport = await cli.transport({ signal: AbortSignal.timeout(5000) });
 * await transport.write(JSON.stringify({ type: "user", message: { role: "user", content: "ls" } }));
 * await transport.write(JSON.stringify({
 *   type: "control_response",
 *   response: { subtype: "success", request_id: "perm-1", response: { behavior: "allow", updatedInput: {} } },
 * }));
 * await transport.endInput(); // the CLI answers what it has, then exits
 * const output = await new Response(transport.readable).text();
 * const frames = output.trimEnd().split("\n").map((line) => JSON.parse(line));
 * assert.deepEqual(frames.map((frame) => frame.type), ["system", "control_request", "assistant", "result"]);
 * assert.equal(frames[1].request.tool_name, "Bash");
 * assert.equal(frames[3].result, "Tool allow");
 * assert.equal((await transport.closed).code, 0);
 * ```
 *
 * @module
 */

export {
  type FrameMatch,
  type FrameMatcher,
  type NextWriteOptions,
  ScriptedCli,
  type ScriptedCliOptions,
  type ScriptedExit,
  type ScriptRule,
} from "./scripted_cli.ts";
export type { Chunking } from "./scripted_cli_options.ts";
export {
  type AssistantFrameOptions,
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  type CanUseToolRequestOptions,
  commandLifecycleFrame,
  controlCancel,
  controlError,
  controlSuccess,
  DEFAULT_SESSION_ID,
  initFrame,
  type InitFrameOptions,
  resultFrame,
  type ResultFrameOptions,
  type StreamFramesOptions,
  streamTextDeltaFrames,
  type ToolResultFrameOptions,
  type ToolUseFrameOptions,
  userToolResultFrame,
} from "./frames.ts";
export {
  loadTranscript,
  type LoadTranscriptOptions,
  parseTranscript,
  type TranscriptDirection,
  type TranscriptEntry,
} from "./transcript.ts";
export { replay, ReplayCli, type ReplayOptions, type ReplaySource } from "./replay_transport.ts";
export { record, type RecordOptions, type RecordSink } from "./record_transport.ts";
export { API_KEY_PATTERN, REDACTED, type Redaction } from "./redaction.ts";
export {
  CONFORMANCE_CONTRACTS,
  type ConformanceContext,
  type ConformanceContract,
  type ConformanceOptions,
  type ConformancePeer,
  runTransportConformance,
} from "./transport_conformance.ts";
export {
  conformanceCli,
  type ConformanceCliOptions,
  conformanceRules,
} from "./conformance_peer.ts";
export {
  sessionStoreConformance,
  STORE_CONTRACTS,
  type StoreConformanceOptions,
  type StoreContract,
} from "./session_store_conformance.ts";
