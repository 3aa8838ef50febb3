/**
 * A fake Anthropic Messages API for running the real `claude` CLI offline.
 *
 * `POST /v1/messages` is answered as Server-Sent Events, in the order the real
 * API uses (`message_start`, `content_block_start`, `content_block_delta`,
 * `content_block_stop`, `message_delta`, `message_stop`). Every other path
 * answers `200 {}`. What the reply is depends on triggers found in the prompt:
 * the last user text block of the request that is not a `<system-reminder>`
 * and not an interrupt marker (`[Request interrupted…`).
 *
 * | trigger | reply |
 * |---|---|
 * | (none) | text `Echo: <prompt>` |
 * | `[[tool:bash:<command>]]` | a `Bash` tool_use running `<command>` |
 * | `[[tool:write:<path>:<content>]]` | a `Write` tool_use |
 * | `[[tool:read:<path>]]` | a `Read` tool_use |
 * | `[[tool:<name>:<json>]]` | a tool_use of `<name>` with the JSON as input |
 * | `[[stall]]` | a few text deltas, then the stream stays open until the client leaves |
 * | `[[slow]]` | `Echo: <prompt>` in small deltas about 20 ms apart |
 * | `[[error:500]]` | HTTP 500 with an Anthropic-style JSON error body (any 4xx/5xx code) |
 *
 * A subagent's requests are answered by the same rules: `[[tool:Task:{"prompt":"…",
 * "subagent_type":"general-purpose","description":"…","run_in_background":false}]]` makes
 * the CLI run a subagent whose prompt (the Task's `prompt`) is echoed back, and
 * its report then reaches the main loop as the Task's `tool_result`
 * (`tests/e2e/history_subagents_e2e_test.ts`).
 *
 * A request whose last user message carries `tool_result` blocks and no new
 * prompt is answered with text `Tool said: <content>` (or `Tool failed:
 * <content>` for an error result), so tests can see what the tool returned.
 *
 * Every request is logged, parsed, in {@linkcode FakeApi.requests}.
 *
 * @module
 */

/** One `tool_result` block found in the last user message of a request. */
export interface FakeToolResult {
  /** The `tool_use_id` it answers. */
  readonly toolUseId: string;
  /** Its content, as text (text blocks joined with newlines). */
  readonly content: string;
  /** Whether the CLI marked it as an error (denied, failed). */
  readonly isError: boolean;
}

/** One request the fake API received. */
export interface FakeApiRequest {
  /** HTTP method. */
  readonly method: string;
  /** URL path, for example `/v1/messages`. */
  readonly path: string;
  /** URL query including `?`, or `""`. */
  readonly query: string;
  /** Request headers (lower-case names). */
  readonly headers: Record<string, string>;
  /** The parsed JSON body, or `null` when there was none or it was not JSON. */
  readonly body: unknown;
  /** The model the request asked for, when it is a Messages request. */
  readonly model: string | undefined;
  /** The prompt the reply was chosen from (see the module doc), if any. */
  readonly prompt: string | undefined;
  /** The `tool_result` blocks of the last user message. */
  readonly toolResults: readonly FakeToolResult[];
  /** How the fake answered: `echo`, `tool`, `tool_result`, `stall`, `slow`, `error`, `other`. */
  readonly reply: string;
}

/** Options of {@linkcode startFakeApi}. */
export interface FakeApiOptions {
  /**
   * Delay between deltas of a `[[slow]]` reply, in milliseconds.
   *
   * @default {20}
   */
  slowDelayMs?: number;
}

/** A running fake Messages API. */
export interface FakeApi extends AsyncDisposable {
  /** Base URL, `http://127.0.0.1:<port>`: the CLI's `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: FakeApiRequest[];
  /** The Messages requests only (`POST /v1/messages`). */
  readonly messageRequests: FakeApiRequest[];
  /** How many SSE responses are still streaming (stalled ones included). */
  readonly openStreams: number;
  /**
   * Resolves with the first logged request (past or future) matching `pred`.
   *
   * @param pred The condition.
   * @param options `timeoutMs` (default 10 000) bounds the wait.
   * @returns The matching request.
   */
  waitForRequest(
    pred: (request: FakeApiRequest) => boolean,
    options?: { timeoutMs?: number },
  ): Promise<FakeApiRequest>;
  /**
   * Resolves once no SSE response is streaming any more (for example after
   * the CLI aborted a stalled request).
   *
   * @param options `timeoutMs` (default 10 000) bounds the wait.
   * @returns Nothing.
   */
  waitForStreamsClosed(options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Ends every open stream and stops the server. Idempotent.
   *
   * @returns Nothing, once the server has stopped.
   */
  close(): Promise<void>;
}

interface SseEvent {
  name: string;
  data: unknown;
  delayMs: number;
}

interface Waiter {
  pred: (request: FakeApiRequest) => boolean;
  resolve: (request: FakeApiRequest) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const ENCODER = new TextEncoder();
const INTERRUPT_MARKER = "[Request interrupted";

class FakeApiServer implements FakeApi {
  readonly url: string;
  readonly requests: FakeApiRequest[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  #streams = new Set<() => void>();
  #streamsIdle: Array<() => void> = [];
  #waiters = new Set<Waiter>();
  #counter = 0;
  #slowDelayMs: number;
  #closing: Promise<void> | undefined;

  constructor(options: FakeApiOptions) {
    this.#slowDelayMs = options.slowDelayMs ?? 20;
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request) => this.#handle(request),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  get messageRequests(): FakeApiRequest[] {
    return this.requests.filter((r) => r.method === "POST" && r.path === "/v1/messages");
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  waitForRequest(
    pred: (request: FakeApiRequest) => boolean,
    options: { timeoutMs?: number } = {},
  ): Promise<FakeApiRequest> {
    const found = this.requests.find(pred);
    if (found) return Promise.resolve(found);
    if (this.#closing) return Promise.reject(new Error("Cannot wait for a request: closed"));
    const timeoutMs = options.timeoutMs ?? 10_000;
    const { promise, resolve, reject } = Promise.withResolvers<FakeApiRequest>();
    const waiter: Waiter = {
      pred,
      resolve,
      reject,
      timer: setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(
          new Error(
            `Cannot find the request: none matched within ${timeoutMs} ms; received ${
              this.requests.map((r) => `${r.method} ${r.path} (${r.reply}: ${r.prompt})`).join(
                ", ",
              )
            }`,
          ),
        );
      }, timeoutMs),
    };
    this.#waiters.add(waiter);
    return promise;
  }

  waitForStreamsClosed(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.#streams.size === 0) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? 10_000;
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const timer = setTimeout(() => {
      this.#streamsIdle = this.#streamsIdle.filter((f) => f !== done);
      reject(new Error(`Cannot see the streams close: ${this.#streams.size} still open`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    this.#streamsIdle.push(done);
    return promise;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const end of [...this.#streams]) end();
      for (const waiter of this.#waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error("Cannot find the request: the fake API closed"));
      }
      this.#waiters.clear();
      await this.#server.shutdown();
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    const isMessages = request.method === "POST" && url.pathname === "/v1/messages";
    const plan = isMessages ? planReply(body) : { kind: "other" as const };
    const model = isMessages && isObject(body) && typeof body.model === "string"
      ? body.model
      : undefined;
    this.#log({
      method: request.method,
      path: url.pathname,
      query: url.search,
      headers: Object.fromEntries(request.headers),
      body,
      model,
      prompt: isMessages ? promptOf(body) : undefined,
      toolResults: isMessages ? toolResultsOf(body) : [],
      reply: plan.kind,
    });
    if (plan.kind === "other") {
      return request.method === "HEAD"
        ? new Response(null, { status: 200 })
        : Response.json({}, { status: 200 });
    }
    if (plan.kind === "error") {
      return Response.json(
        {
          type: "error",
          error: { type: "api_error", message: `Fake API error ${plan.status}` },
        },
        { status: plan.status },
      );
    }
    const n = ++this.#counter;
    const events = sseEvents(plan, model ?? "claude-fake", n, this.#slowDelayMs);
    return new Response(this.#stream(events, plan.kind === "stall"), {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "request-id": `req_fake_${n}`,
      },
    });
  }

  #log(entry: FakeApiRequest): void {
    this.requests.push(entry);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.pred(entry)) continue;
      clearTimeout(waiter.timer);
      this.#waiters.delete(waiter);
      waiter.resolve(entry);
    }
  }

  /**
   * Streams the events (with their delays); a held stream then stays open
   * until the client cancels it (disconnect) or the server closes.
   */
  #stream(events: SseEvent[], hold: boolean): ReadableStream<Uint8Array> {
    const streams = this.#streams;
    const idle = (): void => {
      if (streams.size > 0) return;
      const callbacks = this.#streamsIdle;
      this.#streamsIdle = [];
      for (const callback of callbacks) callback();
    };
    let index = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake: (() => void) | undefined;
    let ended = false;
    let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
    const end = (): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      wake?.();
      streams.delete(end);
      try {
        controllerRef?.close();
      } catch {
        // Already closed or cancelled.
      }
      idle();
    };
    streams.add(end);
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller;
      },
      async pull(controller) {
        if (ended) return;
        const event = events[index++];
        if (event === undefined) {
          if (!hold) return end();
          // Hold the connection: wait until the client leaves or the server closes.
          await new Promise<void>((resolve) => (wake = resolve));
          return;
        }
        if (event.delayMs > 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, event.delayMs);
          });
          if (ended) return;
        }
        controller.enqueue(
          ENCODER.encode(`event: ${event.name}\ndata: ${JSON.stringify(event.data)}\n\n`),
        );
      },
      cancel() {
        end();
      },
    }, { highWaterMark: 0 });
  }
}

/**
 * Starts a fake Messages API on `127.0.0.1` (a free port).
 *
 * @param options Reply tuning.
 * @returns The running fake; close it (or `await using` it) when done.
 *
 * @example Echo
 * ```ts ignore
 * await using api = await startFakeApi();
 * const res = await fetch(`${api.url}/v1/messages?beta=true`, {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
 * });
 * await res.text(); // SSE with "Echo: hi"
 * ```
 */
export function startFakeApi(options: FakeApiOptions = {}): Promise<FakeApi> {
  return Promise.resolve(new FakeApiServer(options));
}

// ---------------------------------------------------------------------------
// Reading requests

type Plan =
  | { kind: "other" }
  | { kind: "echo" | "slow" | "stall" | "tool_result"; text: string }
  | { kind: "tool"; name: string; input: Record<string, unknown> }
  | { kind: "error"; status: number };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The blocks of the last `role: "user"` message of a Messages request body.
 * Not simply the last message: the CLI ends the list with `role: "system"`
 * entries (its environment; up to 2.1.312 also a `<total_tokens>` note).
 *
 * @param body A parsed Messages request body.
 * @returns The blocks (a string content as one text block), or `[]`.
 */
export function lastUserBlocks(body: unknown): unknown[] {
  if (!isObject(body) || !Array.isArray(body.messages)) return [];
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message: unknown = body.messages[i];
    if (!isObject(message) || message.role !== "user") continue;
    if (typeof message.content === "string") return [{ type: "text", text: message.content }];
    return Array.isArray(message.content) ? message.content : [];
  }
  return [];
}

/** Removes `<system-reminder>…</system-reminder>` sections from a text. */
function withoutReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trim();
}

/**
 * What reached the model since request `from`: the Messages request bodies,
 * as JSON text, one a line.
 *
 * @param api The fake API.
 * @param from How many requests came before.
 * @returns The bodies' text.
 */
export function sentToModel(api: Pick<FakeApi, "messageRequests">, from: number): string {
  return api.messageRequests.slice(from).map((request) => JSON.stringify(request.body)).join("\n");
}

/**
 * The prompt of a Messages request: the last user text block of its last
 * user message that is not a system reminder and not an interrupt marker.
 *
 * @param body A parsed Messages request body.
 * @returns The prompt, or `undefined` when the last user message has none.
 */
export function promptOf(body: unknown): string | undefined {
  const blocks = lastUserBlocks(body);
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i];
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") continue;
    const text = withoutReminders(block.text);
    if (text === "" || text.startsWith(INTERRUPT_MARKER)) continue;
    return text;
  }
  return undefined;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (isObject(part) && typeof part.text === "string" ? part.text : ""))
    .filter((part) => part !== "")
    .join("\n");
}

/**
 * The `tool_result` blocks of the last user message of a Messages request.
 *
 * @param body A parsed Messages request body.
 * @returns The results, possibly none.
 */
export function toolResultsOf(body: unknown): FakeToolResult[] {
  return lastUserBlocks(body).flatMap((block) =>
    isObject(block) && block.type === "tool_result"
      ? [{
        toolUseId: String(block.tool_use_id),
        content: contentText(block.content),
        isError: block.is_error === true,
      }]
      : []
  );
}

function planReply(body: unknown): Plan {
  const prompt = promptOf(body);
  if (prompt === undefined) {
    const results = toolResultsOf(body);
    if (results.length > 0) {
      return {
        kind: "tool_result",
        text: results
          .map((r) => `${r.isError ? "Tool failed" : "Tool said"}: ${r.content}`)
          .join("\n"),
      };
    }
    return { kind: "echo", text: "Echo: " };
  }
  const error = /\[\[error:(\d{3})\]\]/.exec(prompt);
  if (error) return { kind: "error", status: Number(error[1]) };
  if (prompt.includes("[[stall]]")) return { kind: "stall", text: "" };
  if (prompt.includes("[[slow]]")) return { kind: "slow", text: `Echo: ${prompt}` };
  const tool = /\[\[tool:([^:\]]+)(?::([\s\S]*))?\]\]/.exec(prompt);
  if (tool) return toolPlan(tool[1] ?? "", tool[2] ?? "");
  return { kind: "echo", text: `Echo: ${prompt}` };
}

function toolPlan(name: string, argument: string): Plan {
  switch (name) {
    case "bash":
      return { kind: "tool", name: "Bash", input: { command: argument, description: "Run it" } };
    case "read":
      return { kind: "tool", name: "Read", input: { file_path: argument } };
    case "write": {
      const colon = argument.indexOf(":");
      return {
        kind: "tool",
        name: "Write",
        input: colon < 0
          ? { file_path: argument, content: "" }
          : { file_path: argument.slice(0, colon), content: argument.slice(colon + 1) },
      };
    }
    default: {
      let input: unknown;
      try {
        input = argument === "" ? {} : JSON.parse(argument);
      } catch {
        return { kind: "echo", text: `Fake API: the input of tool ${name} is not JSON` };
      }
      return { kind: "tool", name, input: isObject(input) ? input : { value: input } };
    }
  }
}

// ---------------------------------------------------------------------------
// Writing replies

function usage(outputTokens: number): Record<string, number> {
  return {
    input_tokens: 42,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** Cuts a text into `parts` pieces of about equal length (at least one). */
function pieces(text: string, parts: number): string[] {
  if (text.length === 0) return [""];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function sseEvents(plan: Plan, model: string, n: number, slowDelayMs: number): SseEvent[] {
  const ev = (name: string, data: Record<string, unknown>, delayMs = 0): SseEvent => ({
    name,
    data: { type: name, ...data },
    delayMs,
  });
  const events: SseEvent[] = [
    ev("message_start", {
      message: {
        id: `msg_fake_${n}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usage(1),
      },
    }),
  ];
  let stopReason = "end_turn";
  let outputTokens = 1;
  if (plan.kind === "tool") {
    const json = JSON.stringify(plan.input);
    events.push(ev("content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id: `toolu_fake_${n}`, name: plan.name, input: {} },
    }));
    for (const part of pieces(json, 3)) {
      events.push(ev("content_block_delta", {
        index: 0,
        delta: { type: "input_json_delta", partial_json: part },
      }));
    }
    stopReason = "tool_use";
    outputTokens = Math.ceil(json.length / 4);
  } else if (plan.kind === "stall") {
    events.push(ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
    for (const text of ["Starting a long ", "answer that ", "never ends"]) {
      events.push(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } }, 5));
    }
    return events; // held open by the caller
  } else if (plan.kind !== "other" && plan.kind !== "error") {
    const slow = plan.kind === "slow";
    events.push(ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
    for (const text of pieces(plan.text, slow ? 8 : 3)) {
      events.push(
        ev(
          "content_block_delta",
          { index: 0, delta: { type: "text_delta", text } },
          slow ? slowDelayMs : 0,
        ),
      );
    }
    outputTokens = Math.max(1, Math.ceil(plan.text.length / 4));
  }
  events.push(
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    ev("message_stop", {}),
  );
  return events;
}
