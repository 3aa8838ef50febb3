// This module is browser compatible.
/* The counters behind `session.stats`: plain integers, always kept (they cost nothing). */

import type { SessionStats } from "../telemetry/telemetry_options.ts";
import { DuplexError } from "../errors.ts";

export class Stats {
  turnsOk = 0;
  turnsError = 0;
  turnsAborted = 0;
  laggedEvents = 0;
  allowed = 0;
  denied = 0;
  cancelled = 0;
  stderrLines = 0;
  readonly #errors = new Map<string, number>();

  /** Counts an error by its kind. */
  error(error: unknown): string {
    const kind = error instanceof DuplexError ? error.kind : "other";
    this.#errors.set(kind, (this.#errors.get(kind) ?? 0) + 1);
    return kind;
  }

  /** A copy, with the pending control requests counted now. */
  snapshot(pendingControlRequests: number): SessionStats {
    return {
      turns: { ok: this.turnsOk, error: this.turnsError, aborted: this.turnsAborted },
      errors: Object.fromEntries(this.#errors),
      laggedEvents: this.laggedEvents,
      permissions: { allow: this.allowed, deny: this.denied, cancelled: this.cancelled },
      pendingControlRequests,
      stderrLines: this.stderrLines,
    };
  }
}
