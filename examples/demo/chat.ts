/**
 * The demo's interactive chat: one long-lived session, the answer streamed
 * as it arrives, tool calls on one line, a question for each permission
 * request (allow / deny / always allow), Ctrl-C to interrupt a turn (twice
 * within 2 s to quit), cost and time after each turn, and `/model`, `/mode`,
 * `/cost`, `/quit`. The CLI is closed on the way out, also on Ctrl-D.
 *
 * @module
 */

import type { DuplexSession, PermissionDecision, PermissionRequest, Turn } from "@duplex/claude";
import type { PermissionMode, PermissionUpdate } from "@duplex/claude/protocol";
import { type ChatSession, startChatSession } from "./pick_cli.ts";
import { Renderer } from "./render.ts";
import { LineReader, Output, summarize } from "./terminal.ts";

const MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
  "auto",
];
const QUIT_WINDOW_MS = 2000;
/**
 * SIGINTs closer together than this are one press of Ctrl-C. The terminal
 * sends one to the whole foreground process group, and `deno task` (and npx
 * above it) forward theirs too, so one press reaches the demo two or three
 * times within a few milliseconds.
 */
const SAME_PRESS_MS = 200;
/** How long the status line waits for the printer to show the turn's end. */
const RENDER_BOUND_MS = 2000;
const HELP = [
  "Type a message and press Enter. Commands:",
  "  /model <name>   switch the model (for example sonnet)",
  "  /mode <mode>    permission mode: " + MODES.join(", "),
  "  /cost           cost, tokens and time so far",
  "  /quit           close claude and leave (also Ctrl-D, or Ctrl-C twice)",
  "Ctrl-C interrupts the turn that is running.",
];

/** One chat, from the first prompt to the exit. */
class Chat {
  readonly #out = new Output();
  readonly #input = new LineReader(Deno.stdin.readable);
  readonly #render = new Renderer(this.#out);
  readonly #alwaysTools = new Set<string>();
  #chat!: ChatSession;
  #turn: AbortController | undefined;
  /** When the last press of Ctrl-C began, and when its last signal came. */
  #press = { at: -Infinity, last: -Infinity };
  #quitting = false;
  #totals = { turns: 0, interrupted: 0, ms: 0, input: 0, output: 0 };

  get #session(): DuplexSession {
    return this.#chat.session;
  }

  async run(): Promise<never> {
    this.#out.line("@duplex/claude demo: a chat over one long-lived claude session.");
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      Deno.addSignalListener(signal, () => this.#onSignal(signal));
    }
    this.#chat = await startChatSession((request) => this.#ask(request));
    this.#out.line(this.#chat.banner);
    if (!this.#chat.real) {
      this.#out.line(
        "The stand-in echoes; [[tool:bash:ls]] asks a permission, [[slow]] streams slowly.",
      );
    }
    this.#out.line("/help lists the commands; Ctrl-C interrupts a turn, Ctrl-D quits.");
    void this.#print();
    for (;;) {
      this.#out.write("you> ");
      const line = await this.#input.next();
      this.#out.entered();
      if (line === null) return await this.#quit(0, "end of input");
      const text = line.trim();
      if (text.startsWith("/")) await this.#command(text);
      else if (text !== "") await this.#send(text);
    }
  }

  async #print(): Promise<void> {
    for await (const event of this.#session.subscribe({ capacity: 4096 })) {
      this.#render.show(event);
      if (event.type === "exit" && !this.#quitting) {
        this.#out.line(`claude ended: ${JSON.stringify(event.status)}`);
        await this.#quit(1, "claude ended");
      }
    }
  }

  async #send(text: string): Promise<void> {
    const controller = new AbortController();
    this.#turn = controller;
    const shown = this.#render.startTurn();
    const started = performance.now();
    let turn: Turn | undefined;
    try {
      turn = await this.#session.send(text, { signal: controller.signal });
    } catch (error) {
      if (!controller.signal.aborted) {
        this.#out.line(`  error: ${(error as Error).message}`);
        return;
      }
    } finally {
      this.#turn = undefined;
    }
    // The printer runs on its own: let it show the rest of the turn before the status line.
    await shown(RENDER_BOUND_MS);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    this.#totals.ms += performance.now() - started;
    const total = `total $${this.#render.seen.totalCostUsd.toFixed(4)}`;
    if (turn === undefined) {
      this.#totals.interrupted += 1;
      this.#out.line(`  (interrupted after ${seconds} s; ${total})`);
      return;
    }
    this.#totals.turns += 1;
    this.#totals.input += turn.result.tokens.input;
    this.#totals.output += turn.result.tokens.output;
    const error = turn.result.isError ? `; ${turn.result.subtype}` : "";
    const model = this.#render.seen.model ? `; ${this.#render.seen.model}` : "";
    this.#out.line(
      `  (${seconds} s, $${turn.result.costUsd.toFixed(4)}; ${total}${model}${error})`,
    );
  }

  async #ask(request: PermissionRequest): Promise<PermissionDecision> {
    const what = `${request.toolName}: ${summarize(request.input)}`;
    await this.#render.toolShown(request.toolUseId, RENDER_BOUND_MS);
    if (this.#alwaysTools.has(request.toolName)) {
      this.#out.line(`  (allowed: always allow ${request.toolName})`);
      return { behavior: "allow" };
    }
    for (;;) {
      this.#out.line(`  Allow ${what}?`);
      this.#out.write("  [y]es, [n]o, [a]lways: ");
      let answer: string | null;
      try {
        answer = await this.#input.next(request.signal);
        this.#out.entered();
      } catch {
        this.#out.line("  (the request was withdrawn)");
        return { behavior: "deny", message: "Withdrawn" };
      }
      const choice = answer?.trim().toLowerCase();
      if (answer === null || choice === "n" || choice === "no") {
        this.#out.line(`  denied ${request.toolName}`);
        return { behavior: "deny", message: "The user said no" };
      }
      if (choice === "y" || choice === "yes") return { behavior: "allow" };
      if (choice === "a" || choice === "always") return this.#always(request);
    }
  }

  /* Always allow: the CLI's own rule suggestions, kept to this session; else a rule of ours. */
  #always(request: PermissionRequest): PermissionDecision {
    const rules = request.suggestions
      .filter((s) => s.type === "addRules")
      .map((s): PermissionUpdate => ({ ...s, destination: "session" }));
    if (rules.length > 0) {
      this.#out.line(`  allowed, and always for this session: ${summarize(request.input)}`);
      return { behavior: "allow", updatedPermissions: rules };
    }
    this.#alwaysTools.add(request.toolName);
    this.#out.line(`  allowed, and ${request.toolName} always for this session`);
    return { behavior: "allow" };
  }

  async #command(text: string): Promise<void> {
    const [name, ...rest] = text.split(/\s+/);
    const arg = rest.join(" ");
    try {
      if (name === "/quit" || name === "/exit") await this.#quit(0, "bye");
      else if (name === "/help") HELP.forEach((line) => this.#out.line(line));
      else if (name === "/cost") this.#cost();
      else if (name === "/model" && arg) {
        await this.#session.setModel(arg);
        this.#render.seen.model = arg;
        this.#out.line(`  model: ${arg} (from the next turn)`);
      } else if (name === "/model") this.#out.line(`  model: ${this.#render.seen.model ?? "?"}`);
      else if (name === "/mode" && MODES.includes(arg as PermissionMode)) {
        await this.#session.setPermissionMode(arg as PermissionMode);
        this.#render.seen.mode = arg;
        this.#out.line(`  permission mode: ${arg}`);
      } else if (name === "/mode") {
        const now = `mode: ${this.#render.seen.mode ?? "?"}`;
        this.#out.line(`  ${arg ? `unknown mode ${arg}` : now}; one of ${MODES.join(", ")}`);
      } else this.#out.line(`  unknown command ${name}; /help lists them`);
    } catch (error) {
      this.#out.line(`  ${name} failed: ${(error as Error).message}`);
    }
  }

  #cost(): void {
    const t = this.#totals;
    this.#out.line(
      `  ${t.turns} turns (${t.interrupted} interrupted), ` +
        `$${this.#render.seen.totalCostUsd.toFixed(4)} in all, ` +
        `${t.input} input and ${t.output} output tokens, ${(t.ms / 1000).toFixed(1)} s in turns`,
    );
  }

  #onSignal(signal: "SIGINT" | "SIGTERM" | "SIGHUP"): void {
    if (signal !== "SIGINT") return void this.#quit(signal === "SIGTERM" ? 143 : 129, signal);
    const now = performance.now();
    const echo = now - this.#press.last < SAME_PRESS_MS;
    this.#press.last = now;
    if (echo) return; // the same press, delivered again
    const again = now - this.#press.at < QUIT_WINDOW_MS;
    this.#press.at = now;
    if (again) return void this.#quit(130, "Ctrl-C twice");
    if (this.#turn !== undefined) {
      this.#out.line("  ^C: interrupting the turn (Ctrl-C again to quit)");
      this.#turn.abort(new DOMException("Interrupted with Ctrl-C", "AbortError"));
    } else {
      this.#out.line("  (Ctrl-C again within 2 s quits, or type /quit)");
      this.#out.write("you> ");
    }
  }

  async #quit(code: number, why: string): Promise<never> {
    if (!this.#quitting) {
      this.#quitting = true;
      this.#out.line(`Closing claude (${why})...`);
      const status = this.#chat ? await this.#chat.session.close() : undefined;
      this.#out.line(`Closed: ${status?.state ?? "nothing was running"}.`);
      Deno.exit(code);
    }
    return await new Promise<never>(() => {});
  }
}

/** Runs the chat until the person quits; exits the program. */
export async function runChat(): Promise<never> {
  return await new Chat().run();
}
