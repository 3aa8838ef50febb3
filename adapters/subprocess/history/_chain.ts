/* The conversation a transcript holds: its entries form a tree through
 * `parentUuid` (a rewind or an edited prompt starts a branch), and the
 * conversation is the path from the root to the newest leaf, as the CLI and
 * the official SDK read it. Compaction boundaries re-link the messages they
 * kept (`compactMetadata.preservedMessages` / `preservedSegment`). */

import { isRecord } from "../../../src/_values.ts";
import type { Entry } from "./_transcript.ts";

/** The entry types that take part in the parent chain. */
const CHAIN_TYPES = new Set(["user", "assistant", "system", "attachment", "progress"]);

/** Tells whether an entry is a node of the parent chain (a typed entry with a uuid). */
export function isChainEntry(entry: Entry): boolean {
  return typeof entry.type === "string" && CHAIN_TYPES.has(entry.type) &&
    typeof entry.uuid === "string";
}

function uuidOf(entry: Entry): string {
  return entry.uuid as string;
}

function parentOf(entry: Entry): string | undefined {
  return typeof entry.parentUuid === "string" ? entry.parentUuid : undefined;
}

function isMessage(entry: Entry): boolean {
  return entry.type === "user" || entry.type === "assistant";
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === "string")
    ? value
    : undefined;
}

function reparent(nodes: Map<string, Entry>, uuid: string, parent: string): void {
  const node = nodes.get(uuid);
  if (node) nodes.set(uuid, { ...node, parentUuid: parent });
}

function moveChildren(nodes: Map<string, Entry>, from: string, except: string, to: string): void {
  for (const [uuid, node] of nodes) {
    if (uuid !== except && parentOf(node) === from) nodes.set(uuid, { ...node, parentUuid: to });
  }
}

/** Re-links the messages each compaction kept behind its summary (the anchor). */
function relinkCompactions(nodes: Map<string, Entry>): void {
  for (const node of [...nodes.values()]) {
    if (node.type !== "system" || node.subtype !== "compact_boundary") continue;
    const meta = asRecord(node.compactMetadata);
    const kept = asRecord(meta?.preservedMessages);
    const uuids = strings(kept?.uuids);
    const anchor = kept?.anchorUuid;
    if (
      uuids && uuids.length > 0 && typeof anchor === "string" && uuids.every((u) => nodes.has(u))
    ) {
      let previous = anchor;
      for (const uuid of uuids) {
        reparent(nodes, uuid, previous);
        previous = uuid;
      }
      moveChildren(nodes, anchor, uuids[0] as string, previous);
      continue;
    }
    const segment = asRecord(meta?.preservedSegment);
    const { headUuid: head, anchorUuid: segmentAnchor, tailUuid: tail } = segment ?? {};
    if (typeof head !== "string" || typeof segmentAnchor !== "string" || typeof tail !== "string") {
      continue;
    }
    reparent(nodes, head, segmentAnchor);
    moveChildren(nodes, segmentAnchor, head, tail);
  }
}

/* A subagent's transcript is all sidechain: there, sidechain entries are its line. */
function qualifies(entry: Entry, sidechain: boolean): boolean {
  const attachment = asRecord(entry.attachment);
  return (sidechain || entry.isSidechain !== true) && !entry.teamName &&
    entry.type !== "progress" &&
    !(entry.type === "attachment" && attachment?.type === "fork_briefing");
}

/** The newest user or assistant entry reached upwards from the newest leaf. */
function terminalMessage(
  nodes: Map<string, Entry>,
  position: Map<string, number>,
  sidechain: boolean,
): Entry | undefined {
  const referenced = new Set<string>();
  for (const node of nodes.values()) {
    const parent = parentOf(node);
    if (parent !== undefined && qualifies(node, sidechain)) referenced.add(parent);
  }
  const leaves = [...nodes.values()]
    .filter((node) => qualifies(node, sidechain) && !referenced.has(uuidOf(node)))
    .sort((a, b) => (position.get(uuidOf(b)) ?? -1) - (position.get(uuidOf(a)) ?? -1));
  const explored = new Set<string>();
  for (const leaf of leaves) {
    const path: string[] = [];
    for (let node: Entry | undefined = leaf; node; node = nodes.get(parentOf(node) ?? "")) {
      const uuid = uuidOf(node);
      if (explored.has(uuid) || path.includes(uuid)) break;
      if (isMessage(node)) return node;
      path.push(uuid);
    }
    for (const uuid of path) explored.add(uuid);
  }
  // No leaf leads to a message: take the newest main-line message, if any.
  return [...nodes.values()]
    .filter((node) => isMessage(node) && (sidechain || node.isSidechain !== true))
    .sort((a, b) => (position.get(uuidOf(b)) ?? -1) - (position.get(uuidOf(a)) ?? -1))[0];
}

/**
 * The conversation of a transcript: chain entries from the root to the
 * newest leaf's message, in order (system and attachment entries included;
 * the caller filters).
 *
 * @param entries Every entry of the transcript, in file order.
 * @param sidechain A subagent's transcript (its entries are all sidechain ones).
 * @returns The path, root first; empty when the transcript holds no message.
 */
export function mainChain(entries: readonly Entry[], sidechain = false): Entry[] {
  const nodes = new Map<string, Entry>();
  const position = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (!isChainEntry(entry)) return;
    nodes.set(uuidOf(entry), entry);
    position.set(uuidOf(entry), index);
  });
  relinkCompactions(nodes);
  const terminal = terminalMessage(nodes, position, sidechain);
  const path: Entry[] = [];
  const seen = new Set<string>();
  for (let node = terminal; node; node = nodes.get(parentOf(node) ?? "")) {
    if (seen.has(uuidOf(node))) break; // a cycle: stop at the first repeat
    seen.add(uuidOf(node));
    path.push(node);
  }
  return path.reverse();
}
