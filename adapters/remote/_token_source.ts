// This module is browser compatible.
/*
 * The bearer token of one connection attempt: the fixed string `remote()`
 * was given, or what its token function returns, asked once per attempt
 * (the first connection, then each reconnection attempt) and bounded.
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import { DuplexError } from "../../src/errors.ts";
import { reasonOf } from "./_socket.ts";

/** What a token function is told: aborted when the attempt is given up. */
export interface TokenContext {
  /** Aborted when the connection attempt ends (its bound, or the session's start signal). */
  readonly signal: AbortSignal;
}

/** A function that returns a bearer token for the next connection attempt. */
export type TokenFunction = (context: TokenContext) => string | Promise<string>;

/**
 * Asks for the token of one connection attempt, within `timeoutMs`.
 *
 * @param token The fixed token, or the function.
 * @param timeoutMs The bound on the function.
 * @param url The relay's URL, for the messages.
 * @param signal Aborting it rejects with its reason, unchanged.
 * @returns The token.
 * @throws {DuplexError} `unauthorized` (the function threw or rejected: its
 * error is the cause), `invalid_argument` (it returned no non-empty string),
 * `timeout` (no token within `timeoutMs`).
 */
export async function tokenFor(
  token: string | TokenFunction,
  timeoutMs: number,
  url: string,
  signal?: AbortSignal,
): Promise<string> {
  if (typeof token === "string") return token;
  signal?.throwIfAborted();
  using limit = deadline(timeoutMs, {
    signal,
    reason: () =>
      new DuplexError(
        "timeout",
        `Cannot connect to the relay at ${url}: the token function returned no token ` +
          `within ${timeoutMs} ms`,
      ),
  });
  let value: unknown;
  try {
    value = await abortable(
      Promise.resolve().then(() => token({ signal: limit.signal })),
      limit.signal,
    );
  } catch (error) {
    if (limit.signal.aborted && error === limit.signal.reason) throw error;
    throw new DuplexError(
      "unauthorized",
      `Cannot connect to the relay at ${url}: the token function failed: ${reasonOf(error)}`,
      { cause: error },
    );
  }
  if (typeof value !== "string" || value === "") {
    throw new DuplexError(
      "invalid_argument",
      `Cannot connect to the relay at ${url}: the token function must return a non-empty ` +
        `string, got ${value === "" ? '""' : typeof value}`,
    );
  }
  return value;
}
