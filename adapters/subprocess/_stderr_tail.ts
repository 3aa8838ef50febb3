/**
 * A bounded ring buffer of text lines, bounded both by line count and by
 * UTF-8 bytes (each line counted with one byte for its newline, so the
 * joined text never exceeds the byte bound). It keeps the newest lines:
 * pushing past a bound drops the oldest. Used for the stderr tail reported in `TransportExit.stderrTail` and
 * for the unread-lines queue behind `transport.stderr`.
 *
 * @module
 */

import { utf8Length } from "../../src/_utf8.ts";

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes (never inside a surrogate
 * pair), marking the cut.
 */
export function truncateToBytes(text: string, maxBytes: number): string {
  if (utf8Length(text) <= maxBytes) return text;
  const marker = "…(truncated)";
  const budget = Math.max(0, maxBytes - utf8Length(marker));
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const unit = text.charCodeAt(end);
    const pair = unit >= 0xd800 && unit <= 0xdbff && end + 1 < text.length;
    const size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > budget) break;
    bytes += size;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end) + marker;
}

/** A bounded first-in first-out buffer of lines that drops the oldest. */
export class StderrTail {
  readonly #maxBytes: number;
  readonly #maxLines: number;
  #lines: string[] = [];
  #sizes: number[] = [];
  #head = 0;
  #bytes = 0;
  #dropped = 0;

  /**
   * @param maxBytes The most UTF-8 bytes kept (a longer single line is cut).
   * @param maxLines The most lines kept.
   */
  constructor(maxBytes: number, maxLines: number) {
    this.#maxBytes = Math.max(1, Math.floor(maxBytes));
    this.#maxLines = Math.max(1, Math.floor(maxLines));
  }

  /** How many lines are held. */
  get length(): number {
    return this.#lines.length - this.#head;
  }

  /** How many UTF-8 bytes the held lines take, one newline each included. */
  get bytes(): number {
    return this.#bytes;
  }

  /** How many lines were dropped (oldest first) to stay within the bounds. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Adds a line (without its newline), dropping the oldest lines as needed. */
  push(line: string): void {
    let text = line;
    let size = utf8Length(text) + 1;
    if (size > this.#maxBytes) {
      text = truncateToBytes(text, this.#maxBytes - 1);
      size = utf8Length(text) + 1;
    }
    this.#lines.push(text);
    this.#sizes.push(size);
    this.#bytes += size;
    while (this.length > this.#maxLines || this.#bytes > this.#maxBytes) {
      this.#dropOldest();
      this.#dropped++;
    }
  }

  /** Removes and returns the oldest line, if any. */
  shift(): string | undefined {
    if (this.length === 0) return undefined;
    const line = this.#lines[this.#head];
    this.#dropOldest();
    return line;
  }

  /** Removes every line. */
  clear(): void {
    this.#lines = [];
    this.#sizes = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  /** The held lines, oldest first, joined with `"\n"`. */
  text(): string {
    return this.#lines.slice(this.#head).join("\n");
  }

  #dropOldest(): void {
    this.#bytes -= this.#sizes[this.#head] ?? 0;
    this.#head++;
    // Compact now and then so the arrays do not grow without bound.
    if (this.#head > 1024 && this.#head * 2 > this.#lines.length) {
      this.#lines = this.#lines.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
  }
}
