// This module is browser compatible.
/* What the session's parts report to: telemetry (spans, metrics) and the plain stats. */

import {
  NO_SPAN,
  type SpanHandle,
  type Telemetry,
  TELEMETRY_OFF,
} from "../telemetry/_telemetry.ts";
import { Stats } from "./_stats.ts";

export interface Observer {
  /** Spans and histograms. */
  readonly telemetry: Telemetry;
  /** The counters: `session.stats`, and their metrics. */
  readonly stats: Stats;
  /** The session's span: the parent of turns and of our control requests. */
  readonly session: SpanHandle;
  /** The span of the turn running now, else the session's: the parent of permissions, hooks, tools. */
  turn(): SpanHandle;
}

/** An observer that records nothing (for parts used on their own, as in unit tests). */
export function unobserved(): Observer {
  return { telemetry: TELEMETRY_OFF, stats: new Stats(), session: NO_SPAN, turn: () => NO_SPAN };
}
