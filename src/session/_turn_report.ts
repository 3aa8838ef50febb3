// This module is browser compatible.
/* How a turn ended, to its span, the metrics and the stats. */

import type { SpanHandle } from "../telemetry/_telemetry.ts";
import type { Observer } from "./_observer.ts";
import type { TurnOutcome } from "./_stats.ts";
import type { Turn } from "./turn.ts";

/** A settled turn's result, its error, or why it was aborted. */
export type Outcome = { turn: Turn } | { error: unknown } | { aborted: unknown };

/** What a settled turn tells its observer. */
export interface ReportedTurn {
  /** The turn's span. */
  readonly span: SpanHandle;
  /** When `send` wrote it (`performance.now()`). */
  readonly startedAt: number;
}

/**
 * Reports a settled turn: its outcome to the stats (and their metrics), its
 * attributes and status to its span (which it ends), and the turn histograms.
 *
 * @param observer Where the session reports.
 * @param turn The turn's span and start.
 * @param outcome Its result, its error, or why it was aborted.
 */
export function reportTurn(observer: Observer, turn: ReportedTurn, outcome: Outcome): void {
  const { telemetry, stats } = observer;
  const result = "turn" in outcome ? outcome.turn.result : undefined;
  const state: TurnOutcome = "aborted" in outcome
    ? "aborted"
    : result && !result.isError
    ? "ok"
    : "error";
  stats.turn(state);
  const kind = "aborted" in outcome
    ? stats.error(outcome.aborted)
    : "error" in outcome
    ? stats.error(outcome.error)
    : undefined;
  if (!telemetry.on) return;
  const model = result ? Object.keys(result.models)[0] : undefined;
  if (telemetry.tracing) endSpan(turn.span, outcome, model);
  const common = { "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic" };
  telemetry.record(
    "gen_ai.client.operation.duration",
    (performance.now() - turn.startedAt) / 1000,
    {
      ...common,
      ...(model ? { "gen_ai.response.model": model } : {}),
      ...(state === "ok" ? {} : { "error.type": kind ?? state }),
    },
  );
  if (result) {
    telemetry.record("gen_ai.client.token.usage", result.tokens.input, {
      ...common,
      "gen_ai.token.type": "input",
    });
    telemetry.record("gen_ai.client.token.usage", result.tokens.output, {
      ...common,
      "gen_ai.token.type": "output",
    });
  }
}

/* The turn's attributes and status, on its span, which it ends. */
function endSpan(span: SpanHandle, outcome: Outcome, model: string | undefined): void {
  const result = "turn" in outcome ? outcome.turn.result : undefined;
  if (result) {
    span.set({
      "gen_ai.response.model": model,
      "gen_ai.conversation.id": result.sessionId,
      "gen_ai.usage.input_tokens": result.tokens.input,
      "gen_ai.usage.output_tokens": result.tokens.output,
      "gen_ai.usage.cache_read.input_tokens": result.tokens.cacheRead,
      "gen_ai.usage.cache_creation.input_tokens": result.tokens.cacheCreation,
      "claude.turn.cost_usd": result.costUsd,
      "claude.turn.num_turns": result.numTurns,
      "claude.turn.duration_ms": result.durationMs,
      "claude.turn.duration_api_ms": result.durationApiMs,
      "claude.turn.is_error": result.isError,
      "claude.turn.subtype": result.subtype,
      "claude.turn.terminal_reason": result.terminalReason,
    });
  }
  if ("aborted" in outcome) span.fail(outcome.aborted);
  else if ("error" in outcome) span.fail(outcome.error);
  else if (result?.isError) span.fail(result.errors[0] ?? `the turn ended with ${result.subtype}`);
  else span.ok();
  span.end();
}
