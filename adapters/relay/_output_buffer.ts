/**
 * The bounded replay buffer of a relay session: the output frames (stdout,
 * stderr lines, the exit) the client has not acknowledged yet.
 *
 * @module
 */

/** One output frame, ready to send again. */
export interface OutputEntry {
  /** Its output sequence number. */
  readonly seq: number;
  /** A binary stdout frame, or the JSON text of an `err` or `exit` message. */
  readonly frame: Uint8Array<ArrayBuffer> | string;
}

/**
 * Unacknowledged output, in sequence order, bounded in bytes. When a new
 * entry makes it exceed its bound, the oldest entries are dropped (the
 * newest is always kept) and the highest dropped sequence is remembered, so
 * that a resume that needs one of them can be refused.
 */
export class OutputBuffer {
  readonly #limit: number;
  #entries: OutputEntry[] = [];
  #head = 0;
  #bytes = 0;
  #removedThrough = 0;

  /** @param limit The most bytes kept (the newest entry is kept even when larger). */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Bytes held (binary frames by length, texts by UTF-16 length). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries held. */
  get length(): number {
    return this.#entries.length - this.#head;
  }

  /**
   * Appends an entry and drops the oldest ones beyond the bound.
   *
   * @param entry The entry; its `seq` is greater than every held entry's.
   */
  push(entry: OutputEntry): void {
    this.#entries.push(entry);
    this.#bytes += sizeOf(entry);
    while (this.#bytes > this.#limit && this.length > 1) this.#shift();
    this.#compact();
  }

  /**
   * Drops the entries up to `seq` (the client has them).
   *
   * @param seq The highest sequence number acknowledged.
   */
  ack(seq: number): void {
    while (this.length > 0 && this.#entries[this.#head]!.seq <= seq) this.#shift();
    if (seq > this.#removedThrough) this.#removedThrough = seq;
    this.#compact();
  }

  /** The highest sequence number no longer held (acknowledged or dropped). */
  get removedThrough(): number {
    return this.#removedThrough;
  }

  /**
   * Tells whether every entry after `after` is still held.
   *
   * @param after The last sequence number the client has.
   * @returns False when an entry the client lacks was dropped.
   */
  canReplayAfter(after: number): boolean {
    return after >= this.#removedThrough;
  }

  /**
   * The held entries after a sequence number, oldest first.
   *
   * @param after The last sequence number the client has.
   * @returns A new array.
   */
  entriesAfter(after: number): OutputEntry[] {
    const out: OutputEntry[] = [];
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.seq > after) out.push(entry);
    }
    return out;
  }

  /** Drops everything (the session is gone). */
  clear(): void {
    this.#entries = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  #shift(): void {
    const entry = this.#entries[this.#head]!;
    this.#head++;
    this.#bytes -= sizeOf(entry);
    if (entry.seq > this.#removedThrough) this.#removedThrough = entry.seq;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

function sizeOf(entry: OutputEntry): number {
  return typeof entry.frame === "string" ? entry.frame.length : entry.frame.byteLength;
}
