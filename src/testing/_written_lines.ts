// This module is browser compatible.
/**
 * The lines the session wrote to a replay, queued until the replay compares
 * them with the recording. Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { abortable, deadline } from "../_deadline.ts";
import { isRecord } from "../_values.ts";
import type { MemoryTransport } from "./_memory_transport.ts";

/** A line the session wrote, and its parse (undefined when it is not a JSON object). */
export interface Written {
  line: string;
  frame: Record<string, unknown> | undefined;
  /** Which of the session's writes it was (1-based, `keep_alive` lines counted). */
  number: number;
}

/** What ended a wait: a line came, the input or the transport ended, or the deadline passed. */
export type Wait = "line" | "input_ended" | "ended" | "timeout";

/** The written lines not compared yet, and every parsed one. */
export class WrittenLines {
  #frames: Record<string, unknown>[] = [];
  #queue: Written[] = [];
  #count = 0;
  #wake: PromiseWithResolvers<void> = Promise.withResolvers();

  /** Every line the session wrote that is a JSON object, parsed. */
  get frames(): readonly Record<string, unknown>[] {
    return this.#frames;
  }

  /**
   * Takes a line the session wrote; `keep_alive` lines are kept in
   * {@linkcode WrittenLines.frames} but not queued.
   *
   * @param line The line, without newline.
   */
  add(line: string): void {
    let frame: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      if (isRecord(value)) frame = value;
    } catch {
      frame = undefined;
    }
    if (frame !== undefined) this.#frames.push(frame);
    this.#count += 1;
    if (frame?.type === "keep_alive") return;
    this.#queue.push({ line, frame, number: this.#count });
    this.wakeUp();
  }

  /** Wakes the waiter: something it waits for may have happened. */
  wakeUp(): void {
    this.#wake.resolve();
    this.#wake = Promise.withResolvers();
  }

  /**
   * Waits for a line, the end of input, the end of the transport, or the deadline.
   *
   * @param t The replay's transport.
   * @param ms The deadline, in milliseconds (`Infinity`: none).
   * @returns The first that holds, checked in this order: the transport ended, a
   *   line is queued, the input ended, the deadline passed.
   */
  async wait(t: MemoryTransport, ms: number): Promise<Wait> {
    using limit = deadline(ms);
    for (;;) {
      if (t.ended) return "ended";
      if (this.#queue.length > 0) return "line";
      if (t.inputEnded) return "input_ended";
      if (limit.signal.aborted) return "timeout";
      await abortable(this.#wake.promise, limit.signal).catch(() => {});
    }
  }

  /**
   * Takes the oldest queued line; call it after {@linkcode WrittenLines.wait} said `"line"`.
   *
   * @returns The line.
   */
  shift(): Written {
    return this.#queue.shift()!;
  }
}
