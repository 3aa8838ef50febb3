/* Where the CLI keeps transcripts: the configuration folder, the project folder
 * of a working directory, the transcript of a session id; and the errors that
 * finding them raises. */

import { DuplexError } from "../../../src/errors.ts";
import { projectKeyOf } from "../../../src/store/project_key.ts";
import type { HistoryOptions } from "./history_options.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks a session id: a string, and a UUID (which also keeps it from naming
 * a path outside the project folder).
 *
 * @throws {TypeError} When it is not a string.
 * @throws {DuplexError} `invalid_argument` when it is not a UUID.
 */
export function checkSessionId(id: unknown, action: string): string {
  if (typeof id !== "string") {
    throw new TypeError(`Cannot ${action}: the session id must be a string, got ${typeof id}`);
  }
  if (!UUID.test(id)) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: the session id must be a UUID (like 123e4567-e89b-42d3-a456-426614174000), got ${
        JSON.stringify(id.slice(0, 80))
      }`,
    );
  }
  return id.toLowerCase();
}

/** Tells whether a Deno error is a refused permission. */
export function isDenied(error: unknown): boolean {
  return error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied;
}

/**
 * Turns a refused permission into a `not_permitted` error naming the flag;
 * other errors pass through unchanged.
 */
export function explainFsError(
  error: unknown,
  action: string,
  path: string,
  access: "read" | "write",
): unknown {
  if (error instanceof Deno.errors.NotCapable) {
    return new DuplexError(
      "not_permitted",
      `Cannot ${action}: Deno may not ${access} ${path}; run again with --allow-${access}=${path}`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new DuplexError(
      "not_permitted",
      `Cannot ${action}: the system refused to ${access} ${path}; check its owner and mode`,
      { cause: error },
    );
  }
  return error;
}

function readEnv(name: string, action: string): string | undefined {
  try {
    const value = Deno.env.get(name)?.trim();
    return value ? value : undefined;
  } catch (error) {
    if (!isDenied(error)) throw error;
    throw new DuplexError(
      "not_permitted",
      `Cannot ${action}: reading ${name} needs --allow-env=${name}; run again with ` +
        `--allow-env=CLAUDE_CONFIG_DIR,HOME, or pass the configDir option`,
      { cause: error },
    );
  }
}

/**
 * The CLI's configuration folder: `configDir`, else `$CLAUDE_CONFIG_DIR`,
 * else `$HOME/.claude` (NFC-normalised, as the CLI does).
 *
 * @throws {TypeError} When `configDir` is given and is not a non-empty string.
 * @throws {DuplexError} `not_permitted` when the environment may not be read,
 * `invalid_argument` when neither variable is set.
 */
export function configRoot(options: HistoryOptions, action: string): string {
  if (options.configDir !== undefined) {
    if (typeof options.configDir !== "string" || options.configDir === "") {
      throw new TypeError(`Cannot ${action}: configDir must be a non-empty string`);
    }
    return absolutePath(options.configDir).normalize("NFC");
  }
  const custom = readEnv("CLAUDE_CONFIG_DIR", action);
  if (custom !== undefined) return absolutePath(custom).normalize("NFC");
  const home = readEnv("HOME", action);
  if (home === undefined) {
    throw new DuplexError(
      "invalid_argument",
      `Cannot ${action}: neither CLAUDE_CONFIG_DIR nor HOME is set; pass the configDir option`,
    );
  }
  return `${absolutePath(home)}/.claude`.normalize("NFC");
}

/** Makes a path absolute (against the current directory) and removes `.` and `..`. */
export function absolutePath(path: string): string {
  const full = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  const parts: string[] = [];
  for (const part of full.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/**
 * The name of the project folder the CLI uses for a working directory.
 *
 * @param path An absolute path, symbolic links resolved.
 * @returns For example `-home-me-app` for `/home/me/app`.
 */
export function projectFolderName(path: string): string {
  return projectKeyOf(path);
}

/** A directory as the CLI names it: absolute, symbolic links resolved (as given when gone). */
export async function resolvedDir(dir: string): Promise<string> {
  const absolute = absolutePath(dir);
  try {
    return await Deno.realPath(absolute);
  } catch {
    return absolute; // a folder that is gone (or may not be read) keeps its name
  }
}

/**
 * The project folders to search: the one of `options.dir`, or every folder
 * under `<configDir>/projects` (sorted by name).
 *
 * @throws {TypeError} When `dir` is given and is not a non-empty string.
 * @throws {DuplexError} `not_permitted` when `projects/` may not be read.
 */
export async function projectDirs(options: HistoryOptions, action: string): Promise<string[]> {
  const projects = `${configRoot(options, action)}/projects`;
  if (options.dir !== undefined) {
    if (typeof options.dir !== "string" || options.dir === "") {
      throw new TypeError(`Cannot ${action}: dir must be a non-empty string`);
    }
    return [`${projects}/${projectFolderName(await resolvedDir(options.dir))}`];
  }
  const found: string[] = [];
  try {
    for await (const entry of Deno.readDir(projects)) {
      if (entry.isDirectory) found.push(`${projects}/${entry.name}`);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw explainFsError(error, action, projects, "read");
  }
  return found.sort();
}

/** A session's transcript file. */
export interface TranscriptFile {
  /** The session id (lower case). */
  readonly sessionId: string;
  /** The transcript's path. */
  readonly file: string;
  /** The project folder that holds it. */
  readonly projectDir: string;
  /** Its size in bytes. */
  readonly size: number;
  /** Its modification time, in milliseconds since the epoch. */
  readonly mtime: number;
}

/**
 * Stats a transcript: a regular file (not a link) that is not empty.
 *
 * @returns Its size and time, or `undefined` when there is no such file.
 * @throws {DuplexError} `not_permitted` when it may not be read.
 */
export async function statTranscript(
  sessionId: string,
  projectDir: string,
  action: string,
): Promise<TranscriptFile | undefined> {
  const file = `${projectDir}/${sessionId}.jsonl`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw explainFsError(error, action, file, "read");
  }
  if (!info.isFile || info.size === 0) return undefined;
  return { sessionId, file, projectDir, size: info.size, mtime: info.mtime?.getTime() ?? 0 };
}

/**
 * Finds a session's transcript in the folders `options` names; the first
 * match wins.
 *
 * @returns The transcript, or `undefined` when no folder holds one.
 */
export async function findTranscript(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): Promise<TranscriptFile | undefined> {
  for (const dir of await projectDirs(options, action)) {
    options.signal?.throwIfAborted();
    const found = await statTranscript(sessionId, dir, action);
    if (found) return found;
  }
  return undefined;
}

/**
 * Like {@linkcode findTranscript}, but a missing session is an error.
 *
 * @throws {DuplexError} `not_found` naming where it looked.
 */
export async function requireTranscript(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): Promise<TranscriptFile> {
  const found = await findTranscript(sessionId, options, action);
  if (found) return found;
  throw noTranscript(sessionId, options, action);
}

/** The `not_found` error of a session no transcript has, naming where it looked. */
export function noTranscript(
  sessionId: string,
  options: HistoryOptions,
  action: string,
): DuplexError {
  const where = options.dir === undefined
    ? `any project folder of ${configRoot(options, action)}/projects`
    : `the project folder of ${options.dir}`;
  return new DuplexError(
    "not_found",
    `Cannot ${action}: no transcript of session ${sessionId} in ${where}`,
  );
}
