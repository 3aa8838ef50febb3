/**
 * The stand-in `claude` of the web approvals example, for a machine with no
 * CLI, no key and no network: a {@linkcode ScriptedCli} that answers every
 * prompt the way the real CLI does when a tool needs permission. It streams a
 * sentence, asks to run a Bash command (the first `` `command` `` in
 * backticks of the prompt, or the `<command>` of `[[tool:bash:<command>]]`,
 * else `ls`), waits for the answer as long as it takes, then streams a reply that says what happened.
 *
 * It never runs anything: an allowed command's output is made up (and says
 * so), so a page open to the stand-in cannot touch the machine.
 *
 * @module
 */

import type { TransportFactory } from "@duplex/claude";
import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  controlSuccess,
  initFrame,
  resultFrame,
  ScriptedCli,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "@duplex/claude/testing";

/** The stand-in's session id, shown by the page. */
export const STAND_IN_SESSION_ID = "5ea1ed00-57a0-4d00-8000-0000000000e8";

/** A stand-in CLI; dispose it to stop its pending waits. */
export interface StandIn extends Disposable {
  /** The transport factory to give `DuplexSession.start`. */
  readonly transport: TransportFactory;
}

/** Pause between streamed pieces, so the page visibly streams. */
const DELTA_MS = 30;

/**
 * Makes the stand-in.
 *
 * @returns Its transport factory, and a disposer that ends the waits.
 */
export function standIn(): StandIn {
  const stop = new AbortController();
  const { signal } = stop;
  const cli = new ScriptedCli({ sessionId: STAND_IN_SESSION_ID });
  let turns = 0;
  const sessionId = STAND_IN_SESSION_ID;

  async function stream(target: ScriptedCli, text: string): Promise<void> {
    for (const frame of streamTextDeltaFrames(text, { sessionId, chunkSize: 4 })) {
      if (signal.aborted) return;
      target.emit(frame);
      await new Promise((resolve) => setTimeout(resolve, DELTA_MS));
    }
    target.emit(assistantTextFrame(text, { sessionId })); // as the real CLI does after its deltas
  }

  cli.on("user", async (frame, target) => {
    const prompt = promptOf(frame);
    const uuid = typeof frame.uuid === "string" ? frame.uuid : undefined;
    const command = /\[\[tool:bash:([^\]]*)\]\]|`([^`]+)`/.exec(prompt)?.slice(1).find(Boolean) ??
      "ls";
    turns += 1;
    const toolUseId = `toolu_stand_in_${turns}`;
    const requestId = `perm-stand-in-${turns}`;
    target.emit(initFrame({ sessionId, ...(uuid && { userMessageUuids: [uuid] }) }));
    await stream(target, `(stand-in) To answer that I would like to run \`${command}\`.`);
    const input = { command, description: "The stand-in shows the flow; nothing runs" };
    target.emit(assistantToolUseFrame({ id: toolUseId, name: "Bash", input, sessionId }));
    target.emit(canUseToolRequest({ requestId, toolName: "Bash", input, toolUseId }));
    let decision: Record<string, unknown>;
    try {
      const answer = await target.nextWrite(
        (f) => f.type === "control_response" && responseId(f) === requestId,
        { timeoutMs: Infinity, signal }, // a person answers when they answer
      );
      decision = (answer.response as { response?: Record<string, unknown> }).response ?? {};
    } catch {
      return; // the app is shutting down
    }
    const allowed = decision.behavior === "allow";
    const reason = typeof decision.message === "string" ? decision.message : "denied";
    target.emit(userToolResultFrame({
      toolUseId,
      sessionId,
      content: allowed ? `(stand-in output of ${command})` : reason,
      isError: !allowed,
    }));
    const reply = allowed
      ? `The command was allowed. You said: ${prompt}`
      : `The command was denied (${reason}). You said: ${prompt}`;
    await stream(target, reply);
    if (signal.aborted) return;
    target.emit(resultFrame({
      text: reply,
      sessionId,
      numTurns: 2,
      totalCostUsd: 0.0012 * turns,
      ...(uuid && { userMessageUuid: uuid }),
      ...(!allowed && {
        permissionDenials: [{ tool_name: "Bash", tool_use_id: toolUseId, tool_input: input }],
      }),
    }));
  });
  // What the real CLI answers to an interrupt when nothing is queued.
  cli.on("control_request:interrupt", (frame) => [
    controlSuccess(String(frame.request_id), { still_queued: [] }),
  ]);

  return {
    transport: cli.transport,
    [Symbol.dispose]: () => stop.abort(),
  };
}

function promptOf(frame: Record<string, unknown>): string {
  const content = (frame.message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (block as { type?: unknown; text?: unknown }))
    .flatMap((block) => block.type === "text" && typeof block.text === "string" ? [block.text] : [])
    .join("\n");
}

function responseId(frame: Record<string, unknown>): unknown {
  return (frame.response as { request_id?: unknown } | undefined)?.request_id;
}
