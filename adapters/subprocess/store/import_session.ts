/**
 * {@linkcode importSessionToStore}: copies a session the CLI wrote on this
 * machine into a `SessionStore`.
 *
 * @module
 */

import { isRecord, messageOf } from "../../../src/_values.ts";
import { FrameDecoder } from "../../../src/codec/frame_decoder.ts";
import { DuplexError } from "../../../src/errors.ts";
import { checkProjectKey } from "../../../src/store/_store_checks.ts";
import { projectKeyOf } from "../../../src/store/project_key.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import { checkSessionId, requireTranscript, resolvedDir } from "../history/_paths.ts";
import { forEachChunk, SkipCounter } from "../history/_transcript.ts";
import type { HistoryOptions } from "../history/history_options.ts";

/** Options of {@linkcode importSessionToStore}. */
export interface ImportSessionOptions extends HistoryOptions {
  /**
   * The key's project in the store.
   *
   * @default {`projectKeyOf(dir)` with `dir` (resolved), else the name of the project folder the transcript was found in}
   */
  readonly projectKey?: string;
  /**
   * Also import the session's subagent transcripts
   * (`<session>/subagents/**\/*.jsonl`, subpath `subagents/…`, with each
   * one's `.meta.json` as a last `agent_metadata` entry).
   *
   * @default {true}
   */
  readonly includeSubagents?: boolean;
  /**
   * The most entries per `store.append()` call (a batch is also cut at
   * 1 MiB of JSON).
   *
   * @default {500}
   */
  readonly batchSize?: number;
}

/** What {@linkcode importSessionToStore} copied. */
export interface ImportSessionResult {
  /** The key of the main transcript in the store. */
  readonly key: SessionKey;
  /** Entries read from the main transcript (the store may have had some). */
  readonly entries: number;
  /** The subpaths imported, for example `subagents/agent-a1`. */
  readonly subagents: readonly string[];
}

const BATCH_BYTES = 1_048_576;
const MAX_DEPTH = 8;

/** Reads a JSONL file in chunks and appends its entries in batches. */
async function importFile(
  file: string,
  key: SessionKey,
  store: SessionStore,
  batchSize: number,
  options: HistoryOptions,
  action: string,
): Promise<number> {
  const counter = new SkipCounter(file, options.onSkip);
  let batch: SessionStoreEntry[] = [];
  let bytes = 0;
  let total = 0;
  const ready: SessionStoreEntry[][] = [];
  const decoder = new FrameDecoder({
    onFrame: (frame) => {
      if (typeof frame.type !== "string") {
        counter.skip("invalid_entry", "Skipped an entry without a type", JSON.stringify(frame));
        return;
      }
      batch.push(frame as SessionStoreEntry);
      total++;
      bytes += JSON.stringify(frame).length;
      if (batch.length >= batchSize || bytes >= BATCH_BYTES) {
        ready.push(batch);
        batch = [];
        bytes = 0;
      }
    },
    onDiagnostic: (diagnostic) => counter.diagnostic(diagnostic),
  });
  await forEachChunk(file, options, action, async (chunk) => {
    decoder.push(chunk);
    for (const full of ready.splice(0)) await store.append(key, full);
  });
  decoder.end(); // a last line cut short (the CLI writing it) is skipped and reported
  for (const full of ready.splice(0)) await store.append(key, full);
  if (batch.length > 0) await store.append(key, batch);
  return total;
}

/** The `.jsonl` files under a folder (no links), relative paths without `.jsonl`. */
async function transcriptsUnder(root: string, prefix: string, depth = 0): Promise<string[]> {
  const found: string[] = [];
  if (depth > MAX_DEPTH) return found;
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(`${root}/${prefix}`));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return found;
    }
    throw error;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = `${prefix}/${entry.name}`;
    if (entry.isDirectory) found.push(...await transcriptsUnder(root, path, depth + 1));
    else if (entry.isFile && entry.name.endsWith(".jsonl")) found.push(path.slice(0, -6));
  }
  return found;
}

function checkBatchSize(value: unknown, action: string): number {
  if (value === undefined) return 500;
  if (typeof value !== "number") {
    throw new TypeError(`Cannot ${action}: batchSize must be a number`);
  }
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: batchSize must be a whole number of at least 1, got ${value}`,
    );
  }
  return value;
}

/**
 * Copies a local session into a store, as the official SDK's
 * `importSessionToStore` does: reads the CLI's transcript
 * (`<configDir>/projects/<folder>/<sessionId>.jsonl`) and appends its
 * entries in batches of `batchSize`, then (unless `includeSubagents` is
 * false) each subagent transcript under `<sessionId>/subagents/`, with its
 * `.meta.json` sidecar appended as a last `{ type: "agent_metadata", … }`
 * entry. Lines that are not JSON objects are skipped and reported to
 * `onSkip`. A store that dedups by uuid (the built-in ones do) makes a
 * repeated import add nothing but the entries without uuid.
 *
 * The project key is `projectKey`, else `projectKeyOf` of `dir` (resolved
 * as the CLI resolves it; the SDK's rule), else the name of the folder the
 * transcript was found in (the SDK takes the current directory's key then,
 * which names another project when the session ran elsewhere).
 *
 * Memory is bounded by a batch: the transcript is read in 64 KiB chunks.
 *
 * @param sessionId The session (a UUID).
 * @param store Where to copy it.
 * @param options `dir`, `configDir`, `projectKey`, `includeSubagents`, `batchSize`, `signal`, `onSkip`.
 * @returns The key, how many entries were read, the subpaths imported.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or
 * `batchSize` is below 1; `not_found` when no transcript has it; `not_permitted` when a file
 * may not be read. The store's own errors pass through unchanged.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example Copy a session into a directory store
 * ```ts ignore
 * import { DirectorySessionStore, importSessionToStore } from "@duplex/claude/history";
 *
 * const store = new DirectorySessionStore("/var/lib/claude-sessions");
 * const { key } = await importSessionToStore("5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f", store, {
 *   dir: Deno.cwd(),
 * });
 * console.log(`stored as ${key.projectKey}/${key.sessionId}`);
 * ```
 */
export async function importSessionToStore(
  sessionId: string,
  store: SessionStore,
  options: ImportSessionOptions = {},
): Promise<ImportSessionResult> {
  const action = "import the session into the store";
  const id = checkSessionId(sessionId, action);
  if (typeof store?.append !== "function") {
    throw new TypeError(`Cannot ${action}: store must be a SessionStore (it has no append method)`);
  }
  const batchSize = checkBatchSize(options.batchSize, action);
  if (options.projectKey !== undefined) checkProjectKey(options.projectKey, action);
  options.signal?.throwIfAborted();
  const found = await requireTranscript(id, options, action);
  const projectKey = options.projectKey ??
    (options.dir !== undefined
      ? projectKeyOf(await resolvedDir(options.dir))
      : found.projectDir.slice(found.projectDir.lastIndexOf("/") + 1));
  const key: SessionKey = { projectKey, sessionId: id };
  const entries = await importFile(found.file, key, store, batchSize, options, action);
  const subagents: string[] = [];
  if (options.includeSubagents === false) return { key, entries, subagents };
  const sessionDir = `${found.projectDir}/${id}`;
  for (const subpath of await transcriptsUnder(sessionDir, "subagents")) {
    options.signal?.throwIfAborted();
    const subKey = { ...key, subpath };
    await importFile(`${sessionDir}/${subpath}.jsonl`, subKey, store, batchSize, options, action);
    let meta: unknown;
    try {
      meta = JSON.parse(await Deno.readTextFile(`${sessionDir}/${subpath}.meta.json`));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        new SkipCounter(`${sessionDir}/${subpath}.meta.json`, options.onSkip)
          .skip("invalid_json", `Skipped an unreadable sidecar: ${messageOf(error)}`, "");
      }
    }
    if (isRecord(meta)) {
      await store.append(subKey, [{ ...meta, type: "agent_metadata" }]);
    }
    subagents.push(subpath);
  }
  return { key, entries, subagents };
}
