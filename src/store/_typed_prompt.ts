// This module is browser compatible.
/* The prompt a person typed in a transcript's user entry, as the official
 * SDK picks a session's first prompt (its `foldSessionSummary` and the
 * archive check of `listSessions` use it): pasted sections unfolded, slash
 * commands and text the CLI wrote left out, at most 200 characters. */

import type { SessionStoreEntry } from "./session_store.ts";

const MAX_PROMPT = 200;
/* Text the CLI wrote, not a person: a leading tag, an interrupt marker. */
const MACHINE = /^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])/;
const COMMAND = /<command-name>(.*?)<\/command-name>/;
const BASH_INPUT = /<bash-input>([\s\S]*?)<\/bash-input>/;
const PASTED_OPEN = '<pasted_content id="';

function isPastedId(id: string): boolean {
  return /^[0-9a-f]{4}$/.test(id);
}

/**
 * A text with its pasted sections (`<pasted_content id="abcd">\n…\n</pasted_content id="abcd">`)
 * replaced by their bodies, as the CLI shows a prompt.
 */
function unpasted(text: string): string {
  const parts: string[] = [];
  let start = 0;
  let from = 0;
  let blocks = 0;
  for (;;) {
    const open = text.indexOf(PASTED_OPEN, from);
    if (open === -1) break;
    const idAt = open + PASTED_OPEN.length;
    const id = text.slice(idAt, idAt + 4);
    if (!isPastedId(id) || !text.startsWith('">\n', idAt + 4)) {
      from = idAt;
      continue;
    }
    const bodyAt = idAt + 7;
    const close = `</pasted_content id="${id}">`;
    const closeAt = text.indexOf(`\n${close}`, bodyAt - 1) + 1;
    if (closeAt === 0) break;
    let before = open;
    for (let i = 0; i < 2 && before > start && text[before - 1] === "\n"; i++) before--;
    if (before > start) parts.push(text.slice(start, before));
    start = closeAt + close.length;
    for (let i = 0; i < 2 && text[start] === "\n"; i++) start++;
    parts.push(text.slice(bodyAt, closeAt - 1));
    blocks++;
    from = start;
  }
  if (blocks === 0) return text;
  if (start < text.length) parts.push(text.slice(start));
  return parts.join("");
}

/* The first 200 UTF-16 units, not splitting a surrogate pair. */
function cut(text: string): string {
  const head = text.slice(0, MAX_PROMPT);
  const last = head.charCodeAt(MAX_PROMPT - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/**
 * The prompt a person typed in a user entry, as the SDK picks a session's
 * first prompt; a slash command's name goes to `fallback.command` instead.
 */
export function typedPrompt(
  entry: SessionStoreEntry,
  fallback: { command: string },
): string | undefined {
  if (entry.type !== "user" || entry.isMeta === true || entry.isCompactSummary === true) return;
  const message = entry.message as { content?: unknown } | null | undefined;
  if (!message) return;
  const content = message.content;
  const texts: string[] = [];
  if (typeof content === "string") texts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "tool_result") return;
      if (block.type === "text" && typeof block.text === "string") texts.push(block.text);
    }
  }
  for (const text of texts) {
    let flat = unpasted(text).replaceAll("\n", " ").trim();
    if (!flat) continue;
    const command = COMMAND.exec(flat)?.[1];
    if (command !== undefined) {
      if (!fallback.command) fallback.command = command;
      continue;
    }
    const bash = BASH_INPUT.exec(flat)?.[1];
    if (bash !== undefined) return `! ${bash.trim()}`;
    if (MACHINE.test(flat)) continue;
    if (flat.length > MAX_PROMPT) flat = `${cut(flat).trim()}…`;
    return flat;
  }
  return undefined;
}
