/**
 * How the chat shows a session's events: the assistant's text as it streams
 * in, tool calls and their results on one line each, and what the turn's
 * `system/init` and `result` said (model, mode, cost).
 *
 * @module
 */

import type { SessionEvent } from "@duplex/claude";
import { type Output, summarize } from "./terminal.ts";

/** What the last frames said about the session. */
export interface Seen {
  model: string | undefined;
  mode: string | undefined;
  /** The CLI's running total for this process, from the last `result`. */
  totalCostUsd: number;
}

/** Prints events for a person; one per session, fed by a subscription. */
export class Renderer {
  readonly seen: Seen = { model: undefined, mode: undefined, totalCostUsd: 0 };
  #out: Output;
  #streamedText = false;
  #answering = false;
  #results = 0;
  #waiters: { count: number; resolve: () => void }[] = [];
  /** Tool calls shown, by id (the last few), and who waits for one. */
  #tools = new Set<string>();
  #toolWaiters = new Map<string, () => void>();

  /** @param out Where to print. */
  constructor(out: Output) {
    this.#out = out;
  }

  /**
   * A new turn starts: the next text opens a new answer.
   *
   * @returns Resolves once this turn's `result` has been shown (at most `boundMs` after `send`
   *   settles, when the session's end cuts the stream short).
   */
  startTurn(): (boundMs: number) => Promise<void> {
    this.#answering = false;
    this.#streamedText = false;
    const count = this.#results + 1;
    return (boundMs) => {
      if (this.#results >= count) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, boundMs);
        this.#waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    };
  }

  /**
   * Waits until the tool call `id` has been shown, at most `boundMs`: a
   * permission question asked from the session's callback must follow its
   * `[Tool] …` line, which the printer shows from its own subscription.
   *
   * @param id The tool use id (`undefined`: no wait).
   * @param boundMs The longest wait.
   */
  toolShown(id: string | undefined, boundMs: number): Promise<void> {
    if (id === undefined || this.#tools.has(id)) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, boundMs);
      const waiters = this.#toolWaiters;
      function done(): void {
        clearTimeout(timer);
        waiters.delete(id!);
        resolve();
      }
      waiters.set(id, done);
    });
  }

  /**
   * Shows one event.
   *
   * @param event The event.
   */
  show(event: SessionEvent): void {
    switch (event.type) {
      case "stream_event": {
        const inner = event.event as { type: string; delta?: { type?: string; text?: string } };
        if (inner.type === "content_block_delta" && inner.delta?.type === "text_delta") {
          this.#text(inner.delta.text ?? "");
          this.#streamedText = true;
        }
        return;
      }
      case "assistant":
        return this.#assistant(event.message.content as unknown[]);
      case "user":
        return this.#toolResults(event.message.content);
      case "system":
        if (event.subtype === "init") {
          const init = event as { model?: string; permissionMode?: string };
          this.seen.model = init.model ?? this.seen.model;
          this.seen.mode = init.permissionMode ?? this.seen.mode;
        }
        return;
      case "result": {
        this.seen.totalCostUsd = event.total_cost_usd ?? this.seen.totalCostUsd;
        this.#out.newline();
        this.#results += 1;
        const due = this.#waiters.filter((waiter) => waiter.count <= this.#results);
        this.#waiters = this.#waiters.filter((waiter) => waiter.count > this.#results);
        for (const waiter of due) waiter.resolve();
        return;
      }
      default:
        return;
    }
  }

  #shown(id: string): void {
    this.#tools.add(id);
    if (this.#tools.size > 64) this.#tools.delete(this.#tools.values().next().value!);
    this.#toolWaiters.get(id)?.();
  }

  #text(text: string): void {
    if (text === "") return;
    if (!this.#answering) {
      this.#out.newline();
      this.#out.write("claude> ");
      this.#answering = true;
    }
    this.#out.write(text);
  }

  #assistant(content: unknown[]): void {
    for (const block of content) {
      const b = block as {
        type?: string;
        text?: string;
        name?: string;
        input?: unknown;
        id?: string;
      };
      if (b.type === "text" && !this.#streamedText) this.#text(b.text ?? "");
      if (b.type === "tool_use") {
        const input = (typeof b.input === "object" && b.input !== null ? b.input : {}) as Record<
          string,
          unknown
        >;
        this.#out.line(`  [${b.name}] ${summarize(input)}`);
        this.#answering = false;
        if (typeof b.id === "string") this.#shown(b.id);
      }
    }
    // The next message's text is new: streamed or not, it is printed once.
    this.#streamedText = false;
  }

  #toolResults(content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const block of content) {
      const b = block as { type?: string; content?: unknown; is_error?: boolean };
      if (b.type !== "tool_result") continue;
      const text = typeof b.content === "string"
        ? b.content
        : Array.isArray(b.content)
        ? b.content.map((part) => (part as { text?: string }).text ?? "").join(" ")
        : "";
      this.#out.line(
        `  ${b.is_error ? "x" : "->"} ${summarize({ command: text || "(no output)" })}`,
      );
      this.#answering = false;
    }
  }
}
