/* A session's archive mark, where the official SDK keeps it: the file
 * `<projectDir>/<sessionId>/archived.json` beside the transcript, holding
 * `{"archived":true|false,"at":"<ISO time>","by":"sdk"}` (at most 4096
 * bytes). A session marked archived reads as unarchived again once a
 * person's prompt newer than the mark is in its transcript (the SDK's
 * rule: "a prompt sent in the session later unarchives it"). */

import { isRecord } from "../../../src/_values.ts";
import { typedPrompt } from "../../../src/store/_typed_prompt.ts";
import { explainFsError, type TranscriptFile } from "./_paths.ts";
import type { Entry } from "./_transcript.ts";
import type { StoredSessionInfo } from "./stored_session_info.ts";

const MAX_MARK = 4096;
const ISO_WITH_OFFSET =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/;
/* Flags that make a user entry something other than a prompt a person typed. */
const NOT_TYPED = [
  "isCompactSummary",
  "isSidechain",
  "isVirtual",
  "isVisibleInTranscriptOnly",
  "isMeta",
  "textNotTyped",
  "handedOff",
  "queueSkipAttachments",
];
const TURN_ORIGINS = new Set(["human", "sdk", "unknown"]);

/** A session's archive mark. */
export interface ArchiveMark {
  readonly archived: boolean;
  /** When it was set, in milliseconds since the epoch. */
  readonly atMs: number;
}

/** The mark file of a transcript. */
export function markFile(transcript: Pick<TranscriptFile, "projectDir" | "sessionId">): string {
  return `${transcript.projectDir}/${transcript.sessionId}/archived.json`;
}

/**
 * Reads a session's mark; none when the file is missing, too long or not a
 * mark (as the SDK, which ignores such a file).
 */
export async function readMark(
  transcript: Pick<TranscriptFile, "projectDir" | "sessionId">,
): Promise<ArchiveMark | undefined> {
  let text: string;
  try {
    const bytes = await Deno.readFile(markFile(transcript));
    if (bytes.length > MAX_MARK) return undefined;
    text = new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
  let mark: unknown;
  try {
    mark = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(mark) || typeof mark.archived !== "boolean") return undefined;
  if (typeof mark.at !== "string" || !ISO_WITH_OFFSET.test(mark.at)) return undefined;
  return { archived: mark.archived, atMs: Date.parse(mark.at) };
}

function absentOrFalse(entry: Entry, fields: readonly string[]): boolean {
  return fields.every((field) => entry[field] === undefined || entry[field] === false);
}

/* The time of a prompt a person sent (a user entry or a queued command), else undefined. */
function promptTime(entry: Entry): number | undefined {
  if (typeof entry.timestamp !== "string") return undefined;
  let content: unknown;
  let origin: unknown;
  if (entry.type === "user") {
    if (!isRecord(entry.message) || !absentOrFalse(entry, NOT_TYPED)) return undefined;
    if (entry.promptSource !== undefined && typeof entry.promptSource !== "string") return;
    if (entry.turnOrigin !== undefined && !TURN_ORIGINS.has(entry.turnOrigin as string)) return;
    if (entry.toolUseResult !== undefined && entry.toolUseResult !== null) return undefined;
    for (const field of ["persist", "wakeupSource", "scheduledTaskId"]) {
      if (entry[field] !== undefined) return undefined;
    }
    content = entry.message.content;
    origin = entry.origin;
  } else if (entry.type === "attachment") {
    const attachment = entry.attachment;
    if (!absentOrFalse(entry, ["isSidechain"]) || !isRecord(attachment)) return undefined;
    if (attachment.type !== "queued_command" || !absentOrFalse(attachment, ["isMeta"])) return;
    if (
      attachment.commandMode !== undefined &&
      attachment.commandMode !== "prompt" && attachment.commandMode !== "bash"
    ) return undefined;
    content = attachment.prompt;
    origin = attachment.origin;
  } else return undefined;
  if (origin !== undefined && (!isRecord(origin) || typeof origin.kind !== "string")) return;
  if (isRecord(origin) && origin.kind !== "human") return undefined;
  const blocks: Record<string, unknown>[] = typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content) && content.every((b) => isRecord(b) && typeof b.type === "string")
    ? content
    : [];
  if (blocks.some((block) => block.type === "tool_result")) return undefined;
  const texts = blocks.map((b) => typeof b.text === "string" ? b.text.trimStart() : "");
  const typed = origin !== undefined
    ? texts.some((text) => text !== "") && !texts.some((t) => t.startsWith("<command-name>"))
    : typedPrompt({ type: "user", message: { content } }, { command: "" }) !== undefined ||
      texts.some((text) => text.startsWith("<command-message>"));
  const time = Date.parse(entry.timestamp);
  return (typed || blocks.some((b) => b.type === "image" || b.type === "document")) &&
      !Number.isNaN(time)
    ? time
    : undefined;
}

/**
 * Whether a session reads as archived: absent without a mark; the mark's
 * `false`; `true` unless a prompt newer than the mark was sent since.
 */
export function archivedState(
  mark: ArchiveMark | undefined,
  entries: readonly Entry[],
): boolean | undefined {
  if (!mark?.archived) return mark?.archived;
  return !entries.some((entry) => (promptTime(entry) ?? -Infinity) > mark.atMs);
}

/** Writes a mark (the folder 0700, the file 0600, replaced whole). */
export async function writeMark(
  transcript: TranscriptFile,
  archived: boolean,
  action: string,
): Promise<void> {
  const file = markFile(transcript);
  const folder = file.slice(0, file.lastIndexOf("/"));
  const text = JSON.stringify({ archived, at: new Date().toISOString(), by: "sdk" });
  const temporary = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(temporary, text, { mode: 0o600, createNew: true });
    await Deno.rename(temporary, file);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw explainFsError(error, action, folder, "write");
  }
}

/** A file's list entry with its `archived` state, when it has a mark. */
export async function withArchived(
  info: StoredSessionInfo | undefined,
  transcript: TranscriptFile,
  entries: readonly Entry[],
): Promise<StoredSessionInfo | undefined> {
  if (!info) return undefined;
  const archived = archivedState(await readMark(transcript), entries);
  return archived === undefined ? info : { ...info, archived };
}
