/**
 * Resuming, from the shared session store, a conversation another relay
 * started: the record is loaded, its owner checked (timing-safe; another
 * owner's and an unknown token look alike), its spawn request checked again
 * against the asking credential's policy, and the options of
 * `claude --resume` made (the subprocess adapter materialises the stored
 * transcript for the new process).
 *
 * @module
 */

import { messageOf } from "../../src/_values.ts";
import { abortable, deadline } from "../../src/_deadline.ts";
import type { SessionStore } from "../../src/store/session_store.ts";
import { projectKeyOf } from "../../src/store/project_key.ts";
import type { SubprocessOptions } from "../subprocess/mod.ts";
import { type Credential, ownedBy } from "./_access.ts";
import { Refusal } from "./_policy.ts";
import { lastRecord, recordKey, sha256 } from "./_relay_record.ts";
import type { Wake } from "./_relay_session_types.ts";
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
 *   acknowledged to the client, when it says.
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
  from: { readonly after: number; readonly applied: number | undefined },
  credential: Credential,
  settings: WakeSettings,
): Promise<Wake | undefined> {
  const { sessionStore: store, storeTimeoutMs: loadTimeoutMs } = settings;
  if (store === undefined) return undefined;
  const [key, owner] = await Promise.all([recordKey(token), sha256(credential.owner)]);
  let entries;
  try {
    using limit = deadline(loadTimeoutMs);
    entries = await abortable(store.load(key), limit.signal);
  } catch (error) {
    throw new Refusal(
      "busy",
      `Cannot resume the session: the session store did not load its record within ` +
        `${loadTimeoutMs} ms (${messageOf(error)}); try again later`,
    );
  }
  const record = lastRecord(entries);
  if (!ownedBy(record?.owner, owner) || record === undefined || record.state === "closed") {
    return undefined;
  }
  const { cliSessionId, spawn, epoch } = record;
  const { after, applied } = from;
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
    async applied() {
      try {
        using limit = deadline(loadTimeoutMs);
        const again = lastRecord(await abortable(store.load(key), limit.signal));
        return again?.cliSessionId === cliSessionId ? again.applied : undefined;
      } catch {
        return undefined;
      }
    },
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
