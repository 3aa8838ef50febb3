// This module is browser compatible.
/* The input lines the relay has not acknowledged yet: their writes settle on its acknowledgement. */

/** One written line, waiting for the relay to apply it. */
export interface PendingInput {
  /** Its input sequence number (from 1). */
  readonly seq: number;
  /** The JSON text. */
  readonly line: string;
}

interface Entry extends PendingInput {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Numbers input lines and holds them until the relay acknowledges them. */
export class UnackedInput {
  #last = 0;
  #entries: Entry[] = [];

  /**
   * Numbers a line and holds it.
   *
   * @param line The JSON text.
   * @returns The entry to send, and the promise of its write (settled by the relay's acknowledgement).
   */
  add(line: string): { readonly entry: PendingInput; readonly written: Promise<void> } {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const entry = { seq: ++this.#last, line, resolve, reject };
    this.#entries.push(entry);
    return { entry, written: promise };
  }

  /**
   * Settles the writes of every line up to `seq` (the relay applied them).
   *
   * @param seq The highest input sequence number the relay applied.
   */
  acknowledge(seq: number): void {
    let applied = 0;
    while (applied < this.#entries.length && this.#entries[applied]!.seq <= seq) applied++;
    for (const entry of this.#entries.splice(0, applied)) entry.resolve();
  }

  /** The highest input sequence number the relay acknowledged (0 before any). */
  get acknowledged(): number {
    const first = this.#entries[0];
    return first === undefined ? this.#last : first.seq - 1;
  }

  /** The lines still waiting, oldest first (to send again after a resume). */
  pending(): readonly PendingInput[] {
    return this.#entries;
  }

  /**
   * Rejects every waiting write (the transport ended).
   *
   * @param error What they reject with.
   */
  rejectAll(error: unknown): void {
    for (const entry of this.#entries.splice(0)) entry.reject(error);
  }
}
