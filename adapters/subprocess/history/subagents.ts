/**
 * {@linkcode listSubagents} and {@linkcode getSubagentMessages}: the
 * subagents a session ran (the Task tool) and their conversations, in the
 * CLI's files or in a store.
 *
 * @example A session's subagent, as the CLI mirrors it into a store
 * ```ts
 * import { InMemorySessionStore } from "@duplex/claude";
 * import { getSubagentMessages, listSubagents } from "@duplex/claude/history";
 * import assert from "node:assert/strict";
 *
 * const store = new InMemorySessionStore();
 * const key = { projectKey: "-home-me-app", sessionId: "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f" };
 * await store.append(key, [{ type: "user", uuid: "u1", message: { content: "Delegate it" } }]);
 * await store.append({ ...key, subpath: "subagents/agent-a1" }, [
 *   { type: "agent_metadata", agentType: "general-purpose", toolUseId: "toolu_1" },
 *   { type: "user", uuid: "s1", parentUuid: null, isSidechain: true, message: { content: "Do it" } },
 *   {
 *     type: "assistant", uuid: "s2", parentUuid: "s1", isSidechain: true,
 *     message: { role: "assistant", content: [{ type: "text", text: "Done" }] },
 *   },
 * ]);
 * const where = { sessionStore: store, projectKey: key.projectKey };
 * assert.deepEqual(await listSubagents(key.sessionId, where), ["a1"]);
 * const messages = await getSubagentMessages(key.sessionId, "a1", where);
 * assert.deepEqual(messages.map((m) => [m.type, m.parent_tool_use_id]), [
 *   ["user", "toolu_1"],
 *   ["assistant", "toolu_1"],
 * ]);
 * ```
 *
 * @module
 */

import { DuplexError } from "../../../src/errors.ts";
import { isRecord } from "../../../src/_values.ts";
import type { SessionStore } from "../../../src/store/session_store.ts";
import { mainChain } from "./_chain.ts";
import { pageBound } from "./_checks.ts";
import { checkSessionId, explainFsError, requireTranscript } from "./_paths.ts";
import { projectKeyFor, requireStored, storeOf } from "./_store_history.ts";
import { type Entry, readTranscript, SkipCounter } from "./_transcript.ts";
import type { HistoryOptions } from "./history_options.ts";
import { type MessageContext, type SessionMessage, toMessage } from "./session_messages.ts";

/** Options of {@linkcode listSubagents}. */
export type ListSubagentsOptions = HistoryOptions;

/** Options of {@linkcode getSubagentMessages}. */
export interface GetSubagentMessagesOptions extends HistoryOptions {
  /**
   * The most messages to return.
   *
   * @default {Infinity}
   */
  readonly limit?: number;
  /**
   * How many messages to skip from the start.
   *
   * @default {0}
   */
  readonly offset?: number;
}

/* An agent id names a file: letters, digits, `_` and `-` only. */
const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/;
/* What the SDK takes from a subagent's metadata. */
const TOOL_USE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const PARENT_AGENT_ID = /^[\w-]{1,128}$/;
const AGENT_FILE = /^agent-([A-Za-z0-9_-]{1,128})\.jsonl$/;

function checkAgentId(agentId: unknown, action: string): string {
  if (typeof agentId !== "string") {
    throw new TypeError(`Cannot ${action}: the agent id must be a string, got ${typeof agentId}`);
  }
  if (!AGENT_ID.test(agentId)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: the agent id must be 1 to 128 letters, digits, _ or - (like ` +
        `a99638ff4ee2c0649), got ${JSON.stringify(agentId.slice(0, 80))}`,
    );
  }
  return agentId;
}

/** A subagent transcript of the CLI's files. */
interface AgentFile {
  readonly agentId: string;
  readonly file: string;
}

/* The `agent-<id>.jsonl` files under a session's `subagents/` folder, nested ones too (no links). */
async function agentFiles(dir: string, action: string): Promise<AgentFile[]> {
  const found: AgentFile[] = [];
  const walk = async (folder: string): Promise<void> => {
    let listing: Deno.DirEntry[];
    try {
      listing = await Array.fromAsync(Deno.readDir(folder));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        return;
      }
      throw explainFsError(error, action, folder, "read");
    }
    for (const entry of listing.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const agentId = AGENT_FILE.exec(entry.name)?.[1];
      if (entry.isFile && agentId !== undefined) {
        found.push({ agentId, file: `${folder}/${entry.name}` });
      } else if (entry.isDirectory) await walk(`${folder}/${entry.name}`);
    }
  };
  await walk(dir);
  return found;
}

async function sessionAgentFiles(
  id: string,
  options: HistoryOptions,
  action: string,
): Promise<AgentFile[]> {
  const transcript = await requireTranscript(id, options, action);
  return await agentFiles(`${transcript.file.slice(0, -".jsonl".length)}/subagents`, action);
}

/* The store's `listSubkeys`, required. */
function subkeysOf(store: SessionStore, action: string): NonNullable<SessionStore["listSubkeys"]> {
  if (typeof store.listSubkeys !== "function") {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: the session store has no listSubkeys method`,
    );
  }
  return store.listSubkeys.bind(store);
}

/* A session's subagent subkeys (`subagents/…/agent-<id>`), by agent id; the session must exist. */
async function storedAgents(
  id: string,
  options: HistoryOptions,
  action: string,
): Promise<Map<string, string>> {
  const store = storeOf(options, action);
  const listSubkeys = subkeysOf(store, action);
  const projectKey = await projectKeyFor(options, action);
  const agents = new Map<string, string>();
  for (const subpath of (await listSubkeys({ projectKey, sessionId: id })).slice().sort()) {
    if (!subpath.startsWith("subagents/")) continue;
    const last = subpath.slice(subpath.lastIndexOf("/") + 1);
    const agentId = last.startsWith("agent-") ? last.slice("agent-".length) : "";
    if (AGENT_ID.test(agentId) && !agents.has(agentId)) agents.set(agentId, subpath);
  }
  if (agents.size === 0) await requireStored(id, options, action); // not_found for no session
  options.signal?.throwIfAborted();
  return agents;
}

/**
 * Lists the subagents a session ran (each Task tool call that started one),
 * by agent id: the files
 * `<configDir>/projects/<folder>/<sessionId>/subagents/agent-<agentId>.jsonl`
 * (nested folders too), or with `sessionStore` the session's subkeys
 * `subagents/…/agent-<agentId>` (the store's `listSubkeys`), as the official
 * SDK lists them.
 *
 * Unlike the SDK, which returns an empty list for an unknown session, an
 * unknown session throws (`not_found`); a session without subagents gives
 * an empty list. Ids are sorted (by their file's path), so both ways give
 * one order.
 *
 * @param sessionId The session id (a UUID).
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`), `signal`.
 * @returns The agent ids.
 * @throws {DuplexError} `invalid_argument` when the id is not a UUID or the
 * store has no `listSubkeys`; `not_found` when no transcript has the
 * session; `not_permitted` when a folder may not be read.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example A session's subagents and their first words
 * ```ts ignore
 * import { getSubagentMessages, listSubagents } from "@duplex/claude/history";
 *
 * const id = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * for (const agentId of await listSubagents(id, { dir: Deno.cwd() })) {
 *   const [first] = await getSubagentMessages(id, agentId, { dir: Deno.cwd(), limit: 1 });
 *   console.log(agentId, first?.message.content);
 * }
 * ```
 */
export async function listSubagents(
  sessionId: string,
  options: ListSubagentsOptions = {},
): Promise<string[]> {
  const action = "list the session's subagents";
  const id = checkSessionId(sessionId, action);
  options.signal?.throwIfAborted();
  if (options.sessionStore !== undefined) {
    return [...(await storedAgents(id, options, action)).keys()];
  }
  const ids = (await sessionAgentFiles(id, options, action)).map((agent) => agent.agentId);
  return [...new Set(ids)];
}

/** Who ran a subagent. */
type Subagent = NonNullable<MessageContext["subagent"]>;

/* The Task call and the parent agent a subagent's metadata names (the SDK's checks). */
function agentContext(meta: unknown): Subagent {
  const record = isRecord(meta) ? meta : {};
  const toolUseId = typeof record.toolUseId === "string" && TOOL_USE_ID.test(record.toolUseId)
    ? record.toolUseId
    : null;
  const parentAgentId =
    typeof record.parentAgentId === "string" && PARENT_AGENT_ID.test(record.parentAgentId)
      ? record.parentAgentId
      : null;
  return { toolUseId, parentAgentId };
}

async function readMeta(file: string): Promise<unknown> {
  try {
    return JSON.parse(await Deno.readTextFile(file.replace(/\.jsonl$/, ".meta.json")));
  } catch {
    return undefined; // no metadata, or not JSON: the messages name no Task call
  }
}

/**
 * Reads a subagent's conversation: the path through its transcript's
 * `parentUuid` links from its prompt to its newest message, as
 * {@linkcode getSessionMessages} reads a session's. Each message's
 * `parent_tool_use_id` is the Task tool call that ran the subagent and
 * `parent_agent_id` the subagent that spawned it (or `null`), from the
 * subagent's metadata (the `.meta.json` beside its file, or the
 * `agent_metadata` entry the CLI mirrors into a store).
 *
 * Unlike the official SDK, which returns an empty list, an unknown session
 * or subagent throws (`not_found`).
 *
 * @param sessionId The session id (a UUID).
 * @param agentId The subagent's id, as {@linkcode listSubagents} lists it.
 * @param options Where to look (`dir`, `configDir`, or `sessionStore` and
 * `projectKey`), the slice (`limit`, `offset`), `signal`, `onSkip`.
 * @returns The messages, oldest first.
 * @throws {DuplexError} `invalid_argument` when an id is malformed, `limit`
 * / `offset` is negative or fractional, or the store has no `listSubkeys`;
 * `not_found` when the session or its subagent is unknown;
 * `not_permitted` when a file may not be read.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example What a subagent answered
 * ```ts ignore
 * import { getSubagentMessages } from "@duplex/claude/history";
 *
 * const messages = await getSubagentMessages(
 *   "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f",
 *   "a99638ff4ee2c0649",
 *   { dir: Deno.cwd() },
 * );
 * console.log(messages.at(-1)?.message);
 * ```
 */
export async function getSubagentMessages(
  sessionId: string,
  agentId: string,
  options: GetSubagentMessagesOptions = {},
): Promise<SessionMessage[]> {
  const action = "read the subagent's messages";
  const id = checkSessionId(sessionId, action);
  const agent = checkAgentId(agentId, action);
  const limit = pageBound("limit", options.limit, Infinity, action);
  const offset = pageBound("offset", options.offset, 0, action);
  options.signal?.throwIfAborted();
  const missing = (where: string) =>
    new DuplexError(
      "not_found",
      `Cannot ${action}: session ${id} has no subagent ${agent} ${where}`,
    );
  let entries: readonly Entry[];
  let counter: SkipCounter;
  let subagent: Subagent;
  if (options.sessionStore !== undefined) {
    const subpath = (await storedAgents(id, options, action)).get(agent);
    if (subpath === undefined) throw missing("in the session store");
    const key = { projectKey: await projectKeyFor(options, action), sessionId: id, subpath };
    const stored = (await storeOf(options, action).load(key)) ?? [];
    options.signal?.throwIfAborted();
    subagent = agentContext(stored.findLast((entry) => entry.type === "agent_metadata"));
    entries = stored.filter((entry) => entry.type !== "agent_metadata");
    counter = new SkipCounter("", options.onSkip);
  } else {
    const file = (await sessionAgentFiles(id, options, action)).find((a) => a.agentId === agent);
    if (file === undefined) throw missing("in its subagents folder");
    ({ entries, counter } = await readTranscript(file.file, options, action));
    subagent = agentContext(await readMeta(file.file));
  }
  const context = { system: false, subagent };
  const chain = mainChain(entries, true);
  const messages = chain.flatMap((entry) => toMessage(entry, context, counter) ?? []);
  return messages.slice(offset, limit === Infinity ? undefined : offset + limit);
}
