/* Reading a transcript as JSON entries (bad lines skipped and reported), and
 * the two ways history writes one: an appended line, a new whole file. */

import { type DecodeDiagnostic, FrameDecoder } from "../../../src/codec/frame_decoder.ts";
import { explainFsError } from "./_paths.ts";
import type { HistoryOptions, SkippedLine } from "./history_options.ts";

/** One parsed transcript line. */
export type Entry = Readonly<Record<string, unknown>>;

/** A transcript's entries in file order, and how many lines were skipped. */
export interface Transcript {
  /** Every JSON object line, in file order. */
  readonly entries: readonly Entry[];
  /** Lines that were skipped (each reported to `onSkip`). */
  readonly skipped: number;
}

const CHUNK_BYTES = 65_536;

/** Reports a skipped line to `onSkip` and counts it. */
export class SkipCounter {
  /** Lines skipped so far. */
  count = 0;
  readonly #onSkip: HistoryOptions["onSkip"];
  readonly #file: string;

  constructor(file: string, onSkip: HistoryOptions["onSkip"]) {
    this.#file = file;
    this.#onSkip = onSkip;
  }

  /** Counts a line and tells `onSkip` about it. */
  skip(kind: SkippedLine["kind"], message: string, excerpt: string): void {
    this.count++;
    this.#onSkip?.({ file: this.#file, kind, message, excerpt: excerpt.slice(0, 200) });
  }

  /** Counts a line the decoder rejected (a repaired UTF-8 line is not skipped). */
  diagnostic(diagnostic: DecodeDiagnostic): void {
    if (diagnostic.kind === "invalid_utf8") return;
    this.skip(diagnostic.kind, diagnostic.message, diagnostic.excerpt);
  }
}

/**
 * Reads a file in 64 KiB chunks, handing each to `onChunk` (awaited) until
 * the end; the buffer is reused, so `onChunk` must not keep the chunk.
 *
 * @throws {DuplexError} `not_permitted` when the file may not be read.
 * @throws The signal's reason when it is aborted.
 */
export async function forEachChunk(
  file: string,
  options: HistoryOptions,
  action: string,
  onChunk: (chunk: Uint8Array) => void | Promise<void>,
): Promise<void> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(file, { read: true });
  } catch (error) {
    throw explainFsError(error, action, file, "read");
  }
  try {
    const buffer = new Uint8Array(CHUNK_BYTES);
    for (;;) {
      options.signal?.throwIfAborted();
      const read = await handle.read(buffer);
      if (read === null) break;
      await onChunk(buffer.subarray(0, read));
    }
  } finally {
    handle.close();
  }
}

/**
 * Reads a whole transcript. A line cut short at the end (the CLI may be
 * writing it) is skipped like any other bad line.
 *
 * @throws {DuplexError} `not_permitted` when the file may not be read.
 * @throws The signal's reason when it is aborted.
 */
export async function readTranscript(
  file: string,
  options: HistoryOptions,
  action: string,
): Promise<Transcript & { readonly counter: SkipCounter }> {
  options.signal?.throwIfAborted();
  const entries: Entry[] = [];
  const counter = new SkipCounter(file, options.onSkip);
  const decoder = new FrameDecoder({
    onFrame: (frame) => entries.push(frame),
    onDiagnostic: (diagnostic) => counter.diagnostic(diagnostic),
  });
  await forEachChunk(file, options, action, (chunk) => decoder.push(chunk));
  decoder.end();
  return { entries, skipped: counter.count, counter };
}

/**
 * Appends one JSON line to an existing transcript, on a line of its own even
 * when the file ends in a cut line.
 *
 * @throws {DuplexError} `not_permitted` when the file may not be written.
 */
export async function appendEntry(file: string, entry: Entry, action: string): Promise<void> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(file, { read: true, append: true });
  } catch (error) {
    throw explainFsError(error, action, file, "write");
  }
  try {
    const last = new Uint8Array(1);
    const size = await handle.seek(0, Deno.SeekMode.End);
    if (size > 0) {
      await handle.seek(size - 1, Deno.SeekMode.Start);
      await handle.read(last);
    }
    const newline = size > 0 && last[0] !== 0x0a ? "\n" : "";
    await writeAll(handle, new TextEncoder().encode(`${newline}${JSON.stringify(entry)}\n`));
  } finally {
    handle.close();
  }
}

async function writeAll(handle: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const n = await handle.write(bytes.subarray(written));
    if (n <= 0) throw new Deno.errors.WriteZero(`Cannot write: no progress after ${written} bytes`);
    written += n;
  }
}

/** Entries as JSONL text: one line each, every line ending in a newline. */
export function jsonlText(entries: readonly Entry[]): string {
  return entries.map((entry) => JSON.stringify(entry)).join("\n") + "\n";
}

/**
 * Writes a file whole: a temporary file first (mode 0600), renamed into
 * place, so that no reader ever sees half of it. Without `replace`, an
 * existing file is never replaced.
 *
 * @throws {Deno.errors.AlreadyExists} When the file exists and `replace` is false.
 */
export async function writeWholeFile(file: string, text: string, replace: boolean): Promise<void> {
  const temp = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, text, { createNew: true, mode: 0o600 });
    if (!replace) {
      try {
        await Deno.lstat(file);
        throw new Deno.errors.AlreadyExists(`${file} already exists`);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    await Deno.rename(temp, file);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/**
 * Writes a new transcript whole ({@linkcode writeWholeFile}); never
 * replaces an existing file.
 *
 * @throws {DuplexError} `not_permitted` when the folder may not be written.
 */
export async function writeTranscript(
  file: string,
  entries: readonly Entry[],
  action: string,
): Promise<void> {
  try {
    await writeWholeFile(file, jsonlText(entries), false);
  } catch (error) {
    throw explainFsError(error, action, file.slice(0, file.lastIndexOf("/")), "write");
  }
}
