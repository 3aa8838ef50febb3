/**
 * A scripted CLI for the AI SDK tests, one per process the pool launches:
 * a prompt is answered with streamed text (`Echo: <prompt>`); `[[tool]]`
 * makes it ask to run `Bash ls` (then `Tool said: <result>` or `Denied:
 * <message>`); `[[stall]]` streams a few deltas and waits for an interrupt.
 *
 * @module
 */

import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  controlSuccess,
  resultFrame,
  ScriptedCli,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "../../../src/testing/mod.ts";
import { isRecord } from "../../../src/_values.ts";
import type { TransportFactory } from "../../../mod.ts";

/** The scripted processes a pool launched. */
export interface ChatClis {
  /** Give it to the pool as `launch`. */
  readonly launch: () => TransportFactory;
  /** Every CLI launched, in order. */
  readonly clis: ScriptedCli[];
}

/** The text of a user line the session wrote. */
export function textOf(frame: Record<string, unknown>): string {
  const message = isRecord(frame.message) ? frame.message : {};
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content.filter(isRecord).map((b) => typeof b.text === "string" ? b.text : "")
    .join("");
}

function answer(text: string, uuid: unknown): unknown[] {
  const messageId = `msg_${crypto.randomUUID().slice(0, 8)}`;
  return [
    ...streamTextDeltaFrames(text, { chunkSize: 4, messageId }),
    {
      ...assistantTextFrame(text),
      message: { ...assistantTextFrame(text).message, id: messageId },
    },
    resultFrame({ text, ...(typeof uuid === "string" && { userMessageUuid: uuid }) }),
  ];
}

/**
 * Makes the launcher.
 *
 * @returns The launcher and the CLIs it made.
 */
export function chatClis(): ChatClis {
  const clis: ScriptedCli[] = [];
  const launch = () => {
    const cli = new ScriptedCli({ echo: true });
    let turn: unknown;
    cli.on("user", (frame) => {
      turn = frame.uuid;
      const text = textOf(frame);
      if (text.includes("[[tool]]")) {
        const id = `toolu_${crypto.randomUUID().slice(0, 8)}`;
        return [
          assistantToolUseFrame({ id, name: "Bash", input: { command: "ls" } }),
          canUseToolRequest({
            requestId: `perm-${id}`,
            toolName: "Bash",
            toolUseId: id,
            input: { command: "ls" },
          }),
        ];
      }
      if (text.includes("[[stall]]")) {
        return streamTextDeltaFrames("Working on it", { chunkSize: 4 }).slice(0, 4);
      }
      return answer(`Echo: ${text}`, turn);
    });
    cli.on("control_response", (frame) => {
      const response = isRecord(frame.response) ? frame.response : {};
      const id = String(response.request_id ?? "");
      if (!id.startsWith("perm-")) return [];
      const decision = isRecord(response.response) ? response.response : {};
      const toolUseId = id.slice("perm-".length);
      if (decision.behavior === "allow") {
        return [
          userToolResultFrame({ toolUseId, content: "file.txt" }),
          ...answer("Tool said: file.txt", turn),
        ];
      }
      const message = String(decision.message ?? "");
      return [
        userToolResultFrame({ toolUseId, content: message, isError: true }),
        ...answer(`Denied: ${message}`, turn),
      ];
    });
    cli.on("control_request:interrupt", (frame) => [
      controlSuccess(String(frame.request_id)),
      resultFrame({
        subtype: "error_during_execution",
        isError: true,
        terminalReason: "aborted_streaming",
        ...(typeof turn === "string" && { userMessageUuid: turn }),
      }),
    ]);
    clis.push(cli);
    return cli.transport;
  };
  return { launch, clis };
}
