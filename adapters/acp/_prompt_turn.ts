/**
 * One `session/prompt`: the prompt sent as one turn of the session, its
 * events forwarded as `session/update`s while it runs (through one bounded
 * subscription), a `usage_update` at its end, and its result read as an ACP
 * stop reason. Cancelling (`session/cancel`) aborts the turn, which
 * interrupts it in the CLI; the prompt then answers `cancelled`.
 *
 * @module
 */

import {
  type ContentBlock,
  type PromptResponse,
  RequestError,
  type SessionUpdate,
} from "./_acp.ts";
import { type DuplexSession, isDuplexError, type SessionEvent, type Turn } from "../../mod.ts";
import { promptContent } from "./_prompt.ts";
import type { UpdateMapper } from "./_updates.ts";
import { isRecord } from "../../src/_values.ts";

/** How long the forwarding may lag behind the turn's end before it is cut. */
const DRAIN_MS = 5_000;

/** What a prompt needs besides the session. */
export interface PromptTurnOptions {
  /** Aborted by `session/cancel`. */
  readonly signal: AbortSignal;
  /** The session's mapper. */
  readonly mapper: UpdateMapper;
  /** The subscription's capacity. */
  readonly capacity: number;
  /** Sends one update to the client. */
  readonly notify: (update: SessionUpdate) => Promise<void>;
  /** Reports a problem that is not the prompt's failure. */
  readonly log: (message: string) => void;
}

async function forward(
  events: AsyncIterable<SessionEvent>,
  options: PromptTurnOptions,
): Promise<void> {
  for await (const event of events) {
    if (event.type === "lagged") {
      options.log(`The client reads too slowly: ${event.count} events of the turn were dropped`);
      continue;
    }
    for (const update of options.mapper.live(event)) {
      await options.notify(update).catch((error) => options.log(String(error)));
    }
    if (event.type === "result" || event.type === "exit") return;
  }
}

/**
 * Runs one prompt.
 *
 * @param session The session's live CLI.
 * @param prompt The ACP content blocks.
 * @param options Signal, mapper, capacity, where updates go.
 * @returns The ACP stop reason.
 * @throws {RequestError} `invalidParams` for a prompt with nothing to send; `internalError` when the turn failed.
 */
export async function promptSession(
  session: DuplexSession,
  prompt: readonly ContentBlock[],
  options: PromptTurnOptions,
): Promise<PromptResponse> {
  if (options.signal.aborted) return { stopReason: "cancelled" };
  const { content, skipped } = promptContent(prompt);
  if (content.length === 0) {
    throw RequestError.invalidParams(
      undefined,
      `Cannot prompt: the prompt holds nothing Claude Code reads${
        skipped.length > 0 ? ` (left out: ${skipped.join(", ")})` : ""
      }`,
    );
  }
  const subscription = session.subscribe({ capacity: options.capacity });
  const forwarding = forward(subscription, options);
  let turn: Turn | undefined;
  let failure: unknown;
  try {
    turn = await session.send(content, { signal: options.signal });
  } catch (error) {
    failure = error;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    forwarding,
    new Promise<void>((resolve) => timer = setTimeout(resolve, DRAIN_MS)),
  ]);
  clearTimeout(timer);
  subscription.unsubscribe();
  await forwarding;
  if (options.signal.aborted) return { stopReason: "cancelled" };
  if (turn === undefined) {
    if (isDuplexError(failure, "aborted")) return { stopReason: "cancelled" };
    throw RequestError.internalError(
      undefined,
      `Claude Code failed the prompt: ${messageOf(failure)}`,
    );
  }
  await options.notify(usageUpdate(turn)).catch((error) => options.log(String(error)));
  return { stopReason: stopReasonOf(turn) };
}

function usageUpdate(turn: Turn): SessionUpdate {
  const { tokens, raw } = turn.result;
  const windows = isRecord(raw.modelUsage)
    ? Object.values(raw.modelUsage).flatMap((usage) =>
      isRecord(usage) && typeof usage.contextWindow === "number" ? [usage.contextWindow] : []
    )
    : [];
  return {
    sessionUpdate: "usage_update",
    used: tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation,
    size: windows.length > 0 ? Math.min(...windows) : 200_000,
    cost: { amount: turn.result.totalCostUsd, currency: "USD" },
  };
}

/**
 * The ACP stop reason of a finished turn.
 *
 * @param turn The turn.
 * @returns The stop reason.
 * @throws {RequestError} `internalError` with the CLI's words for a failed turn (an API error).
 */
export function stopReasonOf(turn: Pick<Turn, "result">): PromptResponse["stopReason"] {
  const result = turn.result;
  if (result.stopReason === "max_tokens") return "max_tokens";
  if (result.subtype.startsWith("error_max")) return "max_turn_requests";
  if (result.terminalReason?.startsWith("aborted")) return "cancelled";
  if (result.stopReason === "refusal") return "refusal";
  if (result.isError) {
    throw RequestError.internalError(
      undefined,
      result.text || result.errors.join(", ") ||
        `Claude Code ended the turn with ${result.subtype}`,
    );
  }
  return "end_turn";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
