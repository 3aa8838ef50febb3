// This module is browser compatible.
/**
 * The lines the session wrote to the scripted CLI, parsed, and the tests
 * waiting for one ({@linkcode ScriptedCli.nextWrite}). Private to `@duplex/claude/testing`.
 *
 * @module
 */

import { checkMs, deadline } from "../_deadline.ts";
import { DuplexError, excerptOf } from "../errors.ts";
import { isRecord } from "../_values.ts";
import { matchAny, toMatcher } from "./_frame_matcher.ts";
import type { FrameMatch, FrameMatcher, NextWriteOptions } from "./scripted_cli_options.ts";

/** How long {@linkcode WriteLog.next} waits by default, in milliseconds. */
const DEFAULT_NEXT_WRITE_TIMEOUT_MS = 5000;

/** Applies a matcher to a frame; a matcher that throws counts as no match. */
export type SafeMatch = (match: FrameMatcher, frame: Record<string, unknown>) => boolean;

interface Waiter {
  match: FrameMatcher;
  resolve: (frame: Record<string, unknown>) => void;
}

/**
 * Every parsed line the session wrote, in order, each handed to at most one
 * waiter: the oldest unclaimed line that matches, or the next one to come.
 */
export class WriteLog {
  #frames: Record<string, unknown>[] = [];
  #claimed: boolean[] = [];
  #waiters: Waiter[] = [];
  #matches: SafeMatch;
  #report: (error: Error) => void;

  /**
   * Makes an empty log.
   *
   * @param matches How a matcher is applied (errors recorded by the owner).
   * @param report Records a line that is not a JSON object (a `protocol` error).
   */
  constructor(matches: SafeMatch, report: (error: Error) => void) {
    this.#matches = matches;
    this.#report = report;
  }

  /** The lines, in order. */
  get frames(): readonly Record<string, unknown>[] {
    return this.#frames;
  }

  /**
   * Parses a line the session wrote and appends it (the first waiter it
   * matches gets it); a line that is not a JSON object is reported instead.
   *
   * @param line The line, without newline.
   * @returns The parsed line, or undefined when it is not a JSON object.
   */
  read(line: string): Record<string, unknown> | undefined {
    let frame: unknown;
    try {
      frame = JSON.parse(line);
    } catch (cause) {
      this.#badLine(line, "it is not JSON", cause);
      return undefined;
    }
    if (!isRecord(frame)) {
      this.#badLine(line, "it is not a JSON object", undefined);
      return undefined;
    }
    this.#record(frame);
    return frame;
  }

  #record(frame: Record<string, unknown>): void {
    const index = this.#frames.push(frame) - 1;
    this.#claimed.push(false);
    for (const waiter of this.#waiters) {
      if (this.#matches(waiter.match, frame)) {
        this.#claimed[index] = true;
        waiter.resolve(frame);
        break;
      }
    }
  }

  /**
   * Claims the oldest unclaimed line that matches, or waits for one.
   *
   * @param match Which lines count (default: any).
   * @param options Timeout and signal.
   * @returns The parsed line.
   */
  next(match: FrameMatch | undefined, options: NextWriteOptions): Promise<Record<string, unknown>> {
    const matcher = match === undefined ? matchAny : toMatcher(match);
    let timeoutMs: number;
    try {
      options.signal?.throwIfAborted();
      timeoutMs = checkMs(
        options.timeoutMs ?? DEFAULT_NEXT_WRITE_TIMEOUT_MS,
        "Cannot get the next write: timeoutMs",
      );
    } catch (reason) {
      return Promise.reject(reason);
    }
    for (let i = 0; i < this.#frames.length; i++) {
      if (!this.#claimed[i] && this.#matches(matcher, this.#frames[i]!)) {
        this.#claimed[i] = true;
        return Promise.resolve(this.#frames[i]!);
      }
    }
    const what = typeof match === "string" ? ` matching "${match}"` : "";
    const limit = deadline(timeoutMs, {
      signal: options.signal,
      reason: () =>
        new DuplexError(
          "timeout",
          `Cannot get the next write${what}: none came within ${timeoutMs} ms`,
        ),
    });
    const { promise, resolve, reject } = Promise.withResolvers<Record<string, unknown>>();
    const settle = (): void => {
      limit[Symbol.dispose]();
      limit.signal.removeEventListener("abort", onAbort);
      const at = this.#waiters.indexOf(waiter);
      if (at >= 0) this.#waiters.splice(at, 1);
    };
    const onAbort = (): void => {
      settle();
      reject(limit.signal.reason);
    };
    const waiter: Waiter = {
      match: matcher,
      resolve(frame): void {
        settle();
        resolve(frame);
      },
    };
    limit.signal.addEventListener("abort", onAbort, { once: true });
    this.#waiters.push(waiter);
    return promise;
  }

  #badLine(line: string, why: string, cause: unknown): void {
    this.#report(
      new DuplexError("protocol", `Cannot read a line the session wrote: ${why}`, {
        excerpt: excerptOf(line),
        cause,
      }),
    );
  }
}
