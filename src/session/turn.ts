// This module is browser compatible.
/**
 * {@linkcode Turn}: one finished turn, and {@linkcode TurnResult}, its
 * `result` frame read into plain, always-present fields.
 *
 * @module
 */

import type { Usage } from "../protocol/content.ts";
import type { PermissionDenial, ResultFrame } from "../protocol/messages.ts";
import { isRecord } from "../_values.ts";
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
  /** The main loop's token usage of this turn, as the CLI reports it (`usage`), when reported. */
  readonly usage: Usage | undefined;
  /**
   * This turn's own tokens, all models and sub-agents included: from the
   * CLI's per-turn figures (`model_usage_since_last_result`), else the
   * difference of its cumulative ones (`modelUsage`) since the last result,
   * else the main loop's `usage`. After an interrupt they cover what the
   * interrupted requests used.
   */
  readonly tokens: TurnTokens;
  /** This turn's tokens and cost per model (same sources as `tokens`). */
  readonly models: Readonly<Record<string, TurnModelUsage>>;
  /** Time the CLI spent waiting for the API in this turn, in milliseconds. */
  readonly durationApiMs: number;
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

/** Token counts of one turn. */
export interface TurnTokens {
  /** Input tokens, not counting cache reads and writes. */
  readonly input: number;
  /** Output tokens. */
  readonly output: number;
  /** Input tokens read from the prompt cache. */
  readonly cacheRead: number;
  /** Input tokens written to the prompt cache. */
  readonly cacheCreation: number;
}

/** One model's share of a turn. */
export interface TurnModelUsage extends TurnTokens {
  /** What this model cost in this turn, in US dollars. */
  readonly costUsd: number;
}

/** What the previous results of the process reported, to derive a turn's own figures. */
export interface PreviousTotals {
  /** The cumulative cost. */
  readonly totalCostUsd: number;
  /** The cumulative usage per model (`modelUsage`). */
  readonly modelUsage?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * Reads a `result` frame. Missing or mistyped fields get neutral values, so a
 * malformed result still ends its turn.
 *
 * @param frame The `result` frame.
 * @param previous The cumulative figures before this turn (or just the cost), to derive its own.
 * @returns The turn result.
 */
export function readTurnResult(
  frame: ResultFrame,
  previous: number | PreviousTotals = 0,
): TurnResult {
  const before: PreviousTotals = typeof previous === "number"
    ? { totalCostUsd: previous }
    : previous;
  const previousTotalCostUsd = before.totalCostUsd;
  const subtype = typeof frame.subtype === "string" ? frame.subtype : "unknown";
  const totalCostUsd = num(frame.total_cost_usd);
  const models = turnModels(frame, before.modelUsage);
  return {
    text: typeof frame.result === "string" ? frame.result : "",
    isError: typeof frame.is_error === "boolean" ? frame.is_error : subtype !== "success",
    subtype,
    costUsd: turnCost(frame) ?? Math.max(0, totalCostUsd - previousTotalCostUsd),
    totalCostUsd,
    usage: isRecord(frame.usage) ? frame.usage : undefined,
    tokens: models ? sumTokens(Object.values(models)) : usageTokens(frame.usage),
    models: models ?? {},
    durationApiMs: num(frame.duration_api_ms),
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

/* Per model: the CLI's per-turn figures, else the cumulative ones minus the previous ones. */
function turnModels(
  frame: ResultFrame,
  previous: Readonly<Record<string, unknown>> | undefined,
): Record<string, TurnModelUsage> | undefined {
  const since = (frame as unknown as Record<string, unknown>).model_usage_since_last_result;
  if (isRecord(since)) return mapModels(since, undefined);
  if (isRecord(frame.modelUsage)) return mapModels(frame.modelUsage, previous);
  return undefined;
}

function mapModels(
  usage: Record<string, unknown>,
  previous: Readonly<Record<string, unknown>> | undefined,
): Record<string, TurnModelUsage> {
  const out: Record<string, TurnModelUsage> = {};
  for (const [model, now] of Object.entries(usage)) {
    if (!isRecord(now)) continue;
    const was = isRecord(previous?.[model]) ? previous[model] as Record<string, unknown> : {};
    const delta = (key: string): number => Math.max(0, num(now[key]) - num(was[key]));
    out[model] = {
      input: delta("inputTokens"),
      output: delta("outputTokens"),
      cacheRead: delta("cacheReadInputTokens"),
      cacheCreation: delta("cacheCreationInputTokens"),
      costUsd: delta("costUSD"),
    };
  }
  return out;
}

function sumTokens(models: readonly TurnTokens[]): TurnTokens {
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheCreation = 0;
  for (const m of models) {
    input += m.input;
    output += m.output;
    cacheRead += m.cacheRead;
    cacheCreation += m.cacheCreation;
  }
  return { input, output, cacheRead, cacheCreation };
}

function usageTokens(usage: unknown): TurnTokens {
  const u = isRecord(usage) ? usage : {};
  return {
    input: num(u.input_tokens),
    output: num(u.output_tokens),
    cacheRead: num(u.cache_read_input_tokens),
    cacheCreation: num(u.cache_creation_input_tokens),
  };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
