/**
 * A fake `claude` for the benchmarks: it speaks just enough of the
 * stream-json duplex protocol for `DuplexSession` and for the official SDK's
 * `query()`, and answers as fast as it can. Its CLI flags are ignored.
 *
 * Run it as `deno run -A tests/bench/fake_cli.ts` (the runner writes a small
 * shell wrapper around that command, so that the SDK, which runs any path not
 * ending in `.js`/`.ts` directly, spawns the very same program).
 *
 * Stdin lines:
 * - `control_request` (any subtype): answered with a success `control_response`
 *   (`initialize` gets an empty command and model list);
 * - `user` whose text holds `[[stream:N]]`: N realistic `stream_event` frames
 *   (see `_frames.ts`), written in large writes, then `assistant` and `result`;
 * - `user` whose text holds `[[huge:N]]`: one `assistant` line of N bytes
 *   (written 1 MiB at a time, never held whole), then `result`;
 * - any other `user`: `assistant` and `result` at once (the instant answer).
 * The first user line is preceded by a `system`/`init` frame, as the real CLI
 * does. Stdin EOF: exit 0.
 *
 * @module
 */

import { SESSION_ID, streamEventLines } from "./_frames.ts";

const encoder = new TextEncoder();
const LF = 10;
const WRITE_SLICE = 1 << 20;

async function writeAll(data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) {
    written += await Deno.stdout.write(data.subarray(written, written + WRITE_SLICE));
  }
}

function initFrame(): Record<string, unknown> {
  return {
    type: "system",
    subtype: "init",
    cwd: Deno.cwd(),
    session_id: SESSION_ID,
    tools: ["Task", "Bash", "Edit", "Read", "Write", "WebFetch", "WebSearch"],
    mcp_servers: [],
    model: "claude-opus-5-5",
    permissionMode: "default",
    slash_commands: ["compact", "context", "cost", "init", "review"],
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.332",
    output_style: "default",
    agents: ["general-purpose"],
    skills: [],
    plugins: [],
    uuid: crypto.randomUUID(),
  };
}

function assistantFrame(text: string): Record<string, unknown> {
  return {
    type: "assistant",
    message: {
      id: "msg_fake_1",
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [{ type: "text", text }],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 42,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
    parent_tool_use_id: null,
    session_id: SESSION_ID,
    uuid: crypto.randomUUID(),
  };
}

function resultFrame(text: string, userUuid: unknown): Record<string, unknown> {
  return {
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 1,
    duration_api_ms: 1,
    num_turns: 1,
    result: text,
    stop_reason: "end_turn",
    session_id: SESSION_ID,
    total_cost_usd: 0.000308,
    usage: {
      input_tokens: 42,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 7,
      service_tier: "standard",
    },
    modelUsage: {
      "claude-opus-5-5": {
        inputTokens: 42,
        outputTokens: 7,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUSD: 0.000308,
        contextWindow: 1000000,
        maxOutputTokens: 128000,
      },
    },
    permission_denials: [],
    terminal_reason: "completed",
    uuid: crypto.randomUUID(),
    ...(typeof userUuid === "string" ? { user_message_uuids: [userUuid] } : {}),
  };
}

function line(frame: unknown): string {
  return JSON.stringify(frame) + "\n";
}

const streams = new Map<number, Uint8Array>();

function streamBytes(count: number): Uint8Array {
  let bytes = streams.get(count);
  if (!bytes) {
    bytes = encoder.encode(streamEventLines(count).join("\n") + "\n");
    streams.set(count, bytes);
  }
  return bytes;
}

async function huge(size: number): Promise<void> {
  const head = encoder.encode(
    `{"type":"assistant","session_id":"${SESSION_ID}","message":{"role":"assistant","content":[{"type":"text","text":"`,
  );
  const tail = encoder.encode(`"}]}}\n`);
  const filler = new Uint8Array(WRITE_SLICE).fill(0x78); // "x"
  await writeAll(head);
  let left = Math.max(0, size - head.length - tail.length + 1);
  while (left > 0) {
    const part = Math.min(left, filler.length);
    await writeAll(filler.subarray(0, part));
    left -= part;
  }
  await writeAll(tail);
}

function userText(frame: Record<string, unknown>): string {
  const content = (frame.message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) =>
    typeof block === "object" && block !== null && typeof block.text === "string" ? block.text : ""
  ).join("");
}

let started = false;

async function handle(text: string): Promise<void> {
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(text);
  } catch {
    return;
  }
  if (frame.type === "control_request") {
    const request = frame.request as { subtype?: string } | undefined;
    const response = request?.subtype === "initialize"
      ? { commands: [], models: [], account: {}, output_style: "default" }
      : {};
    await writeAll(encoder.encode(line({
      type: "control_response",
      response: { subtype: "success", request_id: frame.request_id, response },
    })));
    return;
  }
  if (frame.type !== "user") return;
  let out = "";
  if (!started) {
    started = true;
    out += line(initFrame());
  }
  const prompt = userText(frame);
  const stream = /\[\[stream:(\d+)\]\]/.exec(prompt);
  const big = /\[\[huge:(\d+)\]\]/.exec(prompt);
  if (stream || big) {
    await writeAll(encoder.encode(out));
    out = "";
    if (stream) await writeAll(streamBytes(Number(stream[1])));
    else await huge(Number(big?.[1]));
  }
  const answer = `Echo: ${prompt.slice(0, 200)}`;
  out += line(assistantFrame(answer)) + line(resultFrame(answer, frame.uuid));
  await writeAll(encoder.encode(out));
}

const decoder = new TextDecoder();
let pending: Uint8Array[] = [];
const prebuild = Number(Deno.env.get("BENCH_FAKE_PREBUILD") ?? 0);
if (prebuild > 0) streamBytes(prebuild);
try {
  await serve();
} catch (error) {
  // The reader went away (a benchmark cancelled its read): end quietly.
  if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
}

async function serve(): Promise<void> {
  for await (const chunk of Deno.stdin.readable) {
    let start = 0;
    let newline = chunk.indexOf(LF);
    while (newline !== -1) {
      let bytes = chunk.subarray(start, newline);
      if (pending.length > 0) {
        pending.push(bytes);
        const total = pending.reduce((sum, part) => sum + part.length, 0);
        bytes = new Uint8Array(total);
        let offset = 0;
        for (const part of pending) {
          bytes.set(part, offset);
          offset += part.length;
        }
        pending = [];
      }
      if (bytes.length > 0) await handle(decoder.decode(bytes));
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) pending.push(chunk.slice(start));
  }
}
