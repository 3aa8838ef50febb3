// This module is browser compatible.
/*
 * The abort ladder of a turn the caller gave up on: interrupt it, then wait
 * for its result. If the CLI acknowledges the interrupt but sends no result
 * within the grace, the turn is given up (the session stays usable). If it
 * does not even acknowledge the interrupt, it is unresponsive: with
 * `onUnresponsive: "close"` (the default) the session is closed. Each step is
 * reported as a `diagnostic` event.
 */

import { sleep } from "../_deadline.ts";
import { messageOf } from "../_values.ts";
import type { DiagnosticEvent } from "./events.ts";

/** What the ladder needs from its session. */
export interface LadderHost {
  /** Sends `interrupt` to the CLI; resolves once the CLI acknowledged it. */
  interrupt(timeoutMs: number): Promise<unknown>;
  /** Reports a step of the ladder. */
  publish(event: DiagnosticEvent): void;
  /** True while the session accepts work. */
  alive(): boolean;
  /** Closes the session (its CLI did not acknowledge an interrupt). */
  close(): void;
}

/** The ladder's settings. */
export interface LadderOptions {
  /** A checked duration: how long an aborted turn waits for its result. */
  readonly graceMs: number;
  readonly onUnresponsive: "close" | "keep";
}

export class AbortLadder {
  readonly #host: LadderHost;
  readonly #options: LadderOptions;

  constructor(host: LadderHost, options: LadderOptions) {
    this.#host = host;
    this.#options = options;
  }

  /**
   * Interrupts the running turn and waits for its end.
   *
   * @param reason Why the caller gave up.
   * @param settled Aborts once the turn settled (its result came): the wait ends.
   * @param giveUp Settles the turn with `reason` when the grace passed.
   */
  climb(reason: unknown, settled: AbortSignal, giveUp: () => void): void {
    const { graceMs } = this.#options;
    const why = messageOf(reason);
    this.#diagnose("turn_interrupted", `Interrupting the turn (${why})`);
    let acknowledged = false;
    this.#host.interrupt(graceMs).then(() => acknowledged = true, () => {});
    sleep(graceMs, { signal: settled }).then(() => {
      giveUp();
      if (acknowledged || !this.#host.alive()) {
        this.#diagnose(
          "turn_abandoned",
          `The CLI acknowledged the interrupt but sent no result within ${graceMs} ms; ` +
            `the turn was given up`,
        );
      } else if (this.#options.onUnresponsive === "close") {
        this.#diagnose(
          "cli_unresponsive",
          `The CLI did not acknowledge an interrupt within ${graceMs} ms; closing the session`,
        );
        this.#host.close();
      } else {
        this.#diagnose(
          "cli_unresponsive",
          `The CLI did not acknowledge an interrupt within ${graceMs} ms; the session is kept ` +
            `(onUnresponsive: "keep")`,
        );
      }
    }, () => {/* settled before the grace ended */});
  }

  #diagnose(kind: DiagnosticEvent["kind"], message: string): void {
    this.#host.publish({ type: "diagnostic", kind, message });
  }
}
