/**
 * Resuming from a session store: when the CLI's own folder lacks the
 * session, or holds less of it than the store, the stored transcript (and
 * its subagent transcripts) is written into a private configuration folder
 * for the new process, with the user's credentials and settings copied in;
 * the process runs with `CLAUDE_CONFIG_DIR` there and `--resume`.
 *
 * @module
 */

import { abortable, deadline } from "../../src/_deadline.ts";
import { messageOf } from "../../src/_values.ts";
import { DuplexError, isDuplexError } from "../../src/errors.ts";
import type { SessionKey, SessionStore, SessionStoreEntry } from "../../src/store/session_store.ts";
import { type MaterializedSession, materializeSession } from "./store/materialize_session.ts";
import { absolutePath, projectFolderName } from "./history/_paths.ts";
import { readTranscriptEntries } from "./_store_link.ts";

/** Files of the user's configuration folder the resumed CLI needs (when present). */
const COPIED = [".credentials.json", ".claude.json", "settings.json"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A private configuration folder for one resumed CLI. */
export interface ResumeFolder {
  /** Its path: the CLI's `CLAUDE_CONFIG_DIR`. */
  readonly path: string;
  /** Removes it; never rejects. */
  remove(): Promise<void>;
  /**
   * The store is behind the session's transcript at the end: moves the
   * transcript (and its subagents' folder) into the CLI's own folder, where
   * the next resume on this host looks (it catches the store up from there),
   * and removes this one. Never rejects.
   *
   * @returns Where the transcript is now (this folder's copy when it could not move).
   */
  keep(): Promise<string>;
}

/** What a store resume needs. */
export interface StoreResume {
  readonly store: SessionStore;
  readonly sessionId: string;
  readonly cwd: string;
  readonly projectKey: string | undefined;
  /** The CLI's configuration folder as it would be without the store. */
  readonly configDir: string | undefined;
  /** Each store call's bound (`materializeSession`'s default when undefined). */
  readonly loadTimeoutMs: number | undefined;
  readonly tempDir: string | undefined;
}

/**
 * Prepares a resume from the store.
 *
 * @param resume The store, session and folders.
 * @returns A private configuration folder holding the stored session, or
 *   `undefined` when the CLI's own folder already holds all of it.
 * @throws {DuplexError} `resume_failed` when the store has no such session;
 *   `timeout` after `loadTimeoutMs`; `store_failed` when the store's call failed (its own
 *   DuplexError as it is).
 */
export async function prepareStoreResume(resume: StoreResume): Promise<ResumeFolder | undefined> {
  if (!UUID.test(resume.sessionId)) return undefined; // a name: only the CLI can find it
  let cwd = absolutePath(resume.cwd);
  try {
    cwd = await Deno.realPath(cwd);
  } catch {
    // The spawn reports a missing folder.
  }
  const folderName = projectFolderName(cwd);
  const key: SessionKey = {
    projectKey: resume.projectKey ?? folderName,
    sessionId: resume.sessionId,
  };
  const folder = await privateConfig(resume, folderName);
  try {
    let written: MaterializedSession | undefined;
    try {
      written = await materializeSession(resume.store, key, {
        configDir: folder.path,
        dir: cwd,
        ...(resume.loadTimeoutMs === undefined ? {} : { loadTimeoutMs: resume.loadTimeoutMs }),
      });
    } catch (error) {
      // The id is a UUID and the folder fresh: not_found (invalid_argument before issue 24's
      // history) means the store lacks the session.
      if (!isDuplexError(error, "not_found") && !isDuplexError(error, "invalid_argument")) {
        throw error instanceof DuplexError ? error : new DuplexError(
          "store_failed",
          `Cannot resume ${resume.sessionId}: the session store failed to give its transcript ` +
            `(${messageOf(error)})`,
          { cause: error },
        );
      }
    }
    const local = resume.configDir === undefined ? [] : await readTranscriptEntries(
      `${resume.configDir}/projects/${folderName}/${resume.sessionId}.jsonl`,
    ).catch(() => []);
    if (written === undefined) {
      await folder.remove();
      if (local.length > 0) {
        await catchUp(resume, key, local, []); // the store never got it: the local file resumes
        return undefined;
      }
      throw new DuplexError(
        "resume_failed",
        `Cannot resume ${resume.sessionId}: neither the session store (project key ` +
          `${key.projectKey}) nor the CLI's folder holds it`,
      );
    }
    // Only a host that has the session itself needs the comparison (and the second read).
    const stored = local.length > 0 ? await readTranscriptEntries(written.file) : [];
    if (local.length > 0 && covers(local, stored)) {
      await folder.remove(); // the CLI's own folder holds all of it (and maybe more)
      await catchUp(resume, key, local, stored);
      return undefined;
    }
    return folder;
  } catch (error) {
    await folder.remove();
    throw error;
  }
}

/*
 * The local transcript resumes and holds more than the store (its CLI's last appends failed, or
 * it was fenced off by another relay, or killed before they landed): the store gets the rest
 * first, in the local order, so that it holds what the new CLI starts from. Bounded; a failure
 * leaves the store behind, as it was.
 */
async function catchUp(
  resume: StoreResume,
  key: SessionKey,
  local: readonly SessionStoreEntry[],
  stored: readonly SessionStoreEntry[],
): Promise<void> {
  const have = new Set(stored.map((entry) => entry.uuid).filter((uuid) => uuid !== undefined));
  const missing = local.filter((entry) => entry.uuid !== undefined && !have.has(entry.uuid));
  if (missing.length === 0) return;
  const timeoutMs = resume.loadTimeoutMs ?? 60_000;
  using limit = deadline(timeoutMs);
  await abortable(resume.store.append(key, missing), limit.signal).catch(() => {});
}

/* Whether the local transcript holds every stored entry that has a uuid. */
function covers(local: readonly SessionStoreEntry[], stored: readonly SessionStoreEntry[]) {
  const have = new Set(local.map((entry) => entry.uuid).filter((uuid) => uuid !== undefined));
  return stored.every((entry) => entry.uuid === undefined || have.has(entry.uuid));
}

/* A new private configuration folder with the user's credentials and settings copied in. */
async function privateConfig(resume: StoreResume, folderName: string): Promise<ResumeFolder> {
  const path = await Deno.makeTempDir({
    prefix: "duplex-resume-",
    ...(resume.tempDir ? { dir: resume.tempDir } : {}),
  });
  const remove = () => Deno.remove(path, { recursive: true }).catch(() => {});
  const folder: ResumeFolder = {
    path,
    remove,
    keep: async () => {
      const file = `${resume.sessionId}.jsonl`;
      const from = `${path}/projects/${folderName}`;
      if (resume.configDir === undefined) return `${from}/${file}`;
      const to = `${resume.configDir}/projects/${folderName}`;
      try {
        await Deno.mkdir(to, { recursive: true });
        await moveFile(`${from}/${file}`, `${to}/${file}`);
      } catch {
        return `${from}/${file}`; // the CLI's folder is not writable: this copy stays
      }
      // The subagents' transcripts, where a rename can move them (best effort).
      await Deno.remove(`${to}/${resume.sessionId}`, { recursive: true }).catch(() => {});
      await Deno.rename(`${from}/${resume.sessionId}`, `${to}/${resume.sessionId}`).catch(() => {});
      await remove();
      return `${to}/${file}`;
    },
  };
  try {
    await Deno.chmod(path, 0o700);
    for (const name of COPIED) {
      if (resume.configDir === undefined) break;
      try {
        await Deno.copyFile(`${resume.configDir}/${name}`, `${path}/${name}`);
        await Deno.chmod(`${path}/${name}`, 0o600);
      } catch {
        // Not there: the CLI runs without it, as it would have.
      }
    }
    return folder;
  } catch (error) {
    await folder.remove();
    throw error;
  }
}

/* Moves a file over another: a rename, or a copy across file systems. */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await Deno.rename(from, to);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw error;
    await Deno.copyFile(from, to);
    await Deno.remove(from);
  }
}
