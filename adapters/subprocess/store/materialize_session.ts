/**
 * {@linkcode materializeSession}: writes a stored session back as the CLI's
 * own files, so that `claude --resume <id>` continues it.
 *
 * @module
 */

import { abortable, checkMs, deadline } from "../../../src/_deadline.ts";
import { DuplexError } from "../../../src/errors.ts";
import { checkProjectKey } from "../../../src/store/_store_checks.ts";
import { projectKeyOf } from "../../../src/store/project_key.ts";
import type {
  SessionKey,
  SessionStore,
  SessionStoreEntry,
} from "../../../src/store/session_store.ts";
import { absolutePath, checkSessionId, explainFsError, resolvedDir } from "../history/_paths.ts";
import { jsonlText, writeWholeFile } from "../history/_transcript.ts";

/** Options of {@linkcode materializeSession}. */
export interface MaterializeSessionOptions {
  /** The CLI's configuration folder to write into (its `CLAUDE_CONFIG_DIR`); created if missing. */
  readonly configDir: string;
  /**
   * The working directory the resumed CLI will run in: the files go to its
   * project folder (`projectKeyOf` of it, resolved).
   *
   * @default {undefined} (the folder named by the key's `projectKey`, which must then be a plain folder name)
   */
  readonly dir?: string;
  /**
   * How long each store call (`load`, `listSubkeys`) may take before the
   * call fails with a `timeout` error.
   *
   * @default {60000}
   */
  readonly loadTimeoutMs?: number;
  /**
   * Replace a transcript the folder already holds (the store's copy wins).
   * Without it, an existing transcript is an error and nothing is written.
   *
   * @default {false}
   */
  readonly replace?: boolean;
  /** Stops the work; it then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** What {@linkcode materializeSession} wrote. */
export interface MaterializedSession {
  /** The project folder (`<configDir>/projects/<folder>`). */
  readonly projectDir: string;
  /** The main transcript written. */
  readonly file: string;
  /** How many entries it holds. */
  readonly entries: number;
  /** The subagent subpaths written (`<projectDir>/<sessionId>/<subpath>.jsonl`). */
  readonly subagents: readonly string[];
  /** Subpaths the store listed that could name a path outside the session's folder: not written. */
  readonly unsafeSubpaths: readonly string[];
}

const FOLDER_NAME = /^[^/\\]+$/;

function safeSubpath(subpath: unknown): subpath is string {
  return typeof subpath === "string" && subpath !== "" && !subpath.startsWith("/") &&
    !subpath.includes("\\") && !subpath.includes("\0") &&
    subpath.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/** Writes a file whole (a temporary file renamed into place), its folder created first. */
async function writeWhole(file: string, text: string, replace: boolean): Promise<void> {
  await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true, mode: 0o700 });
  await writeWholeFile(file, text, replace);
}

/**
 * Writes a stored session as the CLI's files, under
 * `<configDir>/projects/<folder>/`: the main transcript as
 * `<sessionId>.jsonl`, each subagent transcript the store lists as
 * `<sessionId>/<subpath>.jsonl` (its `agent_metadata` entries as the
 * `<subpath>.meta.json` sidecar, the last one without its `type`), as the
 * official SDK materialises a store session for a resume. Then
 * `claude --resume <sessionId>` run in `dir` with
 * `CLAUDE_CONFIG_DIR=<configDir>` (for example
 * `subprocess({ cwd: dir, resume, env: { CLAUDE_CONFIG_DIR: configDir } })`)
 * continues it. Each file is written whole (renamed into place).
 *
 * Only transcripts are written: a fresh `configDir` has no credentials or
 * settings; copy `.credentials.json` or pass the API key in the
 * environment as usual. `subprocess({ sessionStore, resume })` does all of
 * this itself in a private folder.
 *
 * @param store The store holding the session.
 * @param key Its key (`projectKey`, `sessionId`; a `subpath` is ignored).
 * @param options `configDir`, `dir`, `loadTimeoutMs`, `replace`, `signal`.
 * @returns What was written.
 * @throws {DuplexError} `timeout` when a store call outlasts
 * `loadTimeoutMs`; `not_found` when the store holds no transcript for the
 * key; `invalid_argument` when the session id is not a UUID, the transcript
 * exists (without `replace`), or the project key is no folder name and `dir`
 * is missing;
 * `not_permitted` when the folder may not be written.
 * @throws {TypeError} When an argument has the wrong type.
 *
 * @example Continue a stored session on a fresh host
 * ```ts ignore
 * import { DuplexSession } from "@duplex/claude";
 * import { subprocess } from "@duplex/claude/subprocess";
 * import { DirectorySessionStore, materializeSession } from "@duplex/claude/history";
 *
 * const store = new DirectorySessionStore("/var/lib/claude-sessions");
 * const sessionId = "5bd2c5f8-4d0e-4f6b-9d0a-1a2b3c4d5e6f";
 * const configDir = await Deno.makeTempDir();
 * await materializeSession(store, { projectKey: "tenant-1", sessionId }, { configDir, dir: Deno.cwd() });
 * await using session = await DuplexSession.start({
 *   transport: subprocess({ resume: sessionId, env: { CLAUDE_CONFIG_DIR: configDir } }),
 * });
 * ```
 */
export async function materializeSession(
  store: SessionStore,
  key: SessionKey,
  options: MaterializeSessionOptions,
): Promise<MaterializedSession> {
  const action = "materialize the session";
  if (typeof store?.load !== "function") {
    throw new TypeError(`Cannot ${action}: store must be a SessionStore (it has no load method)`);
  }
  checkProjectKey(key?.projectKey, action, "key.projectKey");
  const sessionId = checkSessionId(key.sessionId, action);
  if (typeof options?.configDir !== "string" || options.configDir === "") {
    throw new TypeError(`Cannot ${action}: configDir must be a non-empty string`);
  }
  const timeoutMs = checkMs(options.loadTimeoutMs ?? 60_000, `Cannot ${action}: loadTimeoutMs`);
  options.signal?.throwIfAborted();
  let folder: string;
  if (options.dir !== undefined) {
    if (typeof options.dir !== "string" || options.dir === "") {
      throw new TypeError(`Cannot ${action}: dir must be a non-empty string`);
    }
    folder = projectKeyOf(await resolvedDir(options.dir));
  } else if (
    FOLDER_NAME.test(key.projectKey) && key.projectKey !== "." && key.projectKey !== ".."
  ) {
    folder = key.projectKey;
  } else {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: the project key ${JSON.stringify(key.projectKey.slice(0, 80))} is not a ` +
        "folder name; pass dir (the working directory the CLI will resume in)",
    );
  }
  const call = async <T>(promise: () => Promise<T>, what: string): Promise<T> => {
    using limit = deadline(timeoutMs, {
      ...(options.signal ? { signal: options.signal } : {}),
      reason: () =>
        new DuplexError(
          "timeout",
          `Cannot ${action}: the store's ${what} for session ${sessionId} did not settle within ` +
            `${timeoutMs} ms (loadTimeoutMs)`,
        ),
    });
    return await abortable(promise(), limit.signal);
  };
  const main = { projectKey: key.projectKey, sessionId };
  const entries = await call(() => store.load(main), "load()");
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new DuplexError(
      "not_found",
      `Cannot ${action}: the store holds no transcript of session ${sessionId} under project key ` +
        JSON.stringify(key.projectKey.slice(0, 80)),
    );
  }
  const projectDir = `${absolutePath(options.configDir)}/projects/${folder}`;
  const file = `${projectDir}/${sessionId}.jsonl`;
  const listed = store.listSubkeys
    ? await call(() => store.listSubkeys!(main), "listSubkeys()")
    : [];
  const subs: [string, SessionStoreEntry[]][] = [];
  const unsafeSubpaths: string[] = [];
  for (const subpath of listed) {
    if (!safeSubpath(subpath)) {
      unsafeSubpaths.push(String(subpath));
      continue;
    }
    const sub = await call(() => store.load({ ...main, subpath }), `load() of ${subpath}`);
    if (sub && sub.length > 0) subs.push([subpath, sub]);
  }
  options.signal?.throwIfAborted();
  try {
    await writeWhole(file, jsonlText(entries), options.replace === true);
    for (const [subpath, sub] of subs) {
      const base = `${projectDir}/${sessionId}/${subpath}`;
      const meta = sub.filter((entry) => entry.type === "agent_metadata");
      const lines = sub.filter((entry) => entry.type !== "agent_metadata");
      if (lines.length > 0) await writeWhole(`${base}.jsonl`, jsonlText(lines), true);
      if (meta.length > 0) {
        const { type: _type, ...fields } = meta.at(-1) as SessionStoreEntry;
        await writeWhole(`${base}.meta.json`, JSON.stringify(fields), true);
      }
    }
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) {
      throw new DuplexError(
        "invalid_argument",
        `Cannot ${action}: ${file} already exists; pass replace: true to write the store's copy over it`,
        { cause: error },
      );
    }
    throw explainFsError(error, action, absolutePath(options.configDir), "write");
  }
  return {
    projectDir,
    file,
    entries: entries.length,
    subagents: subs.map(([s]) => s),
    unsafeSubpaths,
  };
}
