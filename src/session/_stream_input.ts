// This module is browser compatible.
/*
 * Reading `streamInput`'s stream: its iterator (async or not, never a
 * string), each item's next value within the caller's signal, and each item
 * as the content and send options of one queued `send`. Every failure is a
 * typed DuplexError naming the item: `invalid_argument` for a bad item (a
 * bad send option included), `aborted` for a stream that threw.
 */

import { abortable } from "../_deadline.ts";
import { isRecord, messageOf } from "../_values.ts";
import { DuplexError } from "../errors.ts";
import type { UserContent } from "../protocol/content.ts";
import { checkSendOptions, toContentBlocks } from "./_session_input.ts";
import type { SendOptions } from "./session_options.ts";
import type { StreamInputItem } from "./stream_input.ts";

/** One item, read: what to send and how. */
export interface StreamLine {
  readonly content: UserContent;
  readonly options: SendOptions;
}

/** The wire fields of an SDK-shaped message and the send option each becomes. */
const FIELDS = [
  ["uuid", "uuid"],
  ["priority", "priority"],
  ["shouldQuery", "shouldQuery"],
  ["origin", "origin"],
  ["timestamp", "timestamp"],
  ["isSynthetic", "isSynthetic"],
  ["pasted_content", "pastedContent"],
  ["inline_pastes", "inlinePastes"],
] as const;

/**
 * The stream's iterator.
 *
 * @throws {DuplexError} `invalid_argument` for a value that is not an (async) iterable.
 */
export function iteratorOf(
  stream: unknown,
): AsyncIterator<unknown> | Iterator<unknown> {
  if (stream !== null && typeof stream === "object") {
    const source = stream as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
    const asyncIterator = source[Symbol.asyncIterator];
    if (typeof asyncIterator === "function") return asyncIterator.call(source);
    const iterator = source[Symbol.iterator];
    if (typeof iterator === "function") return iterator.call(source);
  }
  throw new DuplexError(
    "invalid_argument",
    `Cannot stream input: expected an async iterable (or iterable) of messages, got ${
      typeof stream === "string" ? "a string (send it with send())" : typeof stream
    }`,
  );
}

/**
 * The iterator's next step, unless `signal` aborts first (then its reason).
 *
 * @throws {DuplexError} `aborted` when the stream throws (the cause kept).
 */
export async function nextItem(
  iterator: AsyncIterator<unknown> | Iterator<unknown>,
  index: number,
  signal: AbortSignal | undefined,
): Promise<IteratorResult<unknown>> {
  try {
    const step = Promise.resolve(iterator.next());
    return signal ? await abortable(step, signal) : await step;
  } catch (error) {
    if (signal?.aborted && error === signal.reason) throw error;
    throw new DuplexError(
      "aborted",
      `Cannot stream input: the stream failed before item ${index}: ${messageOf(error)}`,
      { cause: error },
    );
  }
}

/**
 * Stops a stream that is not done (its `return()`, not waited for: an async
 * generator waiting for its next value finishes that first).
 */
export function stopStream(iterator: AsyncIterator<unknown> | Iterator<unknown>): void {
  try {
    Promise.resolve(iterator.return?.()).catch(() => {});
  } catch {
    // A return() that throws: the stream is stopped either way.
  }
}

/**
 * Reads one item as a line to send.
 *
 * @throws {DuplexError} `invalid_argument` naming the item and what is wrong with it.
 */
export function readItem(item: unknown, index: number): StreamLine {
  try {
    const line = lineOf(item as StreamInputItem);
    toContentBlocks(line.content); // a TypeError for empty or malformed content
    checkSendOptions(line.options); // a TypeError for a bad option
    return line;
  } catch (error) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot stream input: item ${index}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}

function lineOf(item: StreamInputItem): StreamLine {
  if (typeof item === "string" || Array.isArray(item)) return { content: item, options: {} };
  if (!isRecord(item) || item.type !== "user" || !isRecord(item.message)) {
    throw new TypeError(
      'expected a string, content blocks, or a user message { type: "user", message: { role: "user", content } }',
    );
  }
  if (item.message.role !== "user") {
    throw new TypeError(`message.role must be "user", got ${JSON.stringify(item.message.role)}`);
  }
  if (item.parent_tool_use_id !== undefined && item.parent_tool_use_id !== null) {
    throw new TypeError("parent_tool_use_id must be null: a host's line answers no tool use");
  }
  if (item.uuid !== undefined && (typeof item.uuid !== "string" || item.uuid === "")) {
    throw new TypeError("uuid must be a non-empty string");
  }
  if (item.client_composed !== undefined && item.client_composed !== true) {
    throw new TypeError("client_composed must be true when set");
  }
  const options: Record<string, unknown> = {};
  for (const [wire, option] of FIELDS) {
    if (item[wire] !== undefined) options[option] = item[wire];
  }
  if (item.client_composed === true) options.verbatim = true;
  return { content: item.message.content as UserContent, options: options as SendOptions };
}
