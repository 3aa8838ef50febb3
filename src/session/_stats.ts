// This module is browser compatible.
/*
 * The session's counters: plain integers behind `session.stats`, always kept
 * (they cost nothing). Their metrics are added by the session's telemetry
 * (`_session_telemetry.ts`), in the same call that counts here, so the two
 * never disagree.
 */

import type { SessionStats } from "../telemetry/telemetry_options.ts";
import { DuplexError } from "../errors.ts";

/** How a turn ended. */
export type TurnOutcome = "ok" | "error" | "aborted";
/** How a permission request ended. */
export type PermissionOutcome = "allow" | "deny" | "cancelled";

export class Stats {
  readonly #turns = { ok: 0, error: 0, aborted: 0 };
  readonly #permissions = { allow: 0, deny: 0, cancelled: 0 };
  readonly #errors = new Map<string, number>();
  #laggedEvents = 0;
  #stderrLines = 0;

  /** Counts a settled turn. */
  turn(outcome: TurnOutcome): void {
    this.#turns[outcome]++;
  }

  /** Counts an error by its kind (the DuplexError kind, or `other`); returns the kind. */
  error(error: unknown): string {
    const kind = error instanceof DuplexError ? error.kind : "other";
    this.#errors.set(kind, (this.#errors.get(kind) ?? 0) + 1);
    return kind;
  }

  /** Counts a permission request that ended. */
  permission(outcome: PermissionOutcome): void {
    this.#permissions[outcome]++;
  }

  /** Counts an event dropped for a slow subscriber. */
  lagged(): void {
    this.#laggedEvents++;
  }

  /** Counts a line the CLI wrote on stderr. */
  stderrLine(): void {
    this.#stderrLines++;
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
