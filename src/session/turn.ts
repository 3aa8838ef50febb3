// This module is browser compatible.
/**
 * {@linkcode Turn}: one finished turn, and {@linkcode TurnResult}, its
 * `result` frame read into plain, always-present fields.
 *
 * @module
 */

import type { Usage } from "../protocol/content.ts";
import type { PermissionDenial, ResultFrame } from "../protocol/messages.ts";
import { isRecord } from "../protocol/guards.ts";
import type { SessionEvent } from "./events.ts";

/** One finished turn. */
export interface Turn {
  /** The parsed `result`. */
  readonly result: TurnResult;
  /** Every event the session delivered during the turn, the result included (empty if not collected). */
  readonly events: readonly SessionEvent[];
  /** The uuid of the user line that started the turn. */
  readonly uuid: string;
}

/** The outcome of one turn. */
export interface TurnResult {
  /** The final text (`""` for error subtypes, which carry `errors` instead). */
  readonly text: string;
  /** True when the turn failed, API errors included (their subtype is still `success`). */
  readonly isError: boolean;
  /** The CLI's subtype: `success`, `error_during_execution`, `error_max_turns`, … */
  readonly subtype: string;
  /** What this turn cost, in US dollars. */
  readonly costUsd: number;
  /** What the process has cost so far (the CLI's cumulative `total_cost_usd`). */
  readonly totalCostUsd: number;
  /** This turn's token usage, when reported. */
  readonly usage: Usage | undefined;
  /** The number of model round trips in this turn. */
  readonly numTurns: number;
  /** Wall time of the turn in the CLI, in milliseconds. */
  readonly durationMs: number;
  /** Why the CLI ended the turn: `completed`, `aborted_streaming`, `aborted_tools`, `max_turns`, `api_error`, … */
  readonly terminalReason: string | undefined;
  /** The model's stop reason, when there is one. */
  readonly stopReason: string | null;
  /** Error details of error subtypes. */
  readonly errors: readonly string[];
  /** Tool uses denied during the turn. */
  readonly permissionDenials: readonly PermissionDenial[];
  /** The HTTP status of an API error, if the turn ended on one. */
  readonly apiErrorStatus: number | null;
  /** The structured output, with a JSON schema. */
  readonly structuredOutput: unknown;
  /** The session id the result belongs to. */
  readonly sessionId: string | undefined;
  /** The frame as the CLI sent it. */
  readonly raw: ResultFrame;
}

/**
 * Reads a `result` frame. Missing or mistyped fields get neutral values, so a
 * malformed result still ends its turn.
 *
 * @param frame The `result` frame.
 * @param previousTotalCostUsd The cumulative cost before this turn, to derive the turn's own cost.
 * @returns The turn result.
 */
export function readTurnResult(frame: ResultFrame, previousTotalCostUsd = 0): TurnResult {
  const subtype = typeof frame.subtype === "string" ? frame.subtype : "unknown";
  const totalCostUsd = num(frame.total_cost_usd);
  return {
    text: typeof frame.result === "string" ? frame.result : "",
    isError: typeof frame.is_error === "boolean" ? frame.is_error : subtype !== "success",
    subtype,
    costUsd: turnCost(frame) ?? Math.max(0, totalCostUsd - previousTotalCostUsd),
    totalCostUsd,
    usage: isRecord(frame.usage) ? frame.usage : undefined,
    numTurns: num(frame.num_turns),
    durationMs: num(frame.duration_ms),
    terminalReason: typeof frame.terminal_reason === "string" ? frame.terminal_reason : undefined,
    stopReason: typeof frame.stop_reason === "string" ? frame.stop_reason : null,
    errors: Array.isArray(frame.errors) ? frame.errors.filter((e) => typeof e === "string") : [],
    permissionDenials: Array.isArray(frame.permission_denials)
      ? frame.permission_denials.filter(isRecord) as PermissionDenial[]
      : [],
    apiErrorStatus: typeof frame.api_error_status === "number" ? frame.api_error_status : null,
    structuredOutput: frame.structured_output,
    sessionId: typeof frame.session_id === "string" ? frame.session_id : undefined,
    raw: frame,
  };
}

/* The CLI's own per-turn figure (untyped `model_usage_since_last_result`), when present. */
function turnCost(frame: ResultFrame): number | undefined {
  const since = (frame as unknown as Record<string, unknown>).model_usage_since_last_result;
  if (!isRecord(since)) return undefined;
  let sum = 0;
  for (const usage of Object.values(since)) {
    if (isRecord(usage) && typeof usage.costUSD === "number") sum += usage.costUSD;
  }
  return sum;
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
