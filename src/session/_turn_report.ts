// This module is browser compatible.
/* How a turn ended, to its span, the metrics and the stats. */

import type { SpanHandle } from "../telemetry/_telemetry.ts";
import type { Observer } from "./_observer.ts";
import type { Turn } from "./turn.ts";

/** What a settled turn tells its observer. */
export interface ReportedTurn {
  /** The turn's span. */
  readonly span: SpanHandle;
  /** When `send` wrote it (`performance.now()`). */
  readonly startedAt: number;
}

/**
 * Reports a settled turn: its outcome to the stats, its attributes and status
 * to its span (which it ends), and the turn metrics.
 *
 * @param observer Where the session reports.
 * @param turn The turn's span and start.
 * @param outcome Its result, its error, or why it was aborted.
 */
export function reportTurn(
  observer: Observer,
  turn: ReportedTurn,
  outcome: { turn: Turn } | { error: unknown } | { aborted: unknown },
): void {
  const { telemetry, stats } = observer;
  const aborted = "aborted" in outcome;
  const abortReason = aborted ? outcome.aborted : undefined;
  const result = "turn" in outcome ? outcome.turn.result : undefined;
  const state = aborted ? "aborted" : result && !result.isError ? "ok" : "error";
  if (state === "ok") stats.turnsOk++;
  else if (state === "aborted") stats.turnsAborted++;
  else stats.turnsError++;
  const kind = result
    ? undefined
    : stats.error(aborted ? abortReason : (outcome as { error: unknown }).error);
  if (!telemetry.on) return;
  const model = result ? Object.keys(result.models)[0] : undefined;
  if (result) {
    turn.span.set({
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
  if (aborted) turn.span.fail(abortReason);
  else if (result?.isError) {
    turn.span.fail(result.errors[0] ?? `the turn ended with ${result.subtype}`);
  } else if (result) turn.span.ok();
  else turn.span.fail((outcome as { error: unknown }).error);
  turn.span.end();
  const common = { "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic" };
  telemetry.count("claude.turns", 1, { "claude.turn.outcome": state });
  if (kind !== undefined) telemetry.count("claude.errors", 1, { "error.type": kind });
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
