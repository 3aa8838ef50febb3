/**
 * A stand-in CLI for the relay's store tests: it keeps a transcript as the
 * real one does (`$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`,
 * `projects/<cwd with every non-alphanumeric as ->/<session id>.jsonl`),
 * named by `--session-id=<id>` or read back with `--resume=<id>`, and with
 * `--session-mirror` writes a `transcript_mirror` line after each local
 * write. Each user line (stream-json) is a turn: a user entry (the line's
 * `uuid` when it has one), an assistant entry, an `assistant` line, a
 * `result` line, then one more mirror line (as the real CLI does after its
 * result). The result text is `<text>|seen:<every user text of the
 * transcript, comma-separated>`, so a test sees the history the process has.
 *
 * It first writes `{"type":"mirror_hello","args","pid"}`. `MIRROR_CLI_BIG=N` makes each
 * assistant line carry N bytes of text.
 */

const args = Deno.args;
function flag(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = args.find((arg) => arg.startsWith(prefix));
  if (found) return found.slice(prefix.length);
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
}

const mirror = args.includes("--session-mirror");
const resume = flag("resume");
const sessionId = resume ?? flag("session-id") ?? crypto.randomUUID();
const configDir = Deno.env.get("CLAUDE_CONFIG_DIR") ?? `${Deno.env.get("HOME")}/.claude`;
const folder = `${configDir}/projects/${Deno.cwd().replace(/[^a-zA-Z0-9]/g, "-")}`;
const file = `${folder}/${sessionId}.jsonl`;
const big = "x".repeat(Number(Deno.env.get("MIRROR_CLI_BIG") ?? 0));
const encoder = new TextEncoder();

type Entry = Record<string, unknown> & { type: string };
const transcript: Entry[] = [];
if (resume) {
  try {
    for (const line of (await Deno.readTextFile(file)).split("\n")) {
      if (line.trim()) transcript.push(JSON.parse(line));
    }
  } catch {
    // Nothing to resume: a fresh transcript (as the real CLI would complain, but enough here).
  }
}

async function out(frame: unknown): Promise<void> {
  await Deno.stdout.write(encoder.encode(JSON.stringify(frame) + "\n"));
}

async function record(entry: Entry): Promise<void> {
  transcript.push(entry);
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify(entry) + "\n", { append: true });
  if (mirror) await out({ type: "transcript_mirror", filePath: file, entries: [entry] });
}

function textOf(message: unknown): string {
  const content = (message as { content?: unknown })?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block as { text?: string }).text ?? "").join("");
}

await out({ type: "mirror_hello", args, pid: Deno.pid });
let pending = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  pending += chunk;
  let newline: number;
  while ((newline = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (!line.trim()) continue;
    const frame = JSON.parse(line);
    if (frame.type !== "user") continue;
    const text = textOf(frame.message);
    const uuid = typeof frame.uuid === "string" ? frame.uuid : crypto.randomUUID();
    await record({ type: "user", uuid, sessionId, message: frame.message });
    const seen = transcript.filter((entry) => entry.type === "user")
      .map((entry) => textOf(entry.message)).join(",");
    const reply = `${text}|seen:${seen}`;
    const message = { role: "assistant", content: [{ type: "text", text: reply + big }] };
    await record({ type: "assistant", uuid: crypto.randomUUID(), sessionId, message });
    await out({ type: "assistant", message, session_id: sessionId });
    await out({
      type: "result",
      subtype: "success",
      is_error: false,
      result: reply,
      session_id: sessionId,
      uuid,
    });
    await record({ type: "last-prompt", sessionId, lastPrompt: text });
  }
}
