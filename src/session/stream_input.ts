// This module is browser compatible.
// deno-lint-ignore-file camelcase -- field names are the wire protocol's
/**
 * The types of {@linkcode DuplexSession.streamInput}, the official SDK's
 * input-stream form of sending: each item of an (async) iterable is one
 * user message, written as a queued send (`send(…, { queue: true })`).
 *
 * @example Stream three messages and wait for each turn
 * ```ts
 * import { DuplexSession, type Turn } from "@duplex/claude";
 * import { ScriptedCli } from "@duplex/claude/testing";
 * import assert from "node:assert/strict";
 *
 * const cli = new ScriptedCli({ echo: true });
 * await using session = await DuplexSession.start({ transport: cli.transport });
 * async function* messages() {
 *   yield "First.";
 *   yield [{ type: "text" as const, text: "Second." }];
 *   yield { type: "user" as const, message: { role: "user" as const, content: "Third." } };
 * }
 * const turns: Promise<Turn>[] = [];
 * const { sent } = await session.streamInput(messages(), { onTurn: (turn) => turns.push(turn) });
 * assert.equal(sent, 3);
 * const texts = (await Promise.all(turns)).map((turn) => turn.result.text);
 * assert.deepEqual(texts, ["Echo: First.", "Echo: Second.", "Echo: Third."]);
 * ```
 *
 * @module
 */

import type { ContentBlock, UserContent } from "../protocol/content.ts";
import type { MessageOrigin } from "../protocol/messages.ts";
import type { Turn } from "./turn.ts";

/**
 * A user message as the official SDK's `SDKUserMessage` (and the CLI's
 * user line) spells it. The fields below are read; other fields (`session_id`,
 * `tool_use_result`, …) are ignored.
 */
export interface StreamInputMessage {
  /** Always `"user"`. */
  type: "user";
  /** The Messages-API user message: its content a non-empty string or content blocks. */
  message: { role: "user"; content: UserContent };
  /** `null` or absent: a host's line answers no tool use (any other value is refused). */
  parent_tool_use_id?: null;
  /** The line's uuid (default: a random one); the turn's `uuid`. */
  uuid?: string;
  /** Where the CLI puts the queued line (see `SendOptions.priority`). */
  priority?: "now" | "next" | "later";
  /** `false`: append the content without a turn (see `SendOptions.shouldQuery`). */
  shouldQuery?: boolean;
  /** Who the message comes from (see `SendOptions.origin`). */
  origin?: MessageOrigin;
  /** When the message was written, ISO 8601 (see `SendOptions.timestamp`). */
  timestamp?: string;
  /** `true`: the program wrote the line, not a person (see `SendOptions.isSynthetic`). */
  isSynthetic?: boolean;
  /** `true`: deliver the text as written (see `SendOptions.verbatim`). */
  client_composed?: true;
  /** Content the user pasted (see `SendOptions.pastedContent`). */
  pasted_content?: readonly (string | readonly ContentBlock[])[];
  /** Pastes inside the content (see `SendOptions.inlinePastes`). */
  inline_pastes?: readonly string[];
  /** Other fields, ignored. */
  [field: string]: unknown;
}

/** One item of a `streamInput` stream: what `send` takes, or an SDK-shaped user message. */
export type StreamInputItem = UserContent | StreamInputMessage;

/** Options of {@linkcode DuplexSession.streamInput}. */
export interface StreamInputOptions {
  /**
   * Stops reading the stream (the lines written so far stay written and
   * their turns run); `streamInput` then rejects with `signal.reason`.
   */
  signal?: AbortSignal;
  /**
   * Called once per line, right after it was written, with the promise of
   * the turn that runs it (as `send` would return it; lines queued together
   * without a priority run as one turn). Without it, follow the turns with
   * `subscribe()` (their `result` frames carry the line's uuid); a turn
   * nobody awaits never reports an unhandled rejection.
   */
  onTurn?: (turn: Promise<Turn>, line: { readonly uuid: string; readonly index: number }) => void;
}

/** What {@linkcode DuplexSession.streamInput} resolves with. */
export interface StreamInputResult {
  /** How many lines were written. */
  readonly sent: number;
}
