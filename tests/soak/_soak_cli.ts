// deno-lint-ignore-file camelcase -- the frames' fields are the wire protocol's
/**
 * The soak's stand-in `claude`: the pool tests' stand-in
 * (`tests/fixtures/fake_pool_claude.ts`) reduced to what a relay's
 * conversation needs, plus what that one lacks and the soak checks: a
 * transcript. Like the real CLI it keeps each conversation in
 * `<config>/projects/<cwd as a folder name>/<session id>.jsonl` (`config`:
 * `CLAUDE_CONFIG_DIR`, else `$HOME/.claude`), sends each line it writes
 * there as a `transcript_mirror` frame with `--session-mirror`, and resumes
 * from that file with `--resume=<id>` (from the store's copy when a relay
 * resumes it on another host). Run it with
 * `deno run -A --no-config --quiet tests/soak/_soak_cli.ts <cli flags>`.
 *
 * Flags read: `--session-id`, `--resume`, `--session-mirror`; others are ignored.
 *
 * - `initialize` → success; `interrupt` ends a running turn with an
 *   `error_during_execution` result; any other control request → success `{}`.
 * - A user line: its `user` entry (the line's uuid) is written and mirrored at
 *   once; after `SOAK_TURN_MS` ms (default 20; `[[slow:MS]]` in the text says
 *   otherwise) the `assistant` entry is, then the `assistant` and `result`
 *   frames go out (`user_message_uuids`: the line's uuid; the text
 *   `turn N of S`). Turns run one at a time, in order.
 * - `SOAK_JOURNAL=<folder>`: each process also writes
 *   `<folder>/<session id>/<ms>-<pid>.jsonl`: a first line
 *   `{"pid","loaded":[uuids]}` (the transcript it resumed), then
 *   `{"uuid"}` per entry it writes. The last process's journal is what the
 *   conversation's CLI wrote, which the store must equal.
 *
 * @module
 */

import { projectKeyOf } from "../../src/store/project_key.ts";

import { exit, flagValue, out } from "../fixtures/_stand_in_io.ts";

const args = Deno.args;

const home = Deno.env.get("HOME");
const configDir = Deno.env.get("CLAUDE_CONFIG_DIR") || (home ? `${home}/.claude` : undefined);
if (configDir === undefined) await exit(2, "soak cli: neither CLAUDE_CONFIG_DIR nor HOME is set\n");
const cwd = await Deno.realPath(Deno.cwd());
const mirror = args.includes("--session-mirror");
const resume = flagValue("resume");
const sessionId = resume ?? flagValue("session-id") ?? crypto.randomUUID();
const folder = `${configDir}/projects/${projectKeyOf(cwd)}`;
const file = `${folder}/${sessionId}.jsonl`;
const turnMs = Number(Deno.env.get("SOAK_TURN_MS") ?? 20);

interface Entry {
  type: string;
  uuid: string;
  parentUuid: string | null;
  sessionId: string;
  [field: string]: unknown;
}

let history: Entry[] = [];
if (resume !== undefined) {
  try {
    history = (await Deno.readTextFile(file)).split("\n").flatMap((line) => {
      try {
        return line.trim() ? [JSON.parse(line) as Entry] : [];
      } catch {
        return []; // a torn last line
      }
    });
  } catch {
    history = [];
  }
  if (history.length === 0) {
    const message = `No conversation found with session ID: ${resume}`;
    await out({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      duration_ms: 0,
      num_turns: 0,
      session_id: resume,
      total_cost_usd: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
      permission_denials: [],
      uuid: crypto.randomUUID(),
      errors: [message],
    });
    await exit(1, message);
  }
}
let turns = history.filter((entry) => entry.type === "user").length;
let parent: string | null = history.at(-1)?.uuid ?? null;

const journalDir = Deno.env.get("SOAK_JOURNAL");
const journal = journalDir === undefined
  ? undefined
  : `${journalDir}/${sessionId}/${String(Date.now()).padStart(15, "0")}-${Deno.pid}.jsonl`;
if (journal !== undefined) {
  await Deno.mkdir(`${journalDir}/${sessionId}`, { recursive: true });
  const loaded = history.map((entry) => entry.uuid);
  await Deno.writeTextFile(journal, JSON.stringify({ pid: Deno.pid, loaded }) + "\n");
}

/* Writes an entry to the transcript (and the journal), then mirrors it. */
async function record(entry: Entry): Promise<void> {
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify(entry) + "\n", { append: true });
  if (journal !== undefined) {
    await Deno.writeTextFile(journal, JSON.stringify({ uuid: entry.uuid }) + "\n", {
      append: true,
    });
  }
  parent = entry.uuid;
  if (mirror) await out({ type: "transcript_mirror", filePath: file, entries: [entry] });
}

function answer(id: string, response: Record<string, unknown>): Promise<unknown> {
  return out({
    type: "control_response",
    response: { subtype: "success", request_id: id, response },
  });
}

let interruptTurn: (() => void) | undefined;

function textOf(message: unknown): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => typeof block?.text === "string" ? block.text : "").join("");
}

async function runTurn(line: Record<string, unknown>): Promise<void> {
  const text = textOf(line.message);
  const uuid = typeof line.uuid === "string" ? line.uuid : crypto.randomUUID();
  const timestamp = new Date().toISOString();
  await record({
    type: "user",
    uuid,
    parentUuid: parent,
    sessionId,
    timestamp,
    cwd,
    message: line.message,
  });
  await out({
    type: "system",
    subtype: "init",
    session_id: sessionId,
    cwd,
    model: "soak-model",
    permissionMode: "default",
    tools: [],
    mcp_servers: [],
    uuid: crypto.randomUUID(),
  });
  let interrupted = false;
  const stop = new Promise<void>((resolve) => {
    interruptTurn = () => {
      interrupted = true;
      resolve();
    };
  });
  const slow = /\[\[slow:(\d+)\]\]/.exec(text);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    stop,
    new Promise((r) => timer = setTimeout(r, slow ? Number(slow[1]) : turnMs)),
  ]);
  clearTimeout(timer);
  interruptTurn = undefined;
  turns++;
  const reply = `turn ${turns} of ${sessionId}`;
  if (!interrupted) {
    const message = {
      id: `msg_${crypto.randomUUID()}`,
      type: "message",
      role: "assistant",
      model: "soak-model",
      content: [{ type: "text", text: reply }],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    const assistantUuid = crypto.randomUUID();
    await record({
      type: "assistant",
      uuid: assistantUuid,
      parentUuid: parent,
      sessionId,
      timestamp: new Date().toISOString(),
      message,
    });
    await out({
      type: "assistant",
      message,
      parent_tool_use_id: null,
      session_id: sessionId,
      uuid: assistantUuid,
    });
  }
  await out({
    type: "result",
    subtype: interrupted ? "error_during_execution" : "success",
    is_error: interrupted,
    duration_ms: 1,
    num_turns: 1,
    ...(interrupted ? { errors: ["interrupted"] } : { result: reply }),
    session_id: sessionId,
    total_cost_usd: 0,
    usage: { input_tokens: 1, output_tokens: 1 },
    permission_denials: [],
    uuid: crypto.randomUUID(),
    user_message_uuids: [uuid],
  });
}

const queue: Record<string, unknown>[] = [];
let running = false;

function wakeTurns(): void {
  if (running) return;
  running = true;
  void (async () => {
    while (queue.length > 0) await runTurn(queue.shift()!);
    running = false;
  })();
}

let buffer = "";
const decoder = new TextDecoder();
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
    const line = buffer.slice(0, newline).trim();
    buffer = buffer.slice(newline + 1);
    if (!line.startsWith("{")) continue;
    const frame = JSON.parse(line);
    if (frame.type === "control_request") {
      const request = frame.request ?? {};
      if (request.subtype === "interrupt") interruptTurn?.();
      void answer(frame.request_id, request.subtype === "initialize" ? { commands: [] } : {});
    } else if (frame.type === "user") {
      queue.push(frame);
      wakeTurns();
    }
  }
}
await exit(0);
