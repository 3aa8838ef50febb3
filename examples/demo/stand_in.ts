/**
 * The demo's built-in stand-in for `claude`: a {@linkcode ScriptedCli} that
 * speaks the real wire protocol with no binary, no key and no network. It
 * answers the same prompts as the e2e suite's fake Messages API does:
 *
 * - any text: `Echo: <text>`, streamed in small deltas;
 * - `[[tool:bash:<command>]]`: asks to run Bash (a permission request with
 *   an "always allow" suggestion); the command is never run;
 * - `[[slow]]`: a long, slowly streamed answer, to interrupt with Ctrl-C.
 *
 * `set_model` and `set_permission_mode` take effect (the next turn's
 * `system/init` says so; in `acceptEdits` or `bypassPermissions` Bash runs
 * without asking), an "always allow" answer is remembered, and an allow with
 * an `updatedInput` command "runs" that command instead. The chat
 * (`chat.ts`) and the scripted tour (`tour.ts`) both talk to it.
 *
 * @module
 */

import type { TransportFactory } from "@duplex/claude";
import {
  assistantTextFrame,
  assistantToolUseFrame,
  canUseToolRequest,
  controlError,
  controlSuccess,
  initFrame,
  resultFrame,
  ScriptedCli,
  streamTextDeltaFrames,
  userToolResultFrame,
} from "@duplex/claude/testing";

const SESSION_ID = "5e55f00d-de70-4000-8000-000000000001";
const TURN_COST_USD = 0.00031;
const TOOL = /\[\[tool:bash:([^\]]*)\]\]/;

/** What the stand-in remembers across turns. */
interface State {
  model: string;
  mode: string;
  turns: number;
  allowed: Set<string>;
  /** Tokens so far, by model (the CLI reports them cumulatively). */
  tokens: Map<string, { input: number; output: number }>;
  /** Ends the running turn (an interrupt). */
  turn: AbortController | undefined;
}

function textOf(frame: Record<string, unknown>): string {
  const content = (frame.message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block as { text?: string }).text ?? "").join("\n");
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * Makes the stand-in.
 *
 * @returns A transport factory for `DuplexSession.start`.
 */
export function standIn(): TransportFactory {
  const state: State = {
    model: "stand-in",
    mode: "default",
    turns: 0,
    allowed: new Set(),
    tokens: new Map(),
    turn: undefined,
  };
  const cli = new ScriptedCli({ sessionId: SESSION_ID });
  cli.on("user", (frame, c) => turn(state, frame, c));
  cli.on("control_request:interrupt", (frame) => {
    state.turn?.abort();
    return [controlSuccess(String(frame.request_id), { still_queued: [] })];
  });
  cli.on("control_request:set_model", (frame) => {
    state.model = String((frame.request as { model?: string }).model ?? "stand-in");
    return [controlSuccess(String(frame.request_id))];
  });
  cli.on("control_request:set_permission_mode", (frame) => {
    state.mode = String((frame.request as { mode?: string }).mode ?? "default");
    return [controlSuccess(String(frame.request_id))];
  });
  cli.on("control_request:initialize", (frame) => [
    controlSuccess(String(frame.request_id), {
      commands: [],
      agents: [],
      models: [],
      account: { tokenSource: "none", apiKeySource: "none" },
      claude_code_version: "stand-in",
      current_permission_mode: state.mode,
    }),
  ]);
  cli.on("control_request", (frame) => [
    controlError(String(frame.request_id), "Not supported by the stand-in", "unsupported_request"),
  ]);
  return cli.transport;
}

async function turn(state: State, frame: Record<string, unknown>, c: ScriptedCli): Promise<void> {
  const uuid = typeof frame.uuid === "string" ? frame.uuid : undefined;
  const controller = new AbortController();
  state.turn = controller;
  const { signal } = controller;
  const ids = { sessionId: SESSION_ID, ...(uuid ? { userMessageUuid: uuid } : {}) };
  c.emit(initFrame({
    sessionId: SESSION_ID,
    model: state.model,
    permissionMode: state.mode,
    cwd: "/stand-in",
    ...(uuid ? { userMessageUuids: [uuid] } : {}),
  }));
  const prompt = textOf(frame);
  const tool = TOOL.exec(prompt);
  let text: string | undefined;
  if (tool) text = await bash(state, tool[1]!, c, signal);
  else if (prompt.includes("[[slow]]")) {
    text = await stream(c, `Echo: ${prompt} ${LONG}`, 3, 150, signal);
  } else text = await stream(c, `Echo: ${prompt}`, 4, 25, signal);
  state.turns += 1;
  const totalCostUsd = Math.round(state.turns * TURN_COST_USD * 1e6) / 1e6;
  const tokens = state.tokens.get(state.model) ?? { input: 0, output: 0 };
  state.tokens.set(state.model, tokens);
  tokens.input += 30 + Math.ceil(prompt.length / 4);
  tokens.output += Math.ceil((text ?? "").length / 4);
  const usage = {
    "input_tokens": tokens.input,
    "output_tokens": tokens.output,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
  };
  const common = { ...ids, totalCostUsd, model: state.model, usage };
  if (text === undefined || signal.aborted) {
    c.emit(resultFrame({
      ...common,
      subtype: "error_during_execution",
      terminalReason: "aborted_streaming",
    }));
  } else {
    c.emit(resultFrame({ ...common, text }));
  }
  if (state.turn === controller) state.turn = undefined;
}

const LONG = "- and now a long answer, streamed slowly so that there is time to press Ctrl-C: " +
  "one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen.";

/* Streams `text` in pieces `gapMs` apart; undefined when interrupted (or the input ended). */
async function stream(
  c: ScriptedCli,
  text: string,
  size: number,
  gapMs: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  const frames = streamTextDeltaFrames(text, { sessionId: SESSION_ID, chunkSize: size });
  for (const frame of frames) {
    if (signal.aborted || c.inputEnded) return undefined;
    c.emit(frame);
    if (frame.event.type === "content_block_delta") await pause(gapMs, signal);
  }
  c.emit(assistantTextFrame(text, { sessionId: SESSION_ID }));
  return text;
}

/* A Bash call: asks unless allowed (a rule, or the mode), then "runs" it (it never does). */
async function bash(
  state: State,
  command: string,
  c: ScriptedCli,
  signal: AbortSignal,
): Promise<string | undefined> {
  const input = { command, description: "A command the stand-in only pretends to run" };
  const use = assistantToolUseFrame({ name: "Bash", input, sessionId: SESSION_ID });
  const toolUseId = (use.message.content[0] as { id: string }).id;
  c.emit(use);
  const free = state.allowed.has(`Bash(${command})`) || state.allowed.has("Bash") ||
    state.mode === "acceptEdits" || state.mode === "bypassPermissions";
  let denied: string | undefined = undefined;
  let ran = command;
  if (!free) {
    const requestId = crypto.randomUUID();
    c.emit(canUseToolRequest({
      requestId,
      toolName: "Bash",
      input,
      toolUseId,
      suggestions: [{
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: command }],
        behavior: "allow",
        destination: "localSettings",
      }],
    }));
    const answered = c.nextWrite(
      (f) => f.type === "control_response" && JSON.stringify(f).includes(requestId),
      { timeoutMs: Infinity, signal },
    ).catch(() => undefined);
    const answer = await answered;
    if (answer === undefined) {
      c.emit({ type: "control_cancel_request", request_id: requestId });
      return undefined;
    }
    const decision = (answer.response as { response?: Record<string, unknown> }).response ?? {};
    if (decision.behavior !== "allow") denied = String(decision.message ?? "denied");
    // As the real CLI does, an allow may rewrite the command.
    const rewritten = (decision.updatedInput as { command?: unknown } | undefined)?.command;
    if (typeof rewritten === "string") ran = rewritten;
    for (const update of (decision.updatedPermissions ?? []) as { rules?: unknown[] }[]) {
      for (const rule of (update.rules ?? []) as { toolName: string; ruleContent?: string }[]) {
        state.allowed.add(
          rule.ruleContent ? `${rule.toolName}(${rule.ruleContent})` : rule.toolName,
        );
      }
    }
  }
  const output = denied ?? `(the stand-in does not run commands; it would have run: ${ran})`;
  c.emit(userToolResultFrame({
    toolUseId,
    content: output,
    isError: denied !== undefined,
    sessionId: SESSION_ID,
  }));
  const said = denied === undefined ? `Tool said: ${output}` : `Tool failed: ${denied}`;
  return await stream(c, said, 6, 15, signal);
}
