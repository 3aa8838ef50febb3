/**
 * The relay's tap on a CLI's stdout when it mirrors to a store: it splits
 * the bytes into lines, hands each `transcript_mirror` line to the mirror
 * (and never forwards it: it is noise for the client), flushes the mirror
 * at each `result` line, and forwards every other byte unchanged.
 *
 * A mirror line is told by its start (the CLI writes it compact, `type`
 * first); a line is held only until its first bytes decide (a newline, or
 * {@linkcode DECIDE_BYTES}), other lines then stream through as they come,
 * so a long assistant line is not held whole. A mirror line is held whole
 * up to {@linkcode MAX_MIRROR_LINE_BYTES} (the session's line bound); a
 * longer one is dropped and reported. A result line is told by
 * `"type":"result"` anywhere in it (the CLI writes its result's `type`
 * among the last keys); one that merely holds that text, say in a tool's
 * input, only flushes the mirror once more.
 *
 * @module
 */

import { DEFAULT_MAX_LINE_BYTES } from "../../src/codec/frame_decoder.ts";
import { isRecord } from "../../src/_values.ts";
import { classifyFrame } from "../../src/protocol/guards.ts";
import type { TranscriptMirrorFrame } from "../../src/protocol/status_frames.ts";

/** Bytes of a line's start that decide what it is, when no newline comes sooner. */
export const DECIDE_BYTES = 4096;
/** The longest mirror line held: the session's default `maxLineBytes` (64 MiB). */
export const MAX_MIRROR_LINE_BYTES: number = DEFAULT_MAX_LINE_BYTES;

const NEWLINE = 10;
const MIRROR_START = /^\s*\{\s*"type"\s*:\s*"transcript_mirror"/;
/** `"type":"result"`, as bytes. */
const RESULT = new TextEncoder().encode('"type":"result"');
const QUOTE = 0x22;
const decoder = new TextDecoder();

/** Where the tap sends what it takes out. */
export interface TapSink {
  /** A parsed `transcript_mirror` frame. */
  mirror(frame: TranscriptMirrorFrame): void;
  /** A `result` line went by (its bytes are among those just returned). */
  result(): void;
  /** A mirror line that could not be taken (too long, or not JSON), with why. */
  dropped(reason: string): void;
}

/** What the current line is, as far as the tap knows. */
type Mode =
  /** Its start is still being read: held until it decides. */
  | "deciding"
  /** Not a mirror line: its bytes go through as they come. */
  | "pass"
  /** A mirror line: held whole. */
  | "mirror"
  /** A mirror line beyond the bound: its bytes go nowhere. */
  | "skip";

/** Splits stdout into lines and takes the mirror lines out (see the module doc). */
export class StdoutTap {
  readonly #sink: TapSink;
  readonly #maxMirrorBytes: number;
  #mode: Mode = "deciding";
  /** The held bytes of the current line (deciding, or a mirror line). */
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  /** Whether the current line (passing through) is a result. */
  #isResult = false;
  /** The current line's last bytes (fewer than the pattern), for a match across pieces. */
  #carry = new Uint8Array(0);

  /**
   * @param sink Takes the mirror frames and hears of results.
   * @param maxMirrorBytes The longest mirror line held.
   */
  constructor(sink: TapSink, maxMirrorBytes = MAX_MIRROR_LINE_BYTES) {
    this.#sink = sink;
    this.#maxMirrorBytes = maxMirrorBytes;
  }

  /**
   * Takes a chunk of stdout.
   *
   * @param chunk The bytes (kept by reference while held: a fresh buffer).
   * @returns The bytes to forward to the client, or `undefined` for none.
   */
  take(chunk: Uint8Array): Uint8Array | undefined {
    const out: Uint8Array[] = [];
    let results = 0;
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline + 1;
      const piece = chunk.subarray(start, end);
      start = end;
      if (this.#mode === "deciding") this.#decide(piece, newline >= 0, out);
      else if (this.#mode === "pass") {
        out.push(piece);
        this.#scan(piece);
      } else if (this.#mode === "mirror") this.#hold(piece);
      if (newline < 0) break;
      // The line ended here.
      if (this.#mode === "mirror") this.#mirrorLine();
      if (this.#mode === "pass" && this.#isResult) results++;
      this.#mode = "deciding";
      this.#isResult = false;
      this.#carry = new Uint8Array(0);
      this.#held = [];
      this.#heldBytes = 0;
    }
    for (let i = 0; i < results; i++) this.#sink.result();
    return join(out);
  }

  /**
   * The end of stdout: a last line without its newline is taken as a mirror
   * line when it is one, else forwarded as it is.
   *
   * @returns The bytes to forward, or `undefined`.
   */
  end(): Uint8Array | undefined {
    let forward: Uint8Array | undefined;
    if (this.#mode === "mirror") this.#mirrorLine();
    else if (this.#mode === "deciding" && this.#heldBytes > 0) {
      const held = join(this.#held)!;
      if (MIRROR_START.test(decoder.decode(held.subarray(0, DECIDE_BYTES)))) {
        this.#mirrorLine();
      } else forward = held;
    }
    this.#held = [];
    this.#heldBytes = 0;
    this.#mode = "deciding";
    return forward;
  }

  /* Holds a piece of a line still deciding, and decides once enough is there. */
  #decide(piece: Uint8Array, complete: boolean, out: Uint8Array[]): void {
    this.#held.push(piece);
    this.#heldBytes += piece.length;
    if (!complete && this.#heldBytes < DECIDE_BYTES) return;
    const head = decoder.decode(prefix(this.#held, DECIDE_BYTES));
    if (MIRROR_START.test(head)) {
      this.#mode = "mirror";
      this.#checkBound();
      return;
    }
    this.#mode = "pass";
    for (const held of this.#held) this.#scan(held);
    out.push(...this.#held);
    this.#held = [];
    this.#heldBytes = 0;
  }

  /* Looks for `"type":"result"` in a piece of a passing line (and across its pieces). */
  #scan(piece: Uint8Array): void {
    if (this.#isResult || piece.length === 0) return;
    const keep = RESULT.length - 1;
    // Across the boundary: the carried bytes and the piece's first ones.
    const boundary = this.#carry.length === 0
      ? undefined
      : concat(this.#carry, piece.subarray(0, keep));
    if ((boundary && holdsResult(boundary)) || holdsResult(piece)) {
      this.#isResult = true;
      return;
    }
    const tail = piece.length >= keep ? piece : boundary ?? piece;
    this.#carry = tail.slice(Math.max(0, tail.length - keep));
  }

  #hold(piece: Uint8Array): void {
    this.#held.push(piece);
    this.#heldBytes += piece.length;
    this.#checkBound();
  }

  #checkBound(): void {
    if (this.#heldBytes <= this.#maxMirrorBytes) return;
    this.#sink.dropped(
      `a transcript_mirror line longer than ${this.#maxMirrorBytes} bytes; the store lacks its ` +
        "entries until the transcript is imported again (importSessionToStore)",
    );
    this.#mode = "skip";
    this.#held = [];
    this.#heldBytes = 0;
  }

  #mirrorLine(): void {
    const text = decoder.decode(join(this.#held));
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.#sink.dropped("a transcript_mirror line that is not JSON");
      return;
    }
    // The core's guard: the same check a local session's frames get.
    const classified = isRecord(frame) ? classifyFrame(frame) : undefined;
    if (classified?.type === "transcript_mirror") this.#sink.mirror(classified);
    else this.#sink.dropped("a transcript_mirror line without filePath and entries");
  }
}

function holdsResult(bytes: Uint8Array): boolean {
  for (let at = bytes.indexOf(QUOTE); at >= 0; at = bytes.indexOf(QUOTE, at + 1)) {
    if (at + RESULT.length > bytes.length) return false;
    let i = 1;
    while (i < RESULT.length && bytes[at + i] === RESULT[i]) i++;
    if (i === RESULT.length) return true;
  }
  return false;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

/* The first `max` bytes of some pieces (the pieces themselves when the first is long enough). */
function prefix(pieces: readonly Uint8Array[], max: number): Uint8Array {
  const first = pieces[0];
  if (first === undefined) return new Uint8Array(0);
  if (pieces.length === 1 || first.length >= max) return first.subarray(0, max);
  return join(pieces)!.subarray(0, max);
}

/* One array of some pieces: the piece itself when there is one, else a copy. */
function join(pieces: readonly Uint8Array[]): Uint8Array | undefined {
  if (pieces.length === 0) return undefined;
  if (pieces.length === 1) return pieces[0]!.length === 0 ? undefined : pieces[0];
  // Adjacent views of one buffer are one view.
  const first = pieces[0]!;
  let contiguous = true;
  let end = first.byteOffset + first.length;
  for (let i = 1; i < pieces.length && contiguous; i++) {
    const piece = pieces[i]!;
    contiguous = piece.buffer === first.buffer && piece.byteOffset === end;
    end += piece.length;
  }
  if (contiguous) {
    return new Uint8Array(first.buffer, first.byteOffset, end - first.byteOffset);
  }
  let length = 0;
  for (const piece of pieces) length += piece.length;
  if (length === 0) return undefined;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    joined.set(piece, at);
    at += piece.length;
  }
  return joined;
}
