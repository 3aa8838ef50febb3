// This module is browser compatible.
/**
 * The options and rule types of {@linkcode ScriptedCli}: how a test says
 * which lines to answer, and with what.
 *
 * @module
 */

import type { ScriptedCli } from "./scripted_cli.ts";

/**
 * How emitted output is cut into chunks on `readable`: one `Uint8Array` per
 * emission (`"line"`), pseudo-random sizes from 1 to 23 bytes (`"bytes"`,
 * deterministic), or fixed sizes (`{ maxChunk }`). Cuts may split a
 * multi-byte character or a line, and a chunk may hold several lines.
 */
export type Chunking = "line" | "bytes" | { maxChunk: number };

/** Decides whether a rule applies to a line the session wrote. */
export type FrameMatcher = (frame: Record<string, unknown>) => boolean;

/**
 * A matcher, or a shorthand: a frame `type` (`"user"`), or `"type:subtype"`
 * where the subtype is `request.subtype` for `control_request`,
 * `response.subtype` for `control_response`, else `subtype`
 * (`"control_request:interrupt"`).
 */
export type FrameMatch = FrameMatcher | string;

/** "When the session writes a line that matches, reply." */
export interface ScriptRule {
  /** Which lines the rule answers. */
  match: FrameMatcher;
  /**
   * Answers a line: returns frames to emit (in order), or emits itself with
   * `cli.emit(...)`, or both. May be async. A throw is recorded in
   * {@linkcode ScriptedCli.errors}.
   */
  reply: (
    frame: Record<string, unknown>,
    cli: ScriptedCli,
  ) => void | Iterable<unknown> | Promise<void | Iterable<unknown>>;
  /** Remove the rule after it answered once. @default {false} */
  once?: boolean;
}

/** Options of {@linkcode ScriptedCli}. */
export interface ScriptedCliOptions {
  /** Rules, tried in order before those added with `on()`. */
  rules?: ScriptRule[];
  /**
   * Built-in behaviour for lines no rule answers: a user line gets
   * `system/init`, an assistant text `"Echo: <text>"` and a `result` (with
   * `command_lifecycle` frames when it carries a `uuid`; costs cumulative per
   * process, like the real CLI); `interrupt` gets `{still_queued: []}`;
   * `initialize` gets a small success; any other control request gets the
   * real CLI's `unsupported_request` error.
   * @default {false}
   */
  echo?: boolean;
  /** Exit with code 0 once input ends and pending replies are out. @default {echo} */
  exitOnEndInput?: boolean;
  /** The session id echo frames carry. @default {a random UUID} */
  sessionId?: string;
  /** How emitted output is cut into `Uint8Array` chunks on `readable`. @default {"line"} */
  chunking?: Chunking;
  /** Reported in `transport.info.pid`. */
  pid?: number;
}

/** Options of {@linkcode ScriptedCli.nextWrite}. */
export interface NextWriteOptions {
  /** How long to wait: 1 to 2^31-1 milliseconds, or `Infinity`. @default {5000} */
  timeoutMs?: number;
  /** Cancels the wait (rejects with `signal.reason`). */
  signal?: AbortSignal;
}

/** Options of {@linkcode ScriptedCli.exit}. */
export interface ScriptedExit {
  /** The exit code. @default {0, or null when a signal is given} */
  code?: number | null;
  /** The signal that ended the process, for example `"SIGKILL"`. @default {null} */
  signal?: string | null;
  /** A human-readable reason. */
  reason?: string;
  /** The stderr tail. @default {the last lines given to emitStderr} */
  stderrTail?: string;
}
