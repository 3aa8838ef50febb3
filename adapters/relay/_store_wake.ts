/**
 * Resuming, from the shared session store, a conversation another relay
 * started: the record is loaded, its owner checked (timing-safe; another
 * owner's and an unknown token look alike), its spawn request checked again
 * against the asking credential's policy, and the options of
 * `claude --resume` made (the subprocess adapter materialises the stored
 * transcript for the new process); before the takeover, the stored
 * transcript checked (`assertStored`) and the lines the CLI before took
 * after the client's last result read from it (`takenAfter`).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, deadline, sleep } from "../../src/_deadline.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { projectKeyOf } from "../../src/store/project_key.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { type Credential, ownedBy } from "./_access.ts";
import { Refusal } from "./_policy.ts";
import { lastRecord, lastWritten, recordKey, sha256 } from "./_relay_record.ts";
import type { Wake } from "./_relay_session_types.ts";
import type { Resent } from "./_relay_store.ts";
import type { ResumePoint } from "./_connection_host.ts";
import { wakeOptions, workspaceFolder } from "./_wake_options.ts";

/** Where the relay's store and spawn settings are (the relay's `Config`). */
export interface WakeSettings {
  readonly sessionStore: SessionStore | undefined;
  readonly projectKey: string | undefined;
  /** The bound of loading the record. */
  readonly storeTimeoutMs: number;
  readonly cli: SubprocessOptions;
  readonly workspace: string;
}

/**
 * Loads a session token's record and prepares its resume.
 *
 * @param token The session token the client resumes.
 * @param from `after`: the last output sequence number the client has (the
 *   new session's output numbering continues after it: this relay has none
 *   of the old one's output); `applied`: the highest input the old relay
 *   acknowledged to the client, when it says; `answered`: the user line the
 *   last result the client read answers, when it says (the wake's `answered`).
 * @param credential The asking credential.
 * @param settings The store and spawn settings.
 * @returns The resume (the token and the input numbering continued, no output, the stored
 *   transcript to tell re-sent lines by), or `undefined` for an unknown token, another
 *   owner's, or an ended one (and without a store).
 * @throws {Refusal} `busy` (a client tries again, here or on another relay) when the store
 *   does not load the record within `loadTimeoutMs`, or its record holds less input than the
 *   client was acknowledged (the old relay acknowledged input after its record's bound passed,
 *   and may still be writing it: waking from it would lose that input, and the client's next
 *   line would not follow);
 *   `not_permitted` when the credential's policy no longer allows the spawn request or its
 *   folder (see `wakeOptions`, which a hibernated session's wake calls too).
 */
export async function wakeFromStore(
  token: string,
  from: ResumePoint,
  credential: Credential,
  settings: WakeSettings,
): Promise<Wake | undefined> {
  const { sessionStore: store, storeTimeoutMs: loadTimeoutMs } = settings;
  if (store === undefined) return undefined;
  const [key, owner] = await Promise.all([recordKey(token), sha256(credential.owner)]);
  const record = lastRecord(await loadRecord(store, key, loadTimeoutMs));
  if (!ownedBy(record?.owner, owner) || record === undefined || record.state === "closed") {
    return undefined;
  }
  const { cliSessionId, spawn, epoch } = record;
  const { after, applied, answered } = from;
  if (applied !== undefined && applied > record.applied) {
    throw new Refusal(
      "busy",
      `Cannot resume the session yet: the session store's record holds input ${record.applied}, ` +
        `and the client was acknowledged input ${applied} (the relay that ran it may still be ` +
        "writing it); try again later",
    );
  }
  const options = await wakeOptions(
    { spawn, cliSessionId, cwd: record.cwd },
    credential.policy,
    settings,
  );
  const cwd = typeof options.cwd === "string" ? options.cwd : settings.workspace;
  return {
    options,
    cliSessionId,
    spawn,
    cwd: workspaceFolder(options, settings.workspace),
    epoch,
    restore: { id: token, outSeq: after, keptAfter: after, applied: record.applied, tail: [] },
    written: (epoch) => writtenBefore(store, key, cliSessionId, epoch, loadTimeoutMs),
    ...(answered === undefined ? {} : { answered }),
    resent: {
      store,
      transcript: {
        projectKey: settings.projectKey ?? projectKeyOf(cwd),
        sessionId: cliSessionId,
      },
      loadTimeoutMs,
    },
  };
}

/** How often a takeover reads the record again while the old relay's write is in flight. */
const IN_FLIGHT_POLL_MS = 50;

/**
 * The last input the relays that ran a conversation before `epoch` wrote
 * to their CLIs. Read after the takeover raised the fence: an old relay
 * saves `writing` before it checks the fence, then writes the line (its
 * check passed) or does not (it saw the fence) and saves that, so a write
 * in flight shows, and is waited for until it settles. Past the bound (the
 * old relay stalls or died in between) it counts as written: its turn
 * gives no result, and no CLI runs it twice.
 *
 * @returns The input number, or undefined when the record is of another CLI session.
 * @throws {Refusal} `busy` when the store does not load the record within the bound.
 */
async function writtenBefore(
  store: SessionStore,
  key: SessionKey,
  cliSessionId: string,
  epoch: number,
  timeoutMs: number,
): Promise<number | undefined> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const record = lastRecord(await loadRecord(store, key, timeoutMs), epoch);
    if (record?.cliSessionId !== cliSessionId) return undefined;
    if (record.writing === undefined || performance.now() >= until) return lastWritten(record);
    await sleep(IN_FLIGHT_POLL_MS);
  }
}

/* A record's entries, loaded within the bound; a store that does not give them: busy. */
async function loadRecord(
  store: SessionStore,
  key: SessionKey,
  timeoutMs: number,
): Promise<SessionStoreEntry[] | null> {
  try {
    using limit = deadline(timeoutMs);
    return await abortable(store.load(key), limit.signal);
  } catch (error) {
    throw new Refusal(
      "busy",
      `Cannot resume the session: the session store did not load its record within ` +
        `${timeoutMs} ms (${messageOf(error)}); try again later`,
    );
  }
}

/**
 * Before a resume from the store takes its conversation over (fencing off the relay that runs
 * it): the store must hold its transcript, else the new CLI cannot start and the old one would
 * be fenced off for nothing (its first turn still running, say). And it must hold the user
 * line the client's last result answered (`answered`): a turn can reach its client while its
 * transcript's append fails (turns go on through a store outage; the old relay's mirror catches
 * the store up when it is back), and a takeover before that catch-up would fence it off, and
 * resume a history without a turn the client was given. Refused `busy`: try later (the client
 * stops after its reconnect attempts, with the refusal's words).
 */
export async function assertStored(
  resent: Resent,
  answered: string | undefined,
): Promise<SessionStoreEntry[]> {
  let entries;
  try {
    using limit = deadline(resent.loadTimeoutMs);
    entries = await abortable(resent.store.load(resent.transcript), limit.signal);
  } catch (error) {
    throw new Refusal(
      "busy",
      `Cannot resume the session: the session store did not load its transcript within ` +
        `${resent.loadTimeoutMs} ms (${messageOf(error)}); try again later`,
    );
  }
  if (entries === null || entries.length === 0) {
    throw new Refusal(
      "busy",
      "Cannot resume the session yet: the session store holds none of its transcript (its first " +
        "turn may still be running on another relay); try again later",
    );
  }
  if (answered !== undefined && !entries.some((entry) => entry.uuid === answered)) {
    throw new Refusal(
      "busy",
      `Cannot resume the session yet: the session store's transcript lacks the turn of user ` +
        `line ${answered}, whose result the client has (the relay that ran it may still be ` +
        "writing it); try again later",
    );
  }
  return entries;
}

/** The most uuids a ready's `gone.uuids` names (the client's unanswered lines are fewer). */
const MAX_TAKEN = 256;

/**
 * The user lines a stored transcript holds after `answered` (all of them without it): lines the
 * CLI before took whose results the client does not have (its own among them; the others, tool
 * results, it ignores). The latest `MAX_TAKEN`.
 */
export function takenAfter(
  entries: readonly SessionStoreEntry[],
  answered: string | undefined,
): string[] {
  const from = answered === undefined ? -1 : entries.findIndex((entry) => entry.uuid === answered);
  return entries.slice(from + 1).flatMap((entry) =>
    entry.type === "user" && typeof entry.uuid === "string" ? [entry.uuid] : []
  ).slice(-MAX_TAKEN);
}
