// This module is browser compatible.
/*
 * The session's counters: plain integers behind `session.stats` (always kept:
 * they cost nothing), each also added to its metric when a meter is set. One
 * call per event updates both, so the two never disagree.
 */

import type { SessionStats } from "../telemetry/telemetry_options.ts";
import { type Telemetry, TELEMETRY_OFF } from "../telemetry/_telemetry.ts";
import { DuplexError } from "../errors.ts";

/** How a turn ended. */
export type TurnOutcome = "ok" | "error" | "aborted";
/** How a permission request ended. */
export type PermissionOutcome = "allow" | "deny" | "cancelled";

export class Stats {
  readonly #telemetry: Telemetry;
  readonly #turns = { ok: 0, error: 0, aborted: 0 };
  readonly #permissions = { allow: 0, deny: 0, cancelled: 0 };
  readonly #errors = new Map<string, number>();
  #laggedEvents = 0;
  #stderrLines = 0;

  /** @param telemetry Where the metrics go (none by default). */
  constructor(telemetry: Telemetry = TELEMETRY_OFF) {
    this.#telemetry = telemetry;
  }

  /** Counts a settled turn (`claude.turns` by outcome). */
  turn(outcome: TurnOutcome): void {
    this.#turns[outcome]++;
    const telemetry = this.#telemetry;
    if (telemetry.on) telemetry.count("claude.turns", 1, { "claude.turn.outcome": outcome });
  }

  /** Counts an error by its kind (`claude.errors` by `error.type`); returns the kind. */
  error(error: unknown): string {
    const kind = error instanceof DuplexError ? error.kind : "other";
    this.#errors.set(kind, (this.#errors.get(kind) ?? 0) + 1);
    const telemetry = this.#telemetry;
    if (telemetry.on) telemetry.count("claude.errors", 1, { "error.type": kind });
    return kind;
  }

  /** Counts a permission request that ended (`claude.permission.requests` by decision). */
  permission(outcome: PermissionOutcome): void {
    this.#permissions[outcome]++;
    const telemetry = this.#telemetry;
    if (telemetry.on) {
      telemetry.count("claude.permission.requests", 1, { "claude.permission.decision": outcome });
    }
  }

  /** Counts an event dropped for a slow subscriber (`claude.events.lagged`). */
  lagged(): void {
    this.#laggedEvents++;
    this.#telemetry.count("claude.events.lagged");
  }

  /** Counts a line the CLI wrote on stderr (`claude.stderr.lines`). */
  stderrLine(): void {
    this.#stderrLines++;
    this.#telemetry.count("claude.stderr.lines");
  }

  /** A copy, with the pending control requests counted now. */
  snapshot(pendingControlRequests: number): SessionStats {
    return {
      turns: { ...this.#turns },
      errors: Object.fromEntries(this.#errors),
      laggedEvents: this.#laggedEvents,
      permissions: { ...this.#permissions },
      pendingControlRequests,
      stderrLines: this.#stderrLines,
    };
  }
}
