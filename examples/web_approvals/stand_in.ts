/**
 * The stand-in `claude` of the web approvals example, for a machine with no
 * CLI, no key and no network: a {@linkcode ScriptedCli} that answers every
 * prompt the way the real CLI does when a tool needs permission. It streams a
 * sentence, asks to run a Bash command (the first `` `command` `` in
 * backticks of the prompt, or the `<command>` of `[[tool:bash:<command>]]`,
 * else `ls`), waits for the answer as long as it takes, then streams a reply that says what happened.
 * It asks as the real CLI does: with a rule to suggest for "always allow";
 * for an `rm` command as for a dangerous one, with the CLI's fields a card
 * must honour (its own sentence, Deny as the default, no "always", and the
 * `permissions.ask` rule that asked). `[[mcp:<server>:<tool>]]` asks for an
 * MCP tool of a server configured in a project.
 *
 * It never runs anything: an allowed command's output is made up (and says
 * so), so a page open to the stand-in cannot touch the machine.
 *
 * @module
 */

import type { TransportFactory } from "@duplex/claude";
import type { ControlRequestFrame } from "@duplex/claude/protocol";
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
    const call = callOf(prompt);
    const { command, toolName, input } = call;
    turns += 1;
    const toolUseId = `toolu_stand_in_${turns}`;
    const requestId = `perm-stand-in-${turns}`;
    target.emit(initFrame({ sessionId, ...(uuid && { userMessageUuids: [uuid] }) }));
    await stream(target, `(stand-in) To answer that I would like to run \`${command}\`.`);
    target.emit(assistantToolUseFrame({ id: toolUseId, name: toolName, input, sessionId }));
    target.emit(askFrame(call, { requestId, toolUseId }));
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
    const always = allowed && Array.isArray(decision.updatedPermissions);
    const reason = typeof decision.message === "string" ? decision.message : "denied";
    target.emit(userToolResultFrame({
      toolUseId,
      sessionId,
      content: allowed ? `(stand-in output of ${command})` : reason,
      isError: !allowed,
    }));
    const reply = allowed
      ? `The command was allowed${always ? " always" : ""}. You said: ${prompt}`
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
        permissionDenials: [{ tool_name: toolName, tool_use_id: toolUseId, tool_input: input }],
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

/** The tool call the stand-in makes for a prompt. */
interface Call {
  /** What it says it runs (a Bash command, or the MCP tool's name). */
  readonly command: string;
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  /** For `[[mcp:<server>:<tool>]]`: the server, as configured in a project. */
  readonly server?: string;
}

function callOf(prompt: string): Call {
  const mcp = /\[\[mcp:([^:\]]+):([^\]]+)\]\]/.exec(prompt);
  if (mcp) {
    const toolName = `mcp__${mcp[1]}__${mcp[2]}`;
    return { command: toolName, toolName, input: {}, server: mcp[1]! };
  }
  const command = /\[\[tool:bash:([^\]]*)\]\]|`([^`]+)`/.exec(prompt)?.slice(1).find(Boolean) ??
    "ls";
  const input = { command, description: "The stand-in shows the flow; nothing runs" };
  return { command, toolName: "Bash", input };
}

/** The `can_use_tool` request for a call, with the fields the real CLI would send. */
function askFrame(call: Call, ask: { requestId: string; toolUseId: string }): ControlRequestFrame {
  const { command, toolName, input, server } = call;
  const frame = canUseToolRequest({ ...ask, toolName, input });
  const request = frame.request;
  request.permission_suggestions = [{
    type: "addRules",
    rules: [{ toolName, ...(server === undefined && { ruleContent: command }) }],
    behavior: "allow",
    destination: "localSettings",
  }];
  // The server's name is configuration text: the page must show it as text.
  if (server !== undefined) {
    Object.assign(request, {
      display_name: toolName.slice(`mcp__${server}__`.length),
      mcp_server: { name: server, source: "project" },
    });
  }
  if (!/^rm\b/.test(command)) return frame;
  // A rule is suggested, and suppressed: the card must not offer it.
  Object.assign(request, {
    title: `Claude wants to delete files: ${command}`,
    decision_reason: "The stand-in treats every rm as dangerous",
    decision_reason_type: "safetyCheck",
    classifier_approvable: false,
    matched_ask_rule: { source: "userSettings", tool_name: "Bash", rule_content: "rm:*" },
    default_to_no: true,
    suppress_always_allow_rule: true,
  });
  return frame;
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
