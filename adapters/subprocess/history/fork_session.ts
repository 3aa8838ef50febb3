/**
 * {@linkcode forkSession}: a new session holding a stored session's
 * conversation up to a chosen message, which `subprocess({ resume })`
 * continues from there.
 *
 * @module
 */

import { DuplexError } from "../../../src/errors.ts";
import type { SessionStoreEntry } from "../../../src/store/session_store.ts";
import { isRecord } from "../../../src/_values.ts";
import { isChainEntry } from "./_chain.ts";
import { cleanText } from "./_checks.ts";
import { checkSessionId, requireTranscript } from "./_paths.ts";
import { firstPrompt, lastString } from "./_summary.ts";
import { type Entry, readTranscript, writeTranscript } from "./_transcript.ts";
import { requireStored, storeOf } from "./_store_history.ts";
import type { HistoryOptions } from "./history_options.ts";

/** Options of {@linkcode forkSession}. */
export interface ForkSessionOptions extends HistoryOptions {
  /**
   * The last message the fork keeps (its `uuid`, from `getSessionMessages`
   * or from a live frame); the fork keeps every entry written before it.
   *
   * @default {undefined} (the whole session)
   */
  readonly upToMessageId?: string;
  /**
   * The fork's title.
   *
   * @default {the source's title (custom, AI or first prompt) + " (fork)"}
   */
  readonly title?: string;
}

/** What {@linkcode forkSession} made. */
export interface ForkSessionResult {
  /** The new session's id: `subprocess({ resume: sessionId })` continues it. */
  readonly sessionId: string;
}

/** Fields, besides `parentUuid`, that may hold the uuid of another entry. */
const LINKS = ["logicalParentUuid", "sourceToolAssistantUUID", "turnAttributionKey"] as const;

/** Copies `value` with each string found in `ids` replaced by its new id. */
function remapIds(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => remapIds(item, ids));
  return value;
}

/** The compaction data of a boundary, with the uuids it names remapped. */
function remapCompaction(
  meta: Record<string, unknown>,
  ids: ReadonlyMap<string, string>,
  dropKept: boolean,
): unknown {
  const copy: Record<string, unknown> = { ...meta };
  for (const key of ["preservedMessages", "preservedSegment"]) {
    const part = meta[key];
    if (!isRecord(part)) continue;
    if (dropKept) {
      delete copy[key];
      continue;
    }
    copy[key] = Object.fromEntries(
      Object.entries(part).map(([name, value]) => [name, remapIds(value, ids)]),
    );
  }
  if (dropKept) delete copy.postTokens;
  return copy;
}

/** The nearest ancestor that the fork keeps (progress entries are left out). */
function keptParent(entry: Entry, byUuid: ReadonlyMap<string, Entry>): string | null {
  const seen = new Set<string>();
  let parent = typeof entry.parentUuid === "string" ? entry.parentUuid : undefined;
  while (parent !== undefined && !seen.has(parent)) {
    seen.add(parent);
    const node = byUuid.get(parent);
    if (!node) return null;
    if (node.type !== "progress") return parent;
    parent = typeof node.parentUuid === "string" ? node.parentUuid : undefined;
  }
  return null;
}

/** The entries of the fork, in file order, from the source's chain entries. */
function forkEntries(
  nodes: readonly Entry[],
  source: string,
  target: string,
  upTo: string | undefined,
): Entry[] {
  const byUuid = new Map(nodes.map((node) => [node.uuid as string, node]));
  const ids = new Map(nodes.map((node) => [node.uuid as string, crypto.randomUUID()]));
  return nodes.filter((node) => node.type !== "progress").map((node) => {
    const copy: Record<string, unknown> = { ...node };
    const parent = keptParent(node, byUuid);
    copy.parentUuid = parent === null ? null : ids.get(parent) ?? null;
    for (const field of LINKS) {
      const old = node[field];
      if (typeof old !== "string") continue;
      copy[field] = ids.get(old) ?? (field === "logicalParentUuid" ? null : old);
    }
    if (isRecord(node.compactMetadata)) {
      const kept = node.compactMetadata.preservedMessages ?? node.compactMetadata.preservedSegment;
      const anchor = isRecord(kept) ? kept.anchorUuid : undefined;
      copy.compactMetadata = remapCompaction(node.compactMetadata, ids, anchor === upTo);
    }
    if (isRecord(node.attachment) && typeof node.attachment.source_uuid === "string") {
      copy.attachment = {
        ...node.attachment,
        source_uuid: remapIds(node.attachment.source_uuid, ids),
      };
    }
    copy.uuid = ids.get(node.uuid as string);
    copy.sessionId = target;
    copy.isSidechain = false;
    copy.forkedFrom = { sessionId: source, messageUuid: node.uuid };
    return copy;
  });
}

/**
 * Forks a session, as the official SDK does: copies its transcript entries
 * into a new session with fresh ids (the `parentUuid` links kept), up to and
 * including `upToMessageId`, and gives the fork a title. The source is not
 * changed. `subprocess({ resume: sessionId })` then continues the fork from
 * that message; the model sees nothing written after it.
 *
 * The fork holds the conversation entries (messages, attachments, system
 * entries) written before the message, each marked with `forkedFrom`;
 * progress entries, the source's tag and cost, and the files beside the
 * transcript (large tool outputs, file-history snapshots) are not copied.
 * Where the official SDK has special rules for a fork at a compaction
 * boundary itself, this one keeps what was written before the chosen entry;
 * a fork at a compaction summary drops the messages that compaction kept
 * behind it, as the SDK does.
 *
 * @param sessionId The session to fork (a UUID).
 * With `sessionStore`, the fork is appended to the store under the
 * source's project key (the SDK's rule), not written as a file.
 *
 * @param options `upToMessageId`, `title`, where to look (`dir`,
 * `configDir`, or `sessionStore` and `projectKey`), `signal`.
 * @returns The new session's id.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or the
 * session holds no message; `not_found` when no transcript has it or
 * `upToMessageId` is not one of its entries; `not_permitted` when the folder may not be written (the
 * message names the flag).
 * @throws {TypeError} When the id, `upToMessageId` or `title` is not a string.
 *
 * @example Ask the last question again on a branch, and continue there
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { forkSession, getSessionMessages } from "@duplex/claude/history";
 * import { subprocess } from "@duplex/claude/subprocess";
 *
 * const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * const messages = await getSessionMessages(id, { dir: Deno.cwd() });
 * const lastPrompt = messages.findLastIndex((m) => m.type === "user");
 * const before = messages[lastPrompt - 1]; // the answer before the last prompt
 * if (before) {
 *   const fork = await forkSession(id, { dir: Deno.cwd(), upToMessageId: before.uuid });
 *   await using session = await DuplexSession.start({
 *     transport: subprocess({ cwd: Deno.cwd(), resume: fork.sessionId }),
 *   });
 *   await session.send("The same question, asked another way.");
 * }
 * ```
 */
export async function forkSession(
  sessionId: string,
  options: ForkSessionOptions = {},
): Promise<ForkSessionResult> {
  const action = "fork the session";
  const id = checkSessionId(sessionId, action);
  const upTo = options.upToMessageId;
  if (upTo !== undefined && typeof upTo !== "string") {
    throw new TypeError(`Cannot ${action}: upToMessageId must be a string, got ${typeof upTo}`);
  }
  const title = options.title === undefined ? undefined : cleanText(options.title, "title", action);
  options.signal?.throwIfAborted();
  const stored = options.sessionStore === undefined
    ? undefined
    : await requireStored(id, options, action);
  const file = stored ? undefined : await requireTranscript(id, options, action);
  const entries = stored?.entries ?? (await readTranscript(file!.file, options, action)).entries;
  let nodes = entries.filter((entry) => isChainEntry(entry) && entry.isSidechain !== true);
  if (upTo !== undefined) {
    const index = nodes.findIndex((node) => node.uuid === upTo);
    if (index < 0) {
      throw new DuplexError(
        "not_found",
        `Cannot ${action}: session ${id} has no entry ${JSON.stringify(upTo.slice(0, 80))}`,
      );
    }
    nodes = nodes.slice(0, index + 1);
  }
  const target = crypto.randomUUID();
  const copied = forkEntries(nodes, id, target, upTo);
  if (!copied.some((entry) => entry.type === "user" || entry.type === "assistant")) {
    throw new DuplexError("invalid_argument", `Cannot ${action}: session ${id} has no messages`);
  }
  const sourceTitle = lastString(entries, "custom-title", "customTitle") ||
    lastString(entries, "ai-title", "aiTitle") || firstPrompt(entries);
  const customTitle = title ?? `${sourceTitle || "Forked session"} (fork)`;
  copied.push({ type: "custom-title", customTitle, sessionId: target });
  options.signal?.throwIfAborted();
  if (stored) {
    const key = { projectKey: stored.key.projectKey, sessionId: target };
    await storeOf(options, action).append(key, copied as SessionStoreEntry[]);
  } else {
    await writeTranscript(`${file!.projectDir}/${target}.jsonl`, copied, action);
  }
  return { sessionId: target };
}
